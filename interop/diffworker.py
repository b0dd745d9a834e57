"""pylance side of the differential fuzzer (differential_test.go).

A long-lived worker: reads one JSON request per line on stdin, answers one
JSON line on stdout. Data crosses as Arrow IPC streams, so the Go side does
every comparison with one exact comparator.

  {"op": "read", "file": F, "out": P, "ranges": [[s, n], ...], "takes": [[i, ...], ...]}
      pylance reads planar's Lance file F whole, by ranges and by takes, and
      writes each result to P.all.arrows, P.range<k>.arrows, P.take<k>.arrows.
  {"op": "write", "ipc": I, "file": F, "version": V}
      pylance writes the batches of the IPC stream I as a Lance file F of
      version V, then reads it back whole into F.self.arrows (so that what
      pylance cannot do with its own file is told apart).

Answers: {"ok": true, ...} or {"ok": false, "stage": ..., "error": "Type: msg"}.
"""
import json
import sys

import lance  # noqa: F401  (version check on import)
import pyarrow as pa
import pyarrow.ipc as ipc
from lance.file import LanceFileReader, LanceFileWriter


def write_stream(path, table):
    with pa.OSFile(path, "wb") as sink:
        with ipc.new_stream(sink, table.schema) as w:
            for b in table.to_batches():
                w.write_batch(b)


# pylance 14 cannot read a fixed-size list of structs together with other
# columns (its page lengths count elements, not rows); it reads each column
# alone. The worker then reads column by column and says so in its answer.
TOGETHER = "cannot read columns of differing lengths together"


def read_op(path, op, notes):
    """Runs op(reader) on the whole file, or column by column when pylance
    cannot read the columns together; returns a table."""
    try:
        return op(LanceFileReader(path)).to_table()
    except BaseException as e:
        if TOGETHER not in str(e):
            raise
    names = LanceFileReader(path).metadata().schema.names
    cols = [op(LanceFileReader(path, columns=[n])).to_table().column(0) for n in names]
    notes.add("pylance reads this file only column by column: " + TOGETHER)
    schema = LanceFileReader(path).metadata().schema
    return pa.Table.from_arrays(cols, schema=schema)


def err(stage, e):
    return {"ok": False, "stage": stage, "error": f"{type(e).__name__}: {e}"}


def do_read(req):
    path, notes = req["file"], set()
    try:
        LanceFileReader(path)
    except BaseException as e:
        return err("open", e)
    try:
        write_stream(req["out"] + ".all.arrows", read_op(path, lambda r: r.read_all(), notes))
    except BaseException as e:
        return err("read_all", e)
    for k, (s, n) in enumerate(req.get("ranges") or []):
        try:
            write_stream(f"{req['out']}.range{k}.arrows", read_op(path, lambda r: r.read_range(s, n), notes))
        except BaseException as e:
            return err(f"read_range({s},{n})", e)
    for k, idx in enumerate(req.get("takes") or []):
        try:
            write_stream(f"{req['out']}.take{k}.arrows", read_op(path, lambda r: r.take_rows(idx), notes))
        except BaseException as e:
            return err(f"take({idx[:8]})", e)
    return {"ok": True, "notes": sorted(notes)}


def do_write(req):
    try:
        with pa.OSFile(req["ipc"], "rb") as src:
            rd = ipc.open_stream(src)
            schema = rd.schema
            batches = list(rd)
        with LanceFileWriter(req["file"], schema, version=req["version"]) as w:
            for b in batches:
                w.write_batch(b)
    except BaseException as e:
        return err("write", e)
    notes = set()
    try:
        t = read_op(req["file"], lambda r: r.read_all(), notes)
        write_stream(req["file"] + ".self.arrows", t)
    except BaseException as e:
        return err("self_read", e)
    return {"ok": True, "notes": sorted(notes)}


def main():
    print(json.dumps({"ready": True, "pylance": lance.__version__, "pyarrow": pa.__version__}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        op = req.get("op")
        if op == "read":
            res = do_read(req)
        elif op == "write":
            res = do_write(req)
        else:
            res = {"ok": False, "stage": "request", "error": f"unknown op {op!r}"}
        print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
