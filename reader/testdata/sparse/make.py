"""Writes the sparse-page golden files of reader/sparse_window_test.go with
pylance (Lance 2.3 files, one column each).

Run from the repository root with the interop venv:

    interop/.venv/bin/python reader/testdata/sparse/make.py reader/testdata/sparse

Every value is a function of the row number through splitmix64, so the Go
test rebuilds the expected Arrow content with the same formulas
(goldenColumn in reader/sparse_golden_test.go).
"""
import os
import sys

import pyarrow as pa
from lance.file import LanceFileWriter

M64 = (1 << 64) - 1


def mix(x):
    """splitmix64 of x (the finalizer applied to x + the golden gamma)."""
    z = (x + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


ALPHA = "abcdefghijklmnopqrstuvwxyz0123456789"


def text(seed, n):
    """n characters drawn from ALPHA by the hash chain of seed."""
    out = []
    h = seed
    for _ in range(n):
        h = mix(h)
        out.append(ALPHA[h % len(ALPHA)])
    return "".join(out)


def fsl():
    rows, dim = 20000, 768
    vals = []
    for i in range(rows):
        if mix(i) % 100 != 0:
            vals.append(None)
            continue
        base = float(i % 4096)
        vals.append([base + j / 1024.0 for j in range(dim)])
    return pa.array(vals, type=pa.list_(pa.float32(), dim))


def strings():
    rows = 20000
    vals = []
    for i in range(rows):
        h = mix(i)
        if h % 100 != 0:
            vals.append(None)
            continue
        vals.append(text(i, 350 + (h >> 8) % 100))
    return pa.array(vals, type=pa.string())


def lists():
    rows = 100000
    vals = []
    for i in range(rows):
        h = mix(i)
        r = h % 200
        if r < 2:
            n = 1 + (h >> 8) % 5
            vals.append([i + k for k in range(n)])
        elif r < 101:
            vals.append(None)
        else:
            vals.append([])
    return pa.array(vals, type=pa.list_(pa.int32()))


def lowcard():
    rows = 20000
    pool = [text(1_000_000 + v, 1024) for v in range(100)]
    vals = []
    for i in range(rows):
        h = mix(i)
        vals.append(pool[(h >> 8) % 100] if h % 10 == 0 else None)
    return pa.array(vals, type=pa.string())


def struct_strings():
    """struct<s: string, x: int64>: half the rows null, the rest mostly
    all-null structs; 1% hold a ~300-byte string."""
    vals = []
    for i in range(20000):
        h = mix(i)
        r = h % 100
        if r == 0:
            vals.append({"s": text(i, 300 + (h >> 8) % 50), "x": i})
        elif r == 1:
            vals.append({"s": None, "x": i})
        elif r < 50:
            vals.append(None)
        else:
            vals.append({"s": None, "x": None})
    return pa.array(vals, type=pa.struct([("s", pa.string()), ("x", pa.int64())]))


def list_vectors():
    """list<fixed_size_list<float32, 64>>: 99.5% of rows null or empty, the
    rest 1-3 vectors, some of them null."""
    vals = []
    for i in range(100000):
        h = mix(i)
        r = h % 200
        if r < 1:
            n = 1 + (h >> 8) % 3
            vals.append([[float(i + k) + j for j in range(64)] if (h >> (k + 3)) % 4 else None for k in range(n)])
        elif r < 101:
            vals.append(None)
        else:
            vals.append([])
    return pa.array(vals, type=pa.list_(pa.list_(pa.float32(), 64)))


def write(path, name, arr):
    schema = pa.schema([pa.field(name, arr.type, nullable=True)])
    with LanceFileWriter(path, schema, version="2.3") as w:
        w.write_batch(pa.record_batch([arr], schema=schema))


def main(out):
    os.makedirs(out, exist_ok=True)
    write(os.path.join(out, "fsl768_null99.lance"), "v", fsl())
    write(os.path.join(out, "str400_null99.lance"), "s", strings())
    write(os.path.join(out, "list_int32_100k.lance"), "l", lists())
    write(os.path.join(out, "lowcard1k_null90.lance"), "c", lowcard())
    write(os.path.join(out, "struct_str_null99.lance"), "t", struct_strings())
    write(os.path.join(out, "list_fsl64_100k.lance"), "l", list_vectors())


if __name__ == "__main__":
    main(sys.argv[1])
