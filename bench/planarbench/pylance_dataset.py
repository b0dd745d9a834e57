"""pylance side of bench/planarbench's dataset suite (run with the interop
venv's python).

    pylance_dataset.py commits JOB_JSON

commits: creates a dataset of batch_rows rows at job["uri"], then times
job["commits"] appends of batch_rows rows each, one
lance.write_dataset(..., mode="append") per commit (tables built before the
clock starts). job["s3"], when set, is the server to pass as
storage_options. Prints {"lat_ms": [...], "commits": n, "max_rss_kb": k}
(or {"error": ...}) on stdout.
"""
import json
import random
import resource
import string
import sys
import time
import traceback

import lance
import pyarrow as pa


def table(first, n, rng):
    letters = string.ascii_lowercase
    text = ["".join(rng.choices(letters, k=rng.randint(20, 40))) for _ in range(n)]
    return pa.table({
        "id": pa.array(range(first, first + n), pa.int64()),
        "text": pa.array(text, pa.string()),
        "score": pa.array([rng.random() * 100 for _ in range(n)], pa.float64()),
    })


def storage_options(job):
    s3 = job.get("s3")
    if not s3:
        return None
    return {
        "aws_access_key_id": s3["AccessKey"],
        "aws_secret_access_key": s3["SecretKey"],
        "aws_endpoint": s3["Endpoint"],
        "aws_region": s3["Region"],
        "allow_http": "true",
    }


def commits(job):
    uri, n, k = job["uri"], job["batch_rows"], job["commits"]
    opts = storage_options(job)
    rng = random.Random(job.get("seed", 1))
    tables = [table(i * n, n, rng) for i in range(k + 1)]
    lance.write_dataset(tables[0], uri, mode="create", storage_options=opts)
    lat = []
    for t in tables[1:]:
        t0 = time.perf_counter()
        lance.write_dataset(t, uri, mode="append", storage_options=opts)
        lat.append((time.perf_counter() - t0) * 1e3)
    rows = lance.dataset(uri, storage_options=opts).count_rows()
    if rows != (k + 1) * n:
        raise RuntimeError(f"{rows} rows after {k} appends, want {(k + 1) * n}")
    return {"lat_ms": lat, "commits": len(lat)}


def main():
    try:
        if sys.argv[1] != "commits":
            raise ValueError(f"unknown command {sys.argv[1]!r}")
        res = commits(json.loads(sys.argv[2]))
    except BaseException as e:
        res = {"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()}
    res["max_rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    json.dump(res, sys.stdout)


if __name__ == "__main__":
    main()
