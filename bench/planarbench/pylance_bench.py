"""pylance side of bench/planarbench (run with the interop venv's python).

    pylance_bench.py version             prints pylance's version
    pylance_bench.py measure JOB_JSON    one write + read measurement
    pylance_bench.py verify JOB_JSON     reads planar's files with pylance
    pylance_bench.py classes JOB_JSON    one measurement of the classes suite

measure: reads the Arrow IPC file, times lance.file.LanceFileWriter writing
it (the batches as they are in the IPC file), times a LanceFileReader
read_all, and (job["io"]) counts the IO of a one-row take of a valid and of
a null row with Lance's reader: the same table written as a dataset, a
warm-up take, then ds.io_stats_incremental() around each take.

verify: for each planar file, checks that pylance reads it back equal to
the IPC data and counts the IO of the same takes with Lance's reader, by
committing the file as the one data file of a dataset.

classes: times the same write (and its user+sys CPU time, all threads),
the same read_all, and LanceFileReader.take_rows of the job's two sets of
row indices, each on a freshly opened reader (the open not timed), and
checks the rows read against the IPC data.

Prints one JSON document on stdout (the Go side parses it).
"""
import gc
import json
import os
import resource
import shutil
import sys
import time
import traceback

import lance
import pyarrow as pa
import pyarrow.ipc as ipc
from lance.file import LanceFileReader, LanceFileWriter
from lance.fragment import DataFile, FragmentMetadata


def read_ipc(path):
    with pa.memory_map(path) as src:
        return ipc.open_file(src).read_all()


def differs(got, want):
    """Returns None if the tables hold the same rows, else a description."""
    if got.num_rows != want.num_rows:
        return f"{got.num_rows} rows, want {want.num_rows}"
    if got.schema.names != want.schema.names:
        return f"columns {got.schema.names}, want {want.schema.names}"
    for name in want.schema.names:
        gf, wf = got.schema.field(name), want.schema.field(name)
        g, w = got.column(name), want.column(name)
        if gf.type != wf.type:
            # Lance stores no nullability of a list's item: both readers
            # return it nullable. Any other difference is one.
            if str(gf.type).replace(" not null", "") != str(wf.type).replace(" not null", ""):
                return f"{name}: type {gf.type}, want {wf.type}"
            w = w.cast(gf.type)
        if g.equals(w):  # chunk layouts may differ; equals compares values
            continue
        g, w = g.combine_chunks(), w.combine_chunks()
        if g.null_count != w.null_count:
            return f"{name}: {g.null_count} nulls, want {w.null_count}"
        bad = [i for i in range(len(w)) if not g[i].equals(w[i])]
        if bad:
            return f"{name}: {len(bad)} rows differ, first {bad[:5]}"
    return None


def take_io(ds, warm, valid, null):
    """IO of a one-row take of the valid and of the null row, after a
    warm-up take (None where there is no such row)."""
    ds.take([warm])
    ds.io_stats_incremental()
    out = {}
    for key, row in (("take_valid", valid), ("take_null", null)):
        if row < 0:
            continue
        ds.take([row])
        s = ds.io_stats_incremental()
        out[key] = {"requests": s.read_iops, "bytes": s.read_bytes}
    return out


def measure(job):
    res = {}
    tbl = read_ipc(job["ipc"])
    batches = tbl.to_batches()
    t0 = time.perf_counter()
    with LanceFileWriter(job["out"], tbl.schema, version=job["version"]) as w:
        for b in batches:
            w.write_batch(b)
    res["write_s"] = time.perf_counter() - t0
    res["file_bytes"] = os.path.getsize(job["out"])

    t0 = time.perf_counter()
    got = LanceFileReader(job["out"]).read_all().to_table()
    res["readall_s"] = time.perf_counter() - t0
    res["read_back"] = differs(got, tbl) or "ok"
    del got

    if job.get("io"):
        uri = job["dataset"]
        shutil.rmtree(uri, ignore_errors=True)
        lance.write_dataset(tbl, uri, data_storage_version=job["version"])
        res.update(take_io(lance.dataset(uri), job["warm"], job["valid"], job["null"]))
        shutil.rmtree(uri, ignore_errors=True)
    res["max_rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return res


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def measure_classes(job):
    res = {}
    tbl = read_ipc(job["ipc"])
    batches = tbl.to_batches()
    with open(job["takes"]) as f:
        takes = json.load(f)
    gc.collect()
    cpu0, t0 = cpu_seconds(), time.perf_counter()
    with LanceFileWriter(job["out"], tbl.schema, version=job["version"]) as w:
        for b in batches:
            w.write_batch(b)
    res["write_s"] = time.perf_counter() - t0
    res["write_cpu_s"] = cpu_seconds() - cpu0
    res["file_bytes"] = os.path.getsize(job["out"])

    gc.collect()
    cpu0, t0 = cpu_seconds(), time.perf_counter()
    got = LanceFileReader(job["out"]).read_all().to_table()
    res["readall_s"] = time.perf_counter() - t0
    res["readall_cpu_s"] = cpu_seconds() - cpu0
    res["read_back"] = differs(got, tbl) or "ok"
    del got

    res["take_back"] = "ok"
    for key in ("take100", "take10k"):
        rows = takes[key]
        rd = LanceFileReader(job["out"])
        gc.collect()
        cpu0, t0 = cpu_seconds(), time.perf_counter()
        got = rd.take_rows(rows).to_table()
        res[key + "_s"] = time.perf_counter() - t0
        res[key + "_cpu_s"] = cpu_seconds() - cpu0
        d = differs(got, tbl.take(rows))
        if d and res["take_back"] == "ok":
            res["take_back"] = f"take of {len(rows)} rows: {d}"
        del got, rd
    res["max_rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return res


def dataset_of(path, tbl, uri, version):
    """Commits the Lance file at path as the one data file of a new dataset
    at uri. The field ids and column indices come from a one-row dataset of
    the same schema written by pylance."""
    shutil.rmtree(uri, ignore_errors=True)
    ds = lance.write_dataset(tbl.slice(0, 1), uri, data_storage_version=version)
    proto = ds.get_fragments()[0].metadata.files[0]
    name = "planar-" + os.path.basename(path)
    shutil.copyfile(path, os.path.join(uri, "data", name))
    md = LanceFileReader(path).metadata()
    df = DataFile(name, proto.fields, proto.column_indices,
                  md.major_version, md.minor_version, os.path.getsize(path))
    frag = FragmentMetadata(id=0, files=[df], physical_rows=tbl.num_rows)
    op = lance.LanceOperation.Overwrite(ds.schema, [frag])
    return lance.LanceDataset.commit(uri, op, read_version=ds.version)


def verify(job):
    tbl = read_ipc(job["ipc"])
    out = []
    for path in job["files"]:
        res = {"file": path}
        try:
            got = LanceFileReader(path).read_all().to_table()
            res["read_back"] = differs(got, tbl) or "ok"
        except BaseException as e:  # pylance panics raise PanicException
            res["read_back"] = f"pylance cannot read it: {type(e).__name__}: {e}"
        if job.get("io"):
            try:
                ds = dataset_of(path, tbl, job["dataset"], job["version"])
                res.update(take_io(ds, job["warm"], job["valid"], job["null"]))
            except BaseException as e:
                res["io_note"] = f"{type(e).__name__}: {e}"
            shutil.rmtree(job["dataset"], ignore_errors=True)
        out.append(res)
    return out


def main():
    cmd = sys.argv[1]
    if cmd == "version":
        print(json.dumps({"pylance": lance.__version__, "pyarrow": pa.__version__}))
        return
    job = json.loads(sys.argv[2])
    try:
        run = {"measure": measure, "verify": verify, "classes": measure_classes}[cmd]
        res = run(job)
    except BaseException as e:
        res = {"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()}
    json.dump(res, sys.stdout)


if __name__ == "__main__":
    main()
