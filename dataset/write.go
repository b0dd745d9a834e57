package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/filepb"
	"github.com/planarlance/planar/proto/tablepb"
	"github.com/planarlance/planar/proto/txnpb"
	"github.com/planarlance/planar/writer"
)

// Writer streams record batches into new data files and commits them as one
// new version of a dataset. It is made by Create or Append; it is not safe
// for concurrent use. Nothing is visible to readers before Commit.
type Writer struct {
	root     *location
	schema   *arrow.Schema
	fields   []*filepb.Field // the dataset's fields (Create only)
	metadata map[string][]byte
	leafIDs  []int32
	format   writer.Format
	version  [2]uint32
	storage  string
	base     *manifestFile // the version read; nil when creating
	replace  bool          // an Overwrite: the new version replaces the data and schema
	mixed    bool          // its files are not in the dataset's default storage version
	opts     options

	cur     *dataFile
	publish *publishing       // the last data file cut, still being published; nil when none
	reports []FileReport      // what the writer chose in each data file closed
	nulls   arrow.RecordBatch // rows of nulls (writeNulls), released with the writer
	frags   []*tablepb.DataFragment
	written []string // data files written, for Abort
	done    bool
	err     error
}

// publishing is a data file whose last bytes are still going to the store
// (on S3, the parts in flight, the last part and the completion of the
// multipart upload) while the next file is encoded. done closes when it is
// published or has failed; err is set before.
type publishing struct {
	name string
	done chan struct{}
	err  error
}

// dataFile is the data file being written, streamed to the store.
type dataFile struct {
	name string
	out  objectWriter
	n    countingWriter
	w    *writer.Writer
	rows int64
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Create starts a new dataset at uri with the given schema. The dataset
// exists (as version 1) once Commit returns; Create fails with ErrExists when
// a dataset is already there.
func Create(ctx context.Context, uri string, schema *arrow.Schema, opts ...Option) (*Writer, error) {
	if schema == nil {
		return nil, fmt.Errorf("create %s: nil schema: %w", uri, ErrInvalidOption)
	}
	o, root, err := locate(uri, opts)
	if err != nil {
		return nil, err
	}
	if _, err := latestVersion(ctx, root); err == nil {
		return nil, fmt.Errorf("create %s: %w", uri, ErrExists)
	} else if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	w, err := newCreateWriter(root, schema, o)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", uri, err)
	}
	return w, nil
}

// Append starts an append to the latest version of the dataset at uri.
// Batches are taken as pylance 14's append takes them
// (interop.TestAppendAcceptsWhatPylanceAccepts runs the same appends
// through both):
//
//   - columns by name, in any order;
//   - a nullable field where the dataset's is not (at any depth), as long
//     as it holds no null (a null there is writer.ErrInvalidBatch, the
//     batch refused whole);
//   - nullable columns left out, their rows null;
//   - no cast: int32 for int64, float32 for float64, large_string for
//     string, an unknown column, or a non-nullable column left out are
//     ErrSchemaMismatch.
func Append(ctx context.Context, uri string, opts ...Option) (*Writer, error) {
	o, err := applyOptions(opts)
	if err != nil {
		return nil, err
	}
	d, err := Open(ctx, uri, opts...)
	if err != nil {
		return nil, err
	}
	if o.storageVersion != "" && o.storageVersion != d.storage && !o.mixedVersions {
		return nil, fmt.Errorf("append to %s: data storage version %s, asked for %s (WithMixedVersions mixes them): %w", uri, d.storage, o.storageVersion, ErrVersionMismatch)
	}
	w, err := appendWriter(d, o)
	if err != nil {
		return nil, fmt.Errorf("append to %s: %w", uri, err)
	}
	return w, nil
}

// appendWriter is a Writer adding data in d's schema and storage version
// (Append, CommitAppend).
func appendWriter(d *Dataset, o options) (*Writer, error) {
	if err := checkFeatureFlags(d.mf.m); err != nil {
		return nil, err
	}
	w := &Writer{root: d.root, schema: d.schema, base: d.mf, opts: o}
	for _, c := range d.cols {
		w.leafIDs = append(w.leafIDs, c.ID)
	}
	if err := w.setDatasetStorage(d.storage, o); err != nil {
		return nil, err
	}
	return w, nil
}

// setDatasetStorage sets the storage version of the files a writer adds to
// a dataset whose default is storage: the dataset's, or with
// WithMixedVersions the one WithStorageVersion names.
func (w *Writer) setDatasetStorage(storage string, o options) error {
	v := storage
	if o.mixedVersions && o.storageVersion != "" {
		v = o.storageVersion
	}
	if err := w.setStorage(v); err != nil {
		return fmt.Errorf("data storage version %q (planar writes data files of storage 2.2 and 2.3 only): %w", v, ErrUnsupported)
	}
	w.mixed = v != storage
	return nil
}

// markMixed sets Lance's mixed data-file versions feature on m when the
// writer adds files of a version other than the dataset's default.
func (w *Writer) markMixed(m *tablepb.Manifest) {
	if w.mixed {
		m.ReaderFeatureFlags |= flagMixedVersions
		m.WriterFeatureFlags |= flagMixedVersions
	}
}

// Overwrite starts a new version of the dataset at uri that replaces its
// data and schema (earlier versions stay readable). Without a dataset there
// it creates one, like Create. The storage version is the option's, else the
// dataset's. It fails with ErrConflict if any other commit lands first.
func Overwrite(ctx context.Context, uri string, schema *arrow.Schema, opts ...Option) (*Writer, error) {
	o, err := applyOptions(opts)
	if err != nil {
		return nil, err
	}
	d, err := Open(ctx, uri, opts...)
	if errors.Is(err, ErrNotFound) {
		return Create(ctx, uri, schema, opts...)
	}
	if err != nil {
		return nil, err
	}
	if o.storageVersion != "" {
		d.storage = o.storageVersion
	}
	if schema == nil {
		return nil, fmt.Errorf("overwrite %s: nil schema: %w", uri, ErrInvalidOption)
	}
	ls, cols, err := format.SchemaToLance(schema)
	if err != nil {
		return nil, fmt.Errorf("overwrite %s: %w", uri, err)
	}
	w := &Writer{root: d.root, schema: schema, fields: ls.Fields, metadata: ls.Metadata, base: d.mf, replace: true, opts: o}
	base := int32(0)
	if hwm := d.mf.m.MaxAllocatedFieldId; hwm != nil {
		// Non-reusable field ids: the new schema is numbered after every
		// id the table ever gave out.
		base = max(*hwm, maxFieldID(d.mf.m)) + 1
	}
	w.leafIDs = shiftFieldIDs(ls.Fields, cols, base)
	if err := w.setStorage(d.storage); err != nil {
		return nil, fmt.Errorf("overwrite %s: data storage version %q: %w", uri, d.storage, ErrUnsupported)
	}
	return w, nil
}

// locate applies opts and opens the location of uri.
func locate(uri string, opts []Option) (options, *location, error) {
	o, err := applyOptions(opts)
	if err != nil {
		return o, nil, err
	}
	root, err := openLocation(uri, o)
	return o, root, err
}

func applyOptions(opts []Option) (options, error) {
	o := defaultOptions()
	for _, f := range opts {
		if f == nil {
			continue
		}
		if err := f(&o); err != nil {
			return o, err
		}
	}
	return o, nil
}

func (w *Writer) setStorage(v string) error {
	f, ver, err := fileFormat(v)
	if err != nil {
		return err
	}
	w.format, w.version, w.storage = f, ver, v
	return nil
}

// ReadVersion is the version the writer started from (0 when creating).
// Commit may land later than ReadVersion+1 when it rebased over concurrent
// appends: each retry moves the commit one version on, so the committed
// Dataset's Version() - ReadVersion() - 1 is the number of retries.
func (w *Writer) ReadVersion() uint64 {
	if w.base == nil {
		return 0
	}
	return w.base.m.Version
}

// Schema is the schema batches must have.
func (w *Writer) Schema() *arrow.Schema { return w.schema }

// Write adds a batch. Data files are cut at the configured rows and bytes
// per file; a batch may span two files. A batch that does not fit the
// schema, or that the file writer refuses (writer.ErrInvalidBatch: a null
// in a non-nullable field, bad offsets or UTF-8, ...), is refused whole
// with nothing of it written, and the writer stays usable: the commit holds
// exactly the batches Write accepted. Any other error (the store failing)
// ends the writer: later calls return it, and Abort removes its files.
func (w *Writer) Write(rec arrow.RecordBatch) error {
	if w.done {
		return ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	if err := compatible(w.schema, rec.Schema()); err != nil {
		return err
	}
	rec, err := conformBatch(w.schema, rec)
	if err != nil {
		return err
	}
	defer rec.Release()
	// A bad batch is refused whole, before any of it is written; the
	// writer stays usable. A batch that fits the current file is checked
	// by the file writer itself (a refusal of the first part writes
	// nothing); one that spans files is checked first, once.
	room := w.opts.maxRows
	if w.cur != nil {
		room -= w.cur.rows
	}
	if rec.NumRows() > room {
		if err := writer.CheckBatch(w.schema, rec); err != nil {
			return err
		}
	}
	for off := int64(0); off < rec.NumRows(); {
		if w.cur == nil {
			if err := w.openFile(); err != nil {
				return w.fail(err)
			}
		}
		n := min(rec.NumRows()-off, w.opts.maxRows-w.cur.rows)
		part := rec
		if off != 0 || n != rec.NumRows() {
			part = rec.NewSlice(off, off+n)
		}
		err := w.cur.w.WriteBatch(part)
		if part != rec {
			part.Release()
		}
		if err != nil {
			err = fmt.Errorf("data file %s: %w", w.cur.name, err)
			if off == 0 && errors.Is(err, writer.ErrInvalidBatch) {
				return err // refused whole by the file writer, which stays usable
			}
			return w.fail(err)
		}
		w.cur.rows += n
		off += n
		if w.cur.rows >= w.opts.maxRows || w.cur.n.n >= w.opts.maxBytes {
			if err := w.cutFile(); err != nil {
				return w.fail(err)
			}
		}
	}
	return w.failed()
}

// failed returns the error of a data file whose publishing has failed, without
// waiting for one still in flight: the writer stops before encoding more.
func (w *Writer) failed() error {
	if p := w.publish; p != nil {
		select {
		case <-p.done:
			if p.err != nil {
				return w.fail(w.settle())
			}
		default:
		}
	}
	return nil
}

func (w *Writer) fail(err error) error {
	w.err = err
	return err
}

func (w *Writer) openFile() error {
	name := dataFileName()
	out, err := w.root.st.Create(context.Background(), dataKey(name))
	if err != nil {
		return err
	}
	df := &dataFile{name: name, out: out}
	df.n.w = out
	w.written = append(w.written, name)
	opts := append(append([]writer.Option(nil), w.opts.writerOpts...), writer.WithFormat(w.format))
	df.w, err = writer.New(&df.n, w.schema, opts...)
	if err != nil {
		out.Abort()
		return err
	}
	w.cur = df
	return nil
}

// closeFile finishes the current data file and records its fragment once
// the store holds it (and every file cut before it).
func (w *Writer) closeFile() error {
	if err := w.cutFile(); err != nil {
		return err
	}
	return w.settle()
}

// cutFile finishes encoding the current data file and records its fragment,
// leaving the store to take the file's last bytes in the background while
// the caller goes on to the next file: a multipart upload's last parts no
// longer stall the encoder at every cut. At most one file is being
// published: a cut first waits for the one before. Whoever reads the
// fragments (Commit, finishFragments, a backfill) calls settle first.
func (w *Writer) cutFile() error {
	df := w.cur
	w.cur = nil
	err := df.w.Close()
	w.releaseNulls()
	if err != nil {
		df.out.Abort()
		return fmt.Errorf("data file %s: %w", df.name, err)
	}
	w.reports = append(w.reports, FileReport{Path: df.name, Rows: df.rows, Pages: df.w.Report()})
	if err := w.settle(); err != nil {
		df.out.Abort()
		return err
	}
	// The goroutine holds the object writer alone: the file writer's
	// buffers are garbage from here on.
	p, out := &publishing{name: df.name, done: make(chan struct{})}, df.out
	go func() {
		defer close(p.done)
		p.err = out.Close()
	}()
	w.publish = p
	cols := make([]int32, len(w.leafIDs))
	for i := range cols {
		cols[i] = int32(i)
	}
	w.frags = append(w.frags, &tablepb.DataFragment{
		Files: []*tablepb.DataFile{{
			Path:             df.name,
			Fields:           append([]int32(nil), w.leafIDs...),
			ColumnIndices:    cols,
			FileMajorVersion: w.version[0],
			FileMinorVersion: w.version[1],
			FileSizeBytes:    uint64(df.n.n),
		}},
		PhysicalRows: uint64(df.rows),
	})
	return nil
}

// settle waits until the file being published, if any, is in the store.
func (w *Writer) settle() error {
	p := w.publish
	if p == nil {
		return nil
	}
	w.publish = nil
	<-p.done
	if p.err != nil {
		return fmt.Errorf("data file %s: %w", p.name, p.err)
	}
	return nil
}

// FileReport is what the file writer chose in one data file: its pages'
// cells, encodings and reasons (writer.PageReport).
type FileReport struct {
	Path  string // under the dataset's data/ folder
	Rows  int64
	Pages []writer.PageReport
}

// Report returns, per data file written so far (closed: a file still being
// filled is reported once Commit closes it), what the writer chose for
// each page and why.
func (w *Writer) Report() []FileReport { return w.reports }

func (w *Writer) releaseNulls() {
	if w.nulls != nil {
		w.nulls.Release()
		w.nulls = nil
	}
}

// Commit finishes the data files and commits them as the next version; it
// returns the dataset at that version. An Append retries over appends
// committed concurrently (see WithMaxCommitRetries). When Commit fails,
// nothing is committed; Commit may be called again, or Abort removes the
// data files.
func (w *Writer) Commit(ctx context.Context) (*Dataset, error) {
	if w.done {
		return nil, ErrClosed
	}
	if w.err != nil {
		return nil, w.err
	}
	if w.cur != nil {
		if err := w.cutFile(); err != nil {
			return nil, w.fail(err)
		}
	}
	if err := w.settle(); err != nil {
		return nil, w.fail(err)
	}
	w.root.syncData()
	u := newUUID()
	txn := &txnpb.Transaction{Uuid: uuidString(u)}
	spec := commitSpec{root: w.root, txn: txn, maxRetries: w.opts.maxRetries, keepIndex: !w.replace}
	if w.base != nil {
		txn.ReadVersion = w.base.m.Version
	}
	if w.base == nil || w.replace {
		txn.Operation = &txnpb.Transaction_Overwrite_{Overwrite: &txnpb.Transaction_Overwrite{
			Fragments: w.frags, Schema: w.fields, SchemaMetadata: w.metadata, ConfigUpsertValues: w.opts.config,
		}}
		spec.build = w.buildOverwrite
	} else {
		txn.Operation = &txnpb.Transaction_Append_{Append: &txnpb.Transaction_Append{Fragments: w.frags}}
		spec.build = w.buildAppend
	}
	mf, err := commit(ctx, spec, w.base)
	if err != nil {
		return nil, err
	}
	w.done = true
	return newDataset(ctx, w.root, mf)
}

// buildOverwrite makes the manifest of a new dataset, or of a version that
// replaces prev's data and schema. Fragment ids keep growing across
// overwrites, as in Lance; the config and table metadata stay.
func (w *Writer) buildOverwrite(prev *tablepb.Manifest) (*tablepb.Manifest, error) {
	m := &tablepb.Manifest{}
	if prev != nil {
		m = proto.Clone(prev).(*tablepb.Manifest)
	}
	first := nextFragmentID(prev)
	m.Fields = w.fields
	m.SchemaMetadata = w.metadata
	m.Fragments = withFragmentIDs(w.frags, first)
	m.DataFormat = &tablepb.Manifest_DataStorageFormat{FileFormat: "lance", Version: w.storage}
	if len(w.opts.config) > 0 {
		if m.Config == nil {
			m.Config = map[string]string{}
		}
		for k, v := range w.opts.config {
			m.Config[k] = v
		}
		// Lance marks a table with config (writer flag 1<<3).
		m.WriterFeatureFlags |= flagTableConfig
	}
	if n := len(w.frags); n > 0 {
		id := uint32(first + uint64(n) - 1)
		m.MaxFragmentId = &id
	}
	if prev != nil {
		// On a table with stable row ids, the new rows get ids after
		// every id given out so far.
		if err := stampAppendedFragments(m, m.Fragments, prev.Version+1); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (w *Writer) buildAppend(prev *tablepb.Manifest) (*tablepb.Manifest, error) {
	m := proto.Clone(prev).(*tablepb.Manifest)
	first := nextFragmentID(prev)
	added := withFragmentIDs(w.frags, first)
	// On a table with stable row ids, the appended rows get the ids after
	// the manifest's next_row_id, as Lance's Append assigns them.
	if err := stampAppendedFragments(m, added, prev.Version+1); err != nil {
		return nil, err
	}
	m.Fragments = append(m.Fragments, added...)
	w.markMixed(m)
	if n := len(w.frags); n > 0 {
		id := uint32(first + uint64(n) - 1)
		m.MaxFragmentId = &id
	}
	return m, nil
}

// Abort removes the data files written so far; nothing is committed.
func (w *Writer) Abort() error {
	if w.done {
		return ErrClosed
	}
	w.done = true
	if w.cur != nil {
		_ = w.cur.w.Close()
		w.cur.out.Abort()
		w.cur = nil
	}
	_ = w.settle() // a failed publish has aborted its upload; a finished one is deleted below
	w.releaseNulls()
	var first error
	for _, name := range w.written {
		if err := w.root.st.Delete(context.Background(), dataKey(name)); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// compatible checks that batches of schema in can be stored under the
// dataset schema ds, as pylance 14's append accepts them: every field of in
// is a field of ds by name (in any order, none twice) of the same type,
// where a nullable field may stand for a non-nullable one at any depth
// (its nulls are refused row by row, by the file writer); a field of ds
// that in leaves out must be nullable (its rows are null). No type is cast:
// pylance refuses int32 for int64, float32 for float64, large_string for
// string, and so does planar.
func compatible(ds, in *arrow.Schema) error {
	if ds == in {
		return nil
	}
	seen := make([]bool, ds.NumFields())
	for _, b := range in.Fields() {
		k := ds.FieldIndices(b.Name)
		if len(k) != 1 {
			return fmt.Errorf("field %q is not a column of the dataset (%s): %w", b.Name, strings.Join(fieldNames(ds), ", "), ErrSchemaMismatch)
		}
		if seen[k[0]] {
			return fmt.Errorf("field %q given twice: %w", b.Name, ErrSchemaMismatch)
		}
		seen[k[0]] = true
		if a := ds.Field(k[0]); !storable(a.Type, b.Type) {
			return fmt.Errorf("field %q is %s, dataset has %s (no type is cast): %w", a.Name, b.Type, a.Type, ErrSchemaMismatch)
		}
	}
	for i, f := range ds.Fields() {
		if !seen[i] && !f.Nullable {
			return fmt.Errorf("field %q is missing, and the dataset's is not nullable: %w", f.Name, ErrSchemaMismatch)
		}
	}
	return nil
}

func fieldNames(s *arrow.Schema) []string {
	names := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		names[i] = f.Name
	}
	return names
}

// storable reports whether values of type in can be stored as type ds: the
// same type but for the nullability of nested fields (and field metadata).
func storable(ds, in arrow.DataType) bool {
	if arrow.TypeEqual(ds, in) {
		return true
	}
	if !sameShape(in, ds) {
		return false
	}
	dn, ok := ds.(arrow.NestedType)
	if !ok {
		return false
	}
	df, inf := dn.Fields(), in.(arrow.NestedType).Fields()
	for i := range df {
		if df[i].Name != inf[i].Name || !storable(df[i].Type, inf[i].Type) {
			return false
		}
	}
	return true
}

// conformBatch returns rec (compatible with ds) as a batch of schema ds: its
// columns in ds's order and types (sharing their buffers), nulls for the
// columns it leaves out. The caller releases the result.
func conformBatch(ds *arrow.Schema, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	if rec.Schema() == ds {
		rec.Retain()
		return rec, nil
	}
	if rec.Schema().Equal(ds) {
		return array.NewRecordBatch(ds, rec.Columns(), rec.NumRows()), nil
	}
	cols := make([]arrow.Array, ds.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, f := range ds.Fields() {
		k := rec.Schema().FieldIndices(f.Name)
		if len(k) != 1 {
			cols[i] = array.MakeArrayOfNull(memory.DefaultAllocator, f.Type, int(rec.NumRows()))
			continue
		}
		c, err := conform(rec.Column(k[0]), f.Type)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", f.Name, err)
		}
		cols[i] = c
	}
	return array.NewRecordBatch(ds, cols, rec.NumRows()), nil
}
