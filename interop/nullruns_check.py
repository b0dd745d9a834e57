"""Reads planar's 2.2 null-run pages with both real Lances (nullruns_test.go).

usage: nullruns_check.py ARROW FILE DATASET_DIR TABLE
  ARROW        the Arrow IPC file planar wrote from
  FILE         planar's lone 2.2 file: read with pylance 14's file reader
  DATASET_DIR  a directory holding TABLE.lance, planar's 2.2 dataset of the
               same rows: read with pylance 14 and with LanceDB 0.40 (its
               own Lance 13), and a vector search on "emb" for a valid row
               must find that row first
Prints one JSON line; exits non-zero on a mismatch.
"""
import json
import sys

import lance
import lancedb
import pyarrow as pa
from lance.file import LanceFileReader


def main():
    arrow, path, db_dir, name = sys.argv[1:5]
    with pa.OSFile(arrow, "rb") as f:
        want = pa.ipc.open_file(f).read_all().combine_chunks()
    out = {"lance": lance.__version__, "lancedb": lancedb.__version__}
    got = LanceFileReader(path).read_all().to_table().combine_chunks()
    if not got.equals(want):
        sys.exit("pylance file read differs from the data written")
    ds = lance.dataset(f"{db_dir}/{name}.lance")
    if not ds.to_table().combine_chunks().equals(want):
        sys.exit("pylance dataset read differs")
    tbl = lancedb.connect(db_dir).open_table(name)
    got = tbl.to_arrow().combine_chunks()
    if not got.equals(want):
        sys.exit("LanceDB (Lance 13) read differs")
    emb = want.column("emb")
    valid = [i for i in range(len(emb)) if emb[i].is_valid]
    out["valid"] = len(valid)
    if valid:
        i = valid[len(valid) // 2]
        q = emb[i].values.to_numpy(zero_copy_only=False)
        hit = tbl.search(q, vector_column_name="emb").limit(1).to_arrow()
        if hit.num_rows != 1 or hit.column("id")[0].as_py() != want.column("id")[i].as_py():
            sys.exit(f"LanceDB vector search for row {i} found {hit.column('id').to_pylist()}")
        out["search"] = "ok"
    print(json.dumps(out))


main()
