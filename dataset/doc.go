// Package dataset reads and writes Lance datasets (the directory form a
// LanceDB table or pylance's lance.dataset opens) on local disk or on
// S3-compatible object storage (s3://bucket/prefix).
//
// To use it: Create(ctx, uri, schema) or Append(ctx, uri) return a Writer
// (Write batches, Commit; a bad batch is refused whole and the writer goes
// on; Report says what was chosen); Open and OpenVersion return a Dataset
// (NewRecordReader with a column projection, Scan, ReadAll, Take,
// CountRows, Versions); AddColumns and AddColumnsByKey backfill new columns;
// PlanBackfill, BackfillTask and CommitBackfill are the same backfill cut
// into pieces for workers on other machines. Options: WithStorageVersion
// (2.2, the default; 2.3), WithMaxRowsPerFile, WithWriterOptions (the file
// writer's), WithStorageOptions (S3 endpoint and credentials).
//
// The package sits on top of writer/ and reader/: writer/ encodes each data file, reader/ decodes
// them, and this package owns what lies between files: the schema with its
// field ids, fragments, deletion files, manifests (one per version, under
// _versions/ with Lance's V2 naming, or V1 where the table uses it),
// transaction files (_transactions/) and the commit protocol.
//
// A commit writes its data files, then its transaction file, then the
// manifest of the new version with put-if-not-exists (locally a temporary
// file hard linked to the final name; on S3 a PUT with If-None-Match: *), so
// an existing manifest is never overwritten.
// When another writer committed that version first, the commit re-reads the
// latest version and retries if Lance's conflict rules allow it (an Append
// over anything but an Overwrite or a Restore); otherwise it fails with
// ErrConflict. A crash at any point
// leaves the last committed version intact: only unreferenced data files and
// temporary files are left behind.
//
// Distributed writes follow Lance's pattern: workers call WriteFragments,
// which writes data files and returns their FragmentMetadata without
// committing; the metadata marshals to the JSON of pylance's
// FragmentMetadata.to_json, so it can travel between processes and between
// Go and pylance. One process then commits every worker's fragments in one
// version with CommitAppend (rebased over concurrent appends like any other
// append) or CommitOverwrite (LanceOperation.Overwrite: creates the dataset
// or replaces its data and schema). Fragments written by pylance's
// lance.fragment.write_fragments commit the same way, and pylance's
// LanceDataset.commit accepts the fragments WriteFragments writes.
//
// A backfill can also run on many workers: PlanBackfill returns one task
// per fragment (JSON-serializable, self-contained, about 230 bytes),
// BackfillTask.Read reads that fragment's live rows at the plan's version,
// BackfillTask.Write writes its new data file on any machine, and
// CommitBackfill commits every task's result (JSON, about 190 bytes) as one
// Merge, refusing a partial set; a retried CommitBackfill returns the
// version it already made. A worker pool in one process:
//
//	plan, _ := dataset.PlanBackfill(ctx, uri, newColumns)
//	results := make([]dataset.BackfillResult, len(plan.Tasks))
//	var wg sync.WaitGroup
//	for i, t := range plan.Tasks {
//		wg.Go(func() {
//			in, _ := t.Read(ctx, 0, []string{"text"})
//			defer in.Release()
//			results[i], _ = t.Write(ctx, embed(in)) // embed: a reader of the new columns
//		})
//	}
//	wg.Wait()
//	ds, _ := dataset.CommitBackfill(ctx, plan, results)
//
// A Kubernetes indexed job does the same with one task a pod: the planner
// writes the plan's JSON where the pods read it (a ConfigMap, the object
// store); pod $JOB_COMPLETION_INDEX unmarshals plan.Tasks[index], runs the
// two middle lines and stores its result's JSON under its index; once the
// job completes, one process reads the results and calls CommitBackfill.
// The module github.com/planarlance/planar/beam runs the same pieces on
// Apache Beam.
//
// A keyed backfill attaches values given for some keys ("vectors for these
// ids"): AddColumnsByKey in one process; BackfillTask.WriteAt on workers,
// which write only the given rows at their live offsets (found with Read of
// the key column) and nulls elsewhere, in time proportional to the given
// rows. Keys given twice or found in no row are typed errors before the
// commit.
//
// AddColumns backfills new columns as pylance's add_columns does: each
// fragment gets one more data file holding only the new fields, the old
// files stay as they are, and the version is committed as Lance's Merge.
// Reads join a fragment's data files column-wise, so fragments written by
// either planar or pylance's add_columns read back whole. NewRecordReader
// streams a version's rows as an arrow-go array.RecordReader with a column
// projection, one fragment's files open at a time; Scan and ReadAll are
// built on it.
//
// Tables that pylance and LanceDB have changed read as Lance reads them.
// Columns are found by field id, through each data file's fields and
// column_indices, never by the names stored in the files: a rename, a name
// swap, a dropped column, a cast (new files under new ids) read exactly as
// pylance shows them, and a column that a fragment's files do not hold (a
// schema-only column, rows added without it) reads as nulls. Deletion files
// in both of Lance's forms (an Arrow file of offsets, a roaring bitmap) are
// applied: scans leave deleted rows out, CountRows excludes them, and Take
// offsets are logical (the n-th live row in scan order, as pylance's take
// counts). New field ids come after every id the schema or any data file
// holds. A commit keeps the table's manifest naming scheme (V1 or V2). What
// cannot be read (storage 2.0 data files, data files in other base paths,
// a column split over files) is refused with ErrUnsupported naming the
// feature, when the read is set up, before any row is returned; tables
// with Lance's legacy (v1) data files are refused by Open.
//
// Storage goes through a small object-store layer (list, get, ranged get,
// put, put-if-not-exists, delete, and a streaming create). Data files are
// streamed as they are written: locally to a temporary file renamed into
// place when finished, on S3 as a multipart upload (up to four parts in
// flight while the next fills; a file smaller than a part is one PUT). At a
// file cut the writer goes on to the next file while the store takes the
// last bytes of the one cut, one such file at a time (its parts in flight,
// up to five of 8 MiB, are held meanwhile), and Commit waits for them all
// before it writes the manifest. Data files are read through
// ranged GETs. The endpoint,
// region and credentials come from the AWS environment variables
// (AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_ALLOW_HTTP), overridden by
// WithStorageOptions with the keys pylance's storage_options take; a custom
// endpoint is addressed path-style. Requests answered 503 or 409 are retried
// with backoff and jitter.
//
// Data files follow the dataset's storage version, 2.2 (the default, as in
// pylance) or 2.3 (planar's 2.3 page layout, which Lance 14 reads).
package dataset
