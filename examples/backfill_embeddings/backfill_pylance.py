"""pylance's side of the dataset form of examples/backfill_embeddings.

usage:
  backfill_pylance.py create URI ROWS ROWS_PER_FILE STORAGE
      write_dataset of ROWS rows (id int64, text string), the same rows
      data.go's appendSentence makes, cut at ROWS_PER_FILE rows per file,
      data storage version STORAGE
  backfill_pylance.py check URI ROW,ROW,...
      open the latest version and report what it holds: columns, rows, data
      files per fragment, the non-null embedding rows and the listed rows
Prints one JSON line.
"""
import json
import sys
import time

import lance
import pyarrow as pa
import pyarrow.compute as pc

WORDS = ["amber", "brisk", "cedar", "delta", "ember", "fjord", "granite", "harbor",
         "indigo", "juniper", "kestrel", "lumen", "meadow", "nimbus", "orchid", "prairie"]
BATCH = 65536
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("text", pa.string())])


def sentence(i):
    h = (i * 2654435761) & 0xFFFFFFFF
    return "row %d: %s." % (i, " ".join(WORDS[(h >> (4 * k)) & 15] for k in range(5)))


def batches(rows):
    for start in range(0, rows, BATCH):
        ids = range(start, min(start + BATCH, rows))
        yield pa.record_batch([pa.array(ids, pa.int64()), pa.array([sentence(i) for i in ids], pa.string())],
                              schema=SCHEMA)


def create(uri, rows, rows_per_file, storage):
    t0 = time.perf_counter()
    reader = pa.RecordBatchReader.from_batches(SCHEMA, batches(int(rows)))
    ds = lance.write_dataset(reader, uri, mode="create", max_rows_per_file=int(rows_per_file),
                             data_storage_version=storage)
    print(json.dumps({"version": ds.version, "seconds": time.perf_counter() - t0}))


def check(uri, rows):
    ds = lance.dataset(uri)
    nonnull, positions, at = 0, [], 0
    for b in ds.scanner(columns=["embedding"], batch_size=BATCH).to_batches():
        col = b.column(0)
        valid = len(col) - col.null_count
        nonnull += valid
        if valid and len(positions) < 100000:
            positions.extend(at + int(i) for i in pc.indices_nonzero(pc.is_valid(col)).to_pylist())
        at += len(col)
    samples = []
    idx = [int(r) for r in rows.split(",") if r]
    if idx:
        t = ds.take(idx, columns=["id", "text", "embedding"])
        for r, i, s, e in zip(idx, t.column("id").to_pylist(), t.column("text").to_pylist(),
                              t.column("embedding").to_pylist()):
            samples.append({"row": r, "id": i, "text": s, "embedding": e})
    print(json.dumps({
        "lance": lance.__version__,
        "version": ds.version,
        "versions": len(ds.versions()),
        "columns": ds.schema.names,
        "embedding_type": str(ds.schema.field("embedding").type) if "embedding" in ds.schema.names else "",
        "rows": ds.count_rows(),
        "scanned": at,
        "files_per_fragment": [len(f.data_files()) for f in ds.get_fragments()],
        "nonnull": nonnull,
        "positions": positions,
        "samples": samples,
    }))


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "create":
        create(*args)
    elif cmd == "check":
        check(*args)
    else:
        sys.exit("unknown command " + cmd)
