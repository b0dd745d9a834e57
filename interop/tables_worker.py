"""pylance's and LanceDB's side of the table interop tests (tables_test.go,
tables_differential_test.go).

A long-lived worker, like diffworker.py: it reads one JSON request per line
on stdin and answers one JSON line on stdout. Data crosses as Arrow IPC
files, so the Go side does every comparison with one exact comparator.

Every request names a dataset directory "uri". LanceDB opens a table by
connecting to the directory above it and opening the table by name, so uri
must end in "<name>.lance". "client" picks who makes an edit: "lance"
(pylance, the default) or "lancedb".

Edits (answer {"ok": true, "version": V, ...}):
  {"op": "create", "uri", "ipc", "storage": "2.2", "stable_row_ids": false,
   "v2_paths": true, "max_rows_per_file": N}             pylance write_dataset
  {"op": "append", "uri", "ipc", "client"}                write_dataset(mode=
      "append") / LanceDB table.add; the IPC's schema may lack nullable
      columns of the table (both clients accept that; the new fragment's data
      file then holds fewer fields)
  {"op": "delete", "uri", "where", "client"}
  {"op": "update", "uri", "values": {col: sql}, "where", "client"}
  {"op": "merge_insert", "uri", "ipc", "client"}          on "id":
      when_matched_update_all + when_not_matched_insert_all
  {"op": "add_columns", "uri", "exprs": {name: sql}, "client"}
  {"op": "add_columns", "uri", "field": {"name", "type"}, "client"}
      a schema-only column (no data files; reads as null)
  {"op": "drop_columns", "uri", "columns": [...], "client"}
  {"op": "alter_columns", "uri", "alterations": [{"path", "name"?,
   "nullable"?, "data_type"?}], "client"}                 data_type is a name
      from TYPES; all alterations in one call
  {"op": "set_not_null", "uri", "column", "client"}       nullable=False when
      the column holds no null, else nothing ("changed": false)
  {"op": "compact", "uri", "target_rows"}                 optimize.compact_files
  {"op": "optimize", "uri"}                               LanceDB optimize()
      with cleanup_older_than=0 (compaction, index update, cleanup)
  {"op": "cleanup", "uri"}                  cleanup_old_versions(older_than=0)
  {"op": "restore", "uri", "version"}       checkout_version(v).restore()
  {"op": "index", "uri", "column"}          create_scalar_index BTREE
  {"op": "config", "uri", "set": {k: v}}    update_config

Reads:
  {"op": "view", "uri", "version"?, "out", "takes": [[i, ...]],
   "take_fracs": [[f, ...]], "rowids": bool, "validate": bool,
   "ldb": bool, "counts": {name: where}}
      pylance's view of the latest (or the given) version: to_table() to
      OUT.all.arrow, take(offsets) to OUT.take<k>.arrow (take_fracs give
      offsets as floor(f * count_rows), returned in "take_offsets"),
      count_rows(), the schema, versions(), the data storage version,
      config() and list_indices(); with rowids the (id, _rowid) pairs of
      to_table(with_row_id=True) and whether _rowid is unique; with validate
      validate()'s error or null; with ldb LanceDB's to_arrow() of the same
      table compared with pylance's to_table(); counts: count_rows(filter=)
      for each named filter.

Answers: {"ok": true, ...} or {"ok": false, "stage": ..., "error": "Type: msg"}.
"""
import json
import math
import os
import sys
import traceback
import warnings
from datetime import timedelta

import lance
import lancedb
import pyarrow as pa
import pyarrow.ipc as ipc

warnings.simplefilter("ignore")

TYPES = {
    "int32": pa.int32(),
    "int64": pa.int64(),
    "float32": pa.float32(),
    "float64": pa.float64(),
    "string": pa.string(),
    "large_string": pa.large_string(),
}

_dbs = {}


def ldb_table(uri):
    """The LanceDB table of the dataset at uri (.../<name>.lance)."""
    uri = uri.rstrip("/")
    parent, base = os.path.split(uri)
    if not base.endswith(".lance"):
        raise ValueError(f"{uri}: a LanceDB table's directory ends in .lance")
    db = _dbs.get(parent)
    if db is None:
        db = _dbs[parent] = lancedb.connect(parent)
    return db.open_table(base[: -len(".lance")])


def load(path):
    with pa.OSFile(path, "rb") as f:
        return ipc.open_file(f).read_all()


def save(path, table):
    table = table.combine_chunks()
    with pa.OSFile(path, "wb") as sink:
        with ipc.new_file(sink, table.schema) as w:
            for b in table.to_batches():
                w.write_batch(b)
            if table.num_rows == 0:
                w.write_batch(pa.RecordBatch.from_pylist([], schema=table.schema))


def client(req):
    c = req.get("client", "lance")
    if c not in ("lance", "lancedb"):
        raise ValueError(f"unknown client {c!r}")
    return c


def latest(uri):
    return lance.dataset(uri).version


def op_create(req):
    ds = lance.write_dataset(
        load(req["ipc"]), req["uri"],
        data_storage_version=req.get("storage", "2.2"),
        enable_stable_row_ids=req.get("stable_row_ids", False),
        enable_v2_manifest_paths=req.get("v2_paths", True),
        max_rows_per_file=req.get("max_rows_per_file", 1 << 20),
    )
    return {"version": ds.version, "storage": ds.data_storage_version}


def op_append(req):
    data = load(req["ipc"])
    if client(req) == "lancedb":
        ldb_table(req["uri"]).add(data)
    else:
        kw = {}
        if req.get("max_rows_per_file"):
            kw["max_rows_per_file"] = req["max_rows_per_file"]
        lance.write_dataset(data, req["uri"], mode="append", **kw)
    return {"version": latest(req["uri"])}


def op_delete(req):
    if client(req) == "lancedb":
        ldb_table(req["uri"]).delete(req["where"])
    else:
        lance.dataset(req["uri"]).delete(req["where"])
    return {"version": latest(req["uri"])}


def op_update(req):
    if client(req) == "lancedb":
        r = ldb_table(req["uri"]).update(where=req.get("where"), values_sql=req["values"])
        n = r.rows_updated
    else:
        r = lance.dataset(req["uri"]).update(req["values"], where=req.get("where"))
        n = r["num_rows_updated"]
    return {"version": latest(req["uri"]), "rows": n}


def op_merge_insert(req):
    data = load(req["ipc"])
    if client(req) == "lancedb":
        # LanceDB's merge_insert takes a null vector for a "variable length
        # vector" and fails unless told to keep it null (table.add accepts
        # null vectors as they are).
        ldb_table(req["uri"]).merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(
            data, on_bad_vectors="null")
    else:
        lance.dataset(req["uri"]).merge_insert("id").when_matched_update_all().when_not_matched_insert_all().execute(data)
    return {"version": latest(req["uri"])}


def op_add_columns(req):
    if "field" in req:
        arg = pa.field(req["field"]["name"], TYPES[req["field"]["type"]])
    else:
        arg = req["exprs"]
    if client(req) == "lancedb":
        ldb_table(req["uri"]).add_columns(arg)
    else:
        lance.dataset(req["uri"]).add_columns(arg)
    return {"version": latest(req["uri"])}


def op_drop_columns(req):
    if client(req) == "lancedb":
        ldb_table(req["uri"]).drop_columns(req["columns"])
    else:
        lance.dataset(req["uri"]).drop_columns(req["columns"])
    return {"version": latest(req["uri"])}


def alterations(req):
    out = []
    for a in req["alterations"]:
        a = dict(a)
        if "data_type" in a:
            a["data_type"] = TYPES[a["data_type"]]
        out.append(a)
    return out


def op_alter_columns(req):
    alts = alterations(req)
    if client(req) == "lancedb":
        ldb_table(req["uri"]).alter_columns(*alts)
    else:
        lance.dataset(req["uri"]).alter_columns(*alts)
    return {"version": latest(req["uri"])}


def op_set_not_null(req):
    col = req["column"]
    ds = lance.dataset(req["uri"])
    if ds.count_rows(filter=f"{col} IS NULL") > 0:
        return {"version": ds.version, "changed": False}
    alt = {"path": col, "nullable": False}
    if client(req) == "lancedb":
        ldb_table(req["uri"]).alter_columns(alt)
    else:
        ds.alter_columns(alt)
    return {"version": latest(req["uri"]), "changed": True}


def op_compact(req):
    m = lance.dataset(req["uri"]).optimize.compact_files(target_rows_per_fragment=req.get("target_rows", 1 << 20))
    return {"version": latest(req["uri"]), "fragments_removed": m.fragments_removed, "fragments_added": m.fragments_added}


def op_optimize(req):
    ldb_table(req["uri"]).optimize(cleanup_older_than=timedelta(0))
    return {"version": latest(req["uri"])}


def op_cleanup(req):
    s = lance.dataset(req["uri"]).cleanup_old_versions(older_than=timedelta(0))
    return {"version": latest(req["uri"]), "old_versions": s.old_versions}


def op_restore(req):
    lance.dataset(req["uri"]).checkout_version(int(req["version"])).restore()
    return {"version": latest(req["uri"])}


def op_index(req):
    lance.dataset(req["uri"]).create_scalar_index(req["column"], "BTREE")
    return {"version": latest(req["uri"])}


def op_config(req):
    lance.dataset(req["uri"]).update_config(req["set"])
    return {"version": latest(req["uri"])}


def field_json(f):
    return {"name": f.name, "type": str(f.type), "nullable": f.nullable}


def op_view(req):
    uri, out = req["uri"], req["out"]
    stage = "open"
    try:
        ds = lance.dataset(uri, version=req.get("version"))
        stage = "to_table"
        tbl = ds.to_table()
        save(out + ".all.arrow", tbl)
        stage = "count_rows"
        n = ds.count_rows()
        res = {
            "version": ds.version,
            "count": n,
            "rows": tbl.num_rows,
            "storage": ds.data_storage_version,
            "schema": [field_json(f) for f in ds.schema],
            "versions": [v["version"] for v in ds.versions()],
            "config": dict(ds.config()),
            "indices": sorted(i["name"] for i in ds.list_indices()),
        }
        takes = list(req.get("takes") or [])
        offsets = []
        for fr in req.get("take_fracs") or []:
            offsets.append([min(n - 1, int(math.floor(f * n))) for f in fr] if n > 0 else [])
        res["take_offsets"] = offsets
        for k, idx in enumerate(takes + offsets):
            stage = f"take({idx[:8]})"
            save(f"{out}.take{k}.arrow", ds.take(idx))
        if req.get("rowids"):
            stage = "with_row_id"
            t = ds.to_table(columns=["id"], with_row_id=True)
            ids = t.column("_rowid").to_pylist()
            res["rowids"] = [[a, b] for a, b in zip(t.column("id").to_pylist(), ids)]
            res["rowid_unique"] = len(set(ids)) == len(ids)
        for name, where in (req.get("counts") or {}).items():
            stage = f"count_rows({where})"
            res.setdefault("counts", {})[name] = ds.count_rows(filter=where)
        if req.get("validate"):
            stage = "validate"
            try:
                ds.validate()
                res["validate"] = None
            except BaseException as e:
                res["validate"] = short(e)
        if req.get("ldb"):
            stage = "lancedb to_arrow"
            try:
                lt = ldb_table(uri).to_arrow().combine_chunks()
                pt = tbl.combine_chunks()
                if lt.num_rows != pt.num_rows:
                    res["ldb"] = f"LanceDB to_arrow has {lt.num_rows} rows, pylance to_table {pt.num_rows}"
                elif lt.schema.names != pt.schema.names:
                    res["ldb"] = f"LanceDB to_arrow columns {lt.schema.names}, pylance {pt.schema.names}"
                elif not lt.equals(pt):
                    bad = [c for c in pt.schema.names if not lt.column(c).equals(pt.column(c))]
                    res["ldb"] = f"LanceDB to_arrow differs from pylance to_table in columns {bad}"
                else:
                    res["ldb"] = None
            except BaseException as e:
                res["ldb"] = short(e)
        return res
    except BaseException as e:
        return err(stage, e)


def short(e, limit=700):
    """An exception as one line; Lance's Debug dumps of fragments are cut."""
    msg = " ".join(f"{type(e).__name__}: {e}".split())
    return msg if len(msg) <= limit else msg[:limit] + " ..."


def err(stage, e):
    return {"ok": False, "stage": stage, "error": short(e, 1500)}


OPS = {
    "create": op_create,
    "append": op_append,
    "delete": op_delete,
    "update": op_update,
    "merge_insert": op_merge_insert,
    "add_columns": op_add_columns,
    "drop_columns": op_drop_columns,
    "alter_columns": op_alter_columns,
    "set_not_null": op_set_not_null,
    "compact": op_compact,
    "optimize": op_optimize,
    "cleanup": op_cleanup,
    "restore": op_restore,
    "index": op_index,
    "config": op_config,
    "view": op_view,
}


def main():
    print(json.dumps({"ready": True, "pylance": lance.__version__, "lancedb": lancedb.__version__,
                      "pyarrow": pa.__version__}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = None
        try:
            req = json.loads(line)
            fn = OPS.get(req.get("op"))
            if fn is None:
                res = {"ok": False, "stage": "request", "error": f"unknown op {req.get('op')!r}"}
            else:
                res = fn(req)
                if "ok" not in res:
                    res["ok"] = True
        except BaseException as e:
            res = err(req.get("op", "request") if isinstance(req, dict) else "request", e)
            if os.environ.get("TABLES_WORKER_TRACE"):
                res["trace"] = traceback.format_exc()
        print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
