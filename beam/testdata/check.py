"""Reads a dataset a Beam backfill committed, with pylance 14 and LanceDB 0.40.

usage: check.py DATASET_DIR TABLE VERSION EXPECT_JSON
  DATASET_DIR  the directory holding TABLE.lance
  VERSION      the version the pipeline committed: must be the latest
  EXPECT_JSON  {"rows": n, "vectors": {"id": [v, ...], ...}} with every row
               that must have a vector in column "emb"; all others are null
Checks the row count, every row's vector, pylance's validate(), LanceDB's
to_arrow() against pylance, and a LanceDB vector search that must find a
backfilled row first. Prints one JSON line; exits non-zero on a mismatch.
"""
import json
import sys

import lance
import lancedb


def main():
    db_dir, name, version, expect = sys.argv[1:5]
    with open(expect) as f:
        want = json.load(f)
    ds = lance.dataset(f"{db_dir}/{name}.lance")
    if ds.version != int(version):
        sys.exit(f"pylance sees version {ds.version}, the pipeline committed {version}")
    ds.validate()
    if ds.count_rows() != want["rows"]:
        sys.exit(f"pylance counts {ds.count_rows()} rows, want {want['rows']}")
    t = ds.to_table(columns=["id", "emb"])
    vecs = {str(k): v for k, v in want["vectors"].items()}
    seen = 0
    for i, e in zip(t.column("id").to_pylist(), t.column("emb").to_pylist()):
        w = vecs.get(str(i))
        if w is None:
            if e is not None:
                sys.exit(f"row id {i} has a vector, none was given")
            continue
        seen += 1
        if e is None or [round(x, 4) for x in e] != [round(x, 4) for x in w]:
            sys.exit(f"row id {i}: vector {e}, want {w}")
    if seen != len(vecs):
        sys.exit(f"{seen} rows with a vector, want {len(vecs)}")
    tbl = lancedb.connect(db_dir).open_table(name)
    if tbl.count_rows() != want["rows"]:
        sys.exit(f"LanceDB counts {tbl.count_rows()} rows")
    if not tbl.to_arrow().combine_chunks().equals(ds.to_table().combine_chunks()):
        sys.exit("LanceDB (Lance 13) reads other rows than pylance")
    k, v = next(iter(vecs.items()))
    hit = tbl.search(v, vector_column_name="emb").limit(1).to_arrow()
    if hit.num_rows != 1 or str(hit.column("id")[0].as_py()) != k:
        sys.exit(f"LanceDB vector search for id {k} found {hit.column('id').to_pylist()}")
    print(json.dumps({"lance": lance.__version__, "lancedb": lancedb.__version__, "rows": want["rows"], "vectors": seen}))


main()
