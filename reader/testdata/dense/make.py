"""Writes the dense-page golden files of reader/dense_take_test.go with
pylance 14.0.2: Lance 2.2 files of one column each (dense_<name>.lance), one
per dense page kind a take reads by window.

Run from the repository root with the interop venv:

    interop/.venv/bin/python reader/testdata/dense/make.py reader/testdata/dense

Values are a function of the row number (no randomness); the Go test checks
takes against the file's own full read and the IO each take makes.
"""
import os
import sys

import pyarrow as pa
from lance.file import LanceFileWriter

ROWS = 4000


M64 = (1 << 64) - 1


def mix(x):
    """splitmix64 of x."""
    z = (x + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def text(seed, n):
    """n incompressible characters from the hash chain of seed."""
    out, h = [], seed
    for _ in range(n):
        h = mix(h)
        out.append(chr(33 + h % 94))
    return "".join(out)


def columns():
    ints = pa.array([(i * 2654435761) % (1 << 40) - (1 << 39) for i in range(ROWS)], type=pa.int64())
    nints = pa.array([None if i % 7 == 3 else i * 31 for i in range(ROWS)], type=pa.int32())
    short = pa.array(["s%d-%s" % (i, "x" * (i % 13)) for i in range(ROWS)], type=pa.string())
    lowcard = pa.array(["category-%03d" % (i % 37) for i in range(ROWS)], type=pa.string())
    lists = pa.array([[i + k for k in range(1 + i % 6)] for i in range(ROWS)], type=pa.list_(pa.int32()))
    nlists = pa.array([None if i % 11 == 5 else [i + k for k in range(1 + i % 4)] for i in range(ROWS)],
                      type=pa.list_(pa.int64()))
    big = pa.array([None if i % 4 == 1 else text(i, 260 + i % 40) for i in range(ROWS)], type=pa.string())
    vecs = pa.array([None if i % 10 == 7 else [float(i) + j / 64.0 for j in range(64)] for i in range(ROWS)],
                    type=pa.list_(pa.float32(), 64))
    return [("ints", ints), ("nints", nints), ("short", short), ("lowcard", lowcard),
            ("lists", lists), ("nlists", nlists), ("big", big), ("vecs", vecs)]


def main(out):
    os.makedirs(out, exist_ok=True)
    for name, arr in columns():
        schema = pa.schema([pa.field(name, arr.type, nullable=True)])
        with LanceFileWriter(os.path.join(out, "dense_%s.lance" % name), schema, version="2.2") as w:
            w.write_batch(pa.record_batch([arr], schema=schema))


if __name__ == "__main__":
    main(sys.argv[1])
