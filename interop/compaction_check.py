"""What compaction does to planar's 2.2 null-run pages (compaction_test.go).

usage: compaction_check.py DIR NAME   (the dataset is DIR/NAME.lance)
pylance 14's compact_files (merging the fragments) on the table, LanceDB
0.40's optimize() on a copy of it; prints one JSON line with the table
config, the data bytes before and what each wrote, and whether the rows
read back the same.
"""
import json
import os
import shutil
import sys

import lance
import lancedb


def data_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path + "/data") for f in fs)


def main():
    root, name = sys.argv[1:3]
    path = f"{root}/{name}.lance"
    shutil.copytree(path, f"{root}/copy.lance")
    ds = lance.dataset(path)
    want = ds.to_table()
    out = {"config": dict(ds.config()), "before": data_bytes(path), "fragments_before": len(ds.get_fragments())}
    ds.optimize.compact_files(target_rows_per_fragment=1 << 30)
    ds = lance.dataset(path)
    out["after_pylance_compact"] = data_bytes(path) - out["before"]
    out["fragments_after"] = len(ds.get_fragments())
    out["pylance_equal"] = ds.to_table().equals(want)
    tbl = lancedb.connect(root).open_table("copy")
    before = data_bytes(f"{root}/copy.lance")
    tbl.optimize()
    out["after_lancedb_optimize"] = data_bytes(f"{root}/copy.lance") - before
    out["lancedb_equal"] = tbl.to_arrow().sort_by("id").equals(want.sort_by("id"))
    print(json.dumps(out))


main()
