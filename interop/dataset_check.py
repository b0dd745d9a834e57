"""pylance's side of the dataset interop tests (dataset_test.go).

usage:
  dataset_check.py check  URI ARROW VERSION   open VERSION, compare with ARROW
  dataset_check.py append URI ARROW           append ARROW with pylance
  dataset_check.py create URI ARROW STORAGE   create a dataset of ARROW
  dataset_check.py stale_append URI ARROW V   commit an append read at V
  dataset_check.py append_loop URI ARROW N    append ARROW in N slices, one commit each
  dataset_check.py ids URI N                  the ids are 0..N-1, each once
  dataset_check.py commit_append URI FRAGS    commit the fragments (a JSON list of
                                              FragmentMetadata.to_json) as one Append
  dataset_check.py commit_overwrite URI FRAGS ARROW  commit them as an Overwrite with
                                              ARROW's schema (creates the dataset)
  dataset_check.py add_columns URI -          add_columns({"twice": "id * 2"})
  dataset_check.py write_fragments URI ARROW OUT MAXROWS STORAGE
                                              write_fragments, their JSON list to OUT
Prints one JSON line; exits non-zero with the reason on a mismatch.
check and append pass $PLANAR_STORAGE_OPTIONS (a JSON object), when set, as
pylance's storage_options.
"""
import json
import os
import sys

import lance
import pyarrow as pa


OPTS = json.loads(os.environ["PLANAR_STORAGE_OPTIONS"]) if os.environ.get("PLANAR_STORAGE_OPTIONS") else None


def load(path):
    with pa.OSFile(path, "rb") as f:
        return pa.ipc.open_file(f).read_all()


def same(got, want, what):
    if got.num_rows != want.num_rows:
        sys.exit(f"{what}: {got.num_rows} rows, want {want.num_rows}")
    got = got.combine_chunks()
    want = want.combine_chunks()
    if got.schema.names != want.schema.names:
        sys.exit(f"{what}: columns {got.schema.names}, want {want.schema.names}")
    for name in want.schema.names:
        g, w = got.column(name), want.column(name)
        if g.type != w.type:
            sys.exit(f"{what}: column {name} is {g.type}, want {w.type}")
        if not g.equals(w):
            sys.exit(f"{what}: column {name} differs")


def check(uri, arrow, version):
    want = load(arrow)
    ds = lance.dataset(uri, version=int(version), storage_options=OPTS)
    same(ds.to_table(), want, "to_table")
    n = want.num_rows
    if ds.count_rows() != n:
        sys.exit(f"count_rows {ds.count_rows()}, want {n}")
    idx = sorted({0, n // 2, n - 1, n // 3})
    same(ds.take(idx), want.take(idx), "take")
    filt = ds.to_table(filter="id % 3 = 1")
    mask = pa.array(want.column("id").to_numpy() % 3 == 1)
    same(filt, want.filter(mask), "filter")
    print(json.dumps({"version": ds.version, "rows": n, "storage": ds.data_storage_version,
                      "versions": [v["version"] for v in ds.versions()]}))


def main():
    cmd, uri, arrow = sys.argv[1:4]
    if cmd == "check":
        check(uri, arrow, sys.argv[4])
    elif cmd == "add_columns":
        lance.dataset(uri).add_columns({"twice": "id * 2"})
        print(json.dumps({"version": lance.dataset(uri).version}))
    elif cmd == "append":
        ds = lance.write_dataset(load(arrow), uri, mode="append", storage_options=OPTS)
        print(json.dumps({"version": ds.version}))
    elif cmd == "stale_append":
        storage = lance.dataset(uri).data_storage_version
        frag = lance.fragment.LanceFragment.create(uri, load(arrow), data_storage_version=storage)
        ds = lance.LanceDataset.commit(uri, lance.LanceOperation.Append([frag]), read_version=int(sys.argv[4]))
        print(json.dumps({"version": ds.version}))
    elif cmd == "append_loop":
        tbl, rounds = load(arrow), int(sys.argv[4])
        step = tbl.num_rows // rounds
        for r in range(rounds):
            lance.write_dataset(tbl.slice(r * step, step), uri, mode="append")
        print(json.dumps({"version": lance.dataset(uri).version}))
    elif cmd == "ids":
        ids = sorted(lance.dataset(uri).to_table(columns=["id"]).column("id").to_pylist())
        n = int(arrow)
        if ids != list(range(n)):
            sys.exit(f"ids: {len(ids)} rows, {len(set(ids))} distinct, want 0..{n - 1} once each")
        print(json.dumps({"rows": len(ids), "version": lance.dataset(uri).version}))
    elif cmd == "commit_append":
        with open(arrow) as f:
            frags = [lance.FragmentMetadata.from_json(json.dumps(d)) for d in json.load(f)]
        read = lance.dataset(uri).version
        ds = lance.LanceDataset.commit(uri, lance.LanceOperation.Append(frags), read_version=read)
        print(json.dumps({"version": ds.version, "read_version": read, "fragments": len(frags)}))
    elif cmd == "commit_overwrite":
        with open(arrow) as f:
            frags = [lance.FragmentMetadata.from_json(json.dumps(d)) for d in json.load(f)]
        schema = load(sys.argv[4]).schema
        ds = lance.LanceDataset.commit(uri, lance.LanceOperation.Overwrite(schema, frags))
        print(json.dumps({"version": ds.version, "storage": ds.data_storage_version,
                          "fragments": [f.fragment_id for f in ds.get_fragments()]}))
    elif cmd == "write_fragments":
        out, max_rows, storage = sys.argv[4], int(sys.argv[5]), sys.argv[6]
        frags = lance.fragment.write_fragments(load(arrow), uri, max_rows_per_file=max_rows,
                                               data_storage_version=storage)
        with open(out, "w") as f:
            json.dump([fr.to_json() for fr in frags], f)
        print(json.dumps({"fragments": len(frags)}))
    elif cmd == "create":
        ds = lance.write_dataset(load(arrow), uri, data_storage_version=sys.argv[4])
        print(json.dumps({"version": ds.version}))
    else:
        sys.exit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
