"""Interop checks driven by interop_test.go.

Reads a manifest written by the Go test, then
  * reads every planar-written Lance file with pylance's LanceFileReader and
    compares it with the Arrow IPC file holding the data planar was given
    (whole file, row ranges and row indices), and
  * writes the same IPC data with pylance's LanceFileWriter for each requested
    file version, for the Go side to read back.
Prints one JSON document with the results on stdout.
"""
import json
import sys
import traceback

import lance
import pyarrow as pa
import pyarrow.ipc as ipc
from lance.file import LanceFileReader, LanceFileWriter


def read_ipc(path):
    with pa.memory_map(path) as src:
        return ipc.open_file(src).read_all()


def diff_tables(got, want):
    """Returns a list of human-readable differences (empty if equal)."""
    out = []
    if got.num_rows != want.num_rows:
        out.append(f"rows {got.num_rows} != {want.num_rows}")
    if got.schema.names != want.schema.names:
        out.append(f"columns {got.schema.names} != {want.schema.names}")
        return out
    for name in want.schema.names:
        gf, wf = got.schema.field(name), want.schema.field(name)
        if gf.type != wf.type or gf.nullable != wf.nullable:
            out.append(f"{name}: field {gf} != {wf}")
            continue
        g, w = got.column(name).combine_chunks(), want.column(name).combine_chunks()
        # Dictionary arrays may come back with a different (but equivalent)
        # dictionary: compare logical values then.
        if not g.equals(w) and g.to_pylist() != w.to_pylist():
            bad = [i for i in range(min(len(g), len(w))) if not g[i].equals(w[i])][:5]
            out.append(f"{name}: values differ (first rows {bad})")
    return out


def check_file(spec, want):
    res = {"file": spec["file"], "ok": False, "diffs": [], "error": None}
    try:
        r = LanceFileReader(spec["file"])
        md = r.metadata()
        res["version"] = f"{md.major_version}.{md.minor_version}"
        diffs = diff_tables(r.read_all().to_table(), want)
        n = want.num_rows
        for start, length in [(0, min(n, 1)), (n // 3, min(n - n // 3, 1000)), (max(0, n - 7), min(n, 7))]:
            d = diff_tables(r.read_range(start, length).to_table(), want.slice(start, length))
            diffs += [f"range({start},{length}): {x}" for x in d]
        idx = sorted({0, 1, n // 2, n // 2 + 1, n - 1} & set(range(n)))
        if idx:
            d = diff_tables(r.take_rows(idx).to_table(), want.take(idx))
            diffs += [f"take({idx}): {x}" for x in d]
        res["diffs"] = diffs
        res["ok"] = not diffs
        res["encodings"] = sorted({type_name(p.encoding) for c in md.columns for p in c.pages})
    except BaseException as e:  # reported to the Go side, which decides (pylance panics raise PanicException)
        res["error"] = f"{type(e).__name__}: {e}"
    return res


def type_name(enc):
    s = str(enc)
    return s.split("(", 1)[0].split("{", 1)[0].strip()


def with_metadata(field, md):
    """Returns field with md merged into its metadata and every child's."""
    t = field.type
    if pa.types.is_struct(t):
        t = pa.struct([with_metadata(t.field(i), md) for i in range(t.num_fields)])
    elif pa.types.is_large_list(t):
        t = pa.large_list(with_metadata(t.value_field, md))
    elif pa.types.is_list(t):
        t = pa.list_(with_metadata(t.value_field, md))
    elif pa.types.is_map(t):
        t = pa.map_(with_metadata(t.key_field, md), with_metadata(t.item_field, md))
    return pa.field(field.name, t, field.nullable, {**(field.metadata or {}), **md})


def write_pylance(ipc_path, out, version, structural=None):
    res = {"file": out, "version": version, "ok": False, "error": None}
    try:
        t = read_ipc(ipc_path)
        if structural:
            md = {"lance-encoding:structural-encoding": structural}
            schema = pa.schema([with_metadata(f, md) for f in t.schema])
            t = pa.Table.from_arrays([c.cast(f.type) for c, f in zip(t.columns, schema)], schema=schema)
        with LanceFileWriter(out, t.schema, version=version) as w:
            w.write_batch(t)
        res["ok"] = True
    except BaseException as e:
        res["error"] = f"{type(e).__name__}: {e}"
    return res


def main():
    manifest = json.load(open(sys.argv[1]))
    out = {"pylance": lance.__version__, "pyarrow": pa.__version__, "reads": [], "writes": []}
    for ds in manifest["datasets"]:
        want = read_ipc(ds["arrow"])
        for spec in ds.get("planar") or []:
            out["reads"].append(check_file(spec, want))
        for w in ds.get("pylance") or []:
            out["writes"].append(write_pylance(ds["arrow"], w["file"], w["version"], w.get("structural")))
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    try:
        main()
    except Exception:
        traceback.print_exc()
        sys.exit(2)
