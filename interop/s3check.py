"""pylance against the local S3-compatible server: create, read, append,
concurrent appends. Called by s3_test.go with the AWS_* variables of the
server in the environment and the dataset URI as argv[1]; prints one JSON
object on stdout.

The storage options are built from the environment, the way a caller passes
them; a second open relies on the environment alone."""

import json
import os
import sys
import threading

import lance
import pyarrow as pa


def storage_options():
    return {
        "aws_access_key_id": os.environ["AWS_ACCESS_KEY_ID"],
        "aws_secret_access_key": os.environ["AWS_SECRET_ACCESS_KEY"],
        "aws_endpoint": os.environ["AWS_ENDPOINT_URL"],
        "aws_region": os.environ["AWS_REGION"],
        "allow_http": "true",
    }


def batch(start, n):
    ids = pa.array(range(start, start + n), pa.int64())
    text = pa.array([None if i % 7 == 0 else f"row {i}" for i in range(start, start + n)], pa.string())
    return pa.table({"id": ids, "text": text})


def main():
    uri = sys.argv[1]
    writers, appends = int(sys.argv[2]), int(sys.argv[3])
    opts = storage_options()
    out = {"pylance": lance.__version__, "steps": []}

    def step(name, **kv):
        out["steps"].append(dict(step=name, **kv))

    ds = lance.write_dataset(batch(0, 1000), uri, mode="create", storage_options=opts)
    step("create", version=ds.version, rows=ds.count_rows())

    try:
        lance.write_dataset(batch(0, 10), uri, mode="create", storage_options=opts)
        step("create again", error=None)
    except Exception as e:  # expected: the dataset exists
        step("create again", error=type(e).__name__ + ": " + str(e)[:200])

    ds = lance.dataset(uri, storage_options=opts)
    tbl = ds.to_table()
    step("read", version=ds.version, rows=tbl.num_rows, equal=tbl.equals(batch(0, 1000)))

    ds = lance.write_dataset(batch(1000, 500), uri, mode="append", storage_options=opts)
    step("append", version=ds.version, rows=ds.count_rows())

    # Concurrent appenders in threads, each committing through the
    # conditional-put commit handler; every append must land exactly once.
    errors = []

    def appender(w):
        for a in range(appends):
            start = 100000 + (w * appends + a) * 100
            try:
                lance.write_dataset(batch(start, 100), uri, mode="append", storage_options=opts)
            except Exception as e:
                errors.append(f"writer {w} append {a}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=appender, args=(w,)) for w in range(writers)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()

    # Open through the environment alone (AWS_ENDPOINT_URL, AWS_ALLOW_HTTP, ...).
    ds = lance.dataset(uri)
    ids = ds.to_table(columns=["id"]).column("id").to_pylist()
    want = list(range(1500)) + [
        100000 + k * 100 + i for k in range(writers * appends) for i in range(100)
    ]
    step(
        "concurrent appends",
        version=ds.version,
        rows=len(ids),
        exactly_once=sorted(ids) == sorted(want),
        errors=errors,
        versions=[v["version"] for v in ds.versions()],
    )
    first = lance.dataset(uri, version=1, storage_options=opts)
    step("version 1", version=first.version, rows=first.count_rows())
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
