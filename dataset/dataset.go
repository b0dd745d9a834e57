package dataset

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/filepb"
	"github.com/planarlance/planar/proto/tablepb"
	"github.com/planarlance/planar/reader"
)

// DefaultScanBatchRows is the largest batch Scan yields by default: a whole
// data file at Lance's default rows per file. Smaller batches bound memory
// but cost decode time, because each read of reader.File decodes the whole
// pages it touches (8 MiB per column by default) and keeps none across calls:
// 1M rows of the test schema scan in 0.27 s as one batch and in 2.3 s as
// 64K-row batches.
const DefaultScanBatchRows = 1 << 20

// Dataset is one version of a Lance dataset, opened for reading. It holds no
// open files; every read opens the data files it needs.
type Dataset struct {
	root    *location
	mf      *manifestFile
	schema  *arrow.Schema
	cols    []format.Column
	storage string
	starts  []int64 // first row of each fragment, plus the total
}

// Open opens the latest version of the dataset at uri.
func Open(ctx context.Context, uri string, opts ...Option) (*Dataset, error) {
	_, root, err := locate(uri, opts)
	if err != nil {
		return nil, err
	}
	v, err := latestVersion(ctx, root)
	if err != nil {
		return nil, err
	}
	return openVersion(ctx, root, v)
}

// OpenVersion opens one version of the dataset at uri; ErrNoVersion when it
// does not exist.
func OpenVersion(ctx context.Context, uri string, version uint64, opts ...Option) (*Dataset, error) {
	_, root, err := locate(uri, opts)
	if err != nil {
		return nil, err
	}
	if _, err := listVersions(ctx, root); err != nil {
		return nil, err
	}
	return openVersion(ctx, root, version)
}

func openVersion(ctx context.Context, root *location, v uint64) (*Dataset, error) {
	mf, err := readManifestVersion(ctx, root, v)
	if err != nil {
		return nil, err
	}
	return newDataset(root, mf)
}

func newDataset(root *location, mf *manifestFile) (*Dataset, error) {
	m := mf.m
	s, cols, err := format.SchemaFromLance(&filepb.Schema{Fields: m.Fields, Metadata: m.SchemaMetadata})
	if err != nil {
		return nil, fmt.Errorf("dataset %s version %d schema: %w", root, m.Version, err)
	}
	d := &Dataset{root: root, mf: mf, schema: s, cols: cols}
	switch {
	case m.DataFormat != nil && m.DataFormat.Version != "":
		d.storage = m.DataFormat.Version
	case len(m.Fragments) > 0 && len(m.Fragments[0].Files) > 0:
		f := m.Fragments[0].Files[0]
		d.storage = fmt.Sprintf("%d.%d", f.FileMajorVersion, f.FileMinorVersion)
	default:
		d.storage = StorageVersion2_2
	}
	d.starts = make([]int64, 0, len(m.Fragments)+1)
	var at int64
	for _, f := range m.Fragments {
		d.starts = append(d.starts, at)
		at += int64(f.PhysicalRows)
	}
	d.starts = append(d.starts, at)
	return d, nil
}

// URI is the dataset's directory.
func (d *Dataset) URI() string { return d.root.uri }

// Version is the version this Dataset shows.
func (d *Dataset) Version() uint64 { return d.mf.m.Version }

// Schema is the dataset's schema.
func (d *Dataset) Schema() *arrow.Schema { return d.schema }

// StorageVersion is the data storage version ("2.2" or "2.3").
func (d *Dataset) StorageVersion() string { return d.storage }

// NumFragments is the number of fragments of this version.
func (d *Dataset) NumFragments() int { return len(d.mf.m.Fragments) }

// Fragments describes this version's fragments in order: their ids, rows
// and data files (paths relative to the dataset's data/ folder).
func (d *Dataset) Fragments() []FragmentMetadata {
	out := make([]FragmentMetadata, len(d.mf.m.Fragments))
	for i, f := range d.mf.m.Fragments {
		out[i] = fragmentFromProto(f)
	}
	return out
}

// CountRows is the number of rows of this version (deleted rows excluded).
func (d *Dataset) CountRows() int64 {
	var n int64
	for _, f := range d.mf.m.Fragments {
		n += int64(f.PhysicalRows)
		if df := f.DeletionFile; df != nil {
			n -= int64(df.NumDeletedRows)
		}
	}
	return n
}

// VersionInfo describes one committed version.
type VersionInfo struct {
	Version   uint64
	Timestamp time.Time
}

// Versions lists every committed version of the dataset, oldest first.
func (d *Dataset) Versions() ([]VersionInfo, error) {
	ctx := context.Background()
	vs, err := listVersions(ctx, d.root)
	if err != nil {
		return nil, err
	}
	out := make([]VersionInfo, 0, len(vs))
	for _, v := range vs {
		mf, err := readManifestVersion(ctx, d.root, v)
		if err != nil {
			return nil, err
		}
		out = append(out, VersionInfo{Version: v, Timestamp: mf.m.Timestamp.AsTime()})
	}
	return out, nil
}

// asDataset gives a batch read from a data file the dataset's schema.
func (d *Dataset) asDataset(rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	defer rec.Release()
	if int(rec.NumCols()) != d.schema.NumFields() {
		return nil, fmt.Errorf("data file has %d fields, dataset %d: %w", rec.NumCols(), d.schema.NumFields(), ErrSchemaMismatch)
	}
	for i, c := range rec.Columns() {
		if !arrow.TypeEqual(c.DataType(), d.schema.Field(i).Type) {
			return nil, fmt.Errorf("data file field %d is %s, dataset has %s: %w", i, c.DataType(), d.schema.Field(i).Type, ErrSchemaMismatch)
		}
	}
	return array.NewRecordBatch(d.schema, rec.Columns(), rec.NumRows()), nil
}

// Scan yields every row of this version in fragment order, in batches of at
// most batchRows rows (DefaultScanBatchRows when batchRows <= 0). The caller
// owns each batch and must Release it. Iteration stops at the first error.
func (d *Dataset) Scan(ctx context.Context, batchRows int64) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		r, err := d.NewRecordReader(ctx, batchRows)
		if err != nil {
			yield(nil, err)
			return
		}
		defer r.Release()
		for r.Next() {
			rec := r.RecordBatch()
			rec.Retain()
			if !yield(rec, nil) {
				return
			}
		}
		if err := r.Err(); err != nil {
			yield(nil, err)
		}
	}
}

// ReadAll reads every row of this version into one batch.
func (d *Dataset) ReadAll(ctx context.Context) (arrow.RecordBatch, error) {
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for rec, err := range d.Scan(ctx, 0) {
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
	return concatRecords(d.schema, recs)
}

// Take reads the rows at the given offsets (0 is the first row of the
// version), in the order given; repeats are allowed.
func (d *Dataset) Take(ctx context.Context, rows []int64) (arrow.RecordBatch, error) {
	total := d.starts[len(d.starts)-1]
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	files := map[int]*fragmentFiles{}
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	local := make([]int64, 0, len(rows))
	for i := 0; i < len(rows); {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r := rows[i]
		if r < 0 || r >= total {
			return nil, fmt.Errorf("row %d of %d: %w", r, total, reader.ErrOutOfRange)
		}
		fi := d.fragmentOf(r)
		lo, hi := d.starts[fi], d.starts[fi+1]
		local = local[:0]
		for ; i < len(rows) && rows[i] >= lo && rows[i] < hi; i++ {
			local = append(local, rows[i]-lo)
		}
		f, ok := files[fi]
		if !ok {
			var err error
			if f, err = d.openFragment(fi); err != nil {
				return nil, err
			}
			files[fi] = f
		}
		rec, err := f.Take(local)
		if err == nil {
			rec, err = d.asDataset(rec)
		}
		if err != nil {
			return nil, fmt.Errorf("fragment %d: %w", d.mf.m.Fragments[fi].Id, err)
		}
		recs = append(recs, rec)
	}
	return concatRecords(d.schema, recs)
}

// fragmentOf returns the fragment holding row r (0 <= r < total).
func (d *Dataset) fragmentOf(r int64) int {
	lo, hi := 0, len(d.starts)-1
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if d.starts[mid] <= r {
			lo = mid
		} else {
			hi = mid
		}
	}
	// Skip empty fragments that start at the same row.
	for d.starts[lo+1] <= r {
		lo++
	}
	return lo
}

// concatRecords joins batches of one schema into one batch.
func concatRecords(s *arrow.Schema, recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	if len(recs) == 1 {
		recs[0].Retain()
		return recs[0], nil
	}
	cols := make([]arrow.Array, s.NumFields())
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	parts := make([]arrow.Array, len(recs))
	for c := range cols {
		for i, r := range recs {
			parts[i] = r.Column(c)
		}
		if len(parts) == 0 {
			cols[c] = array.MakeArrayOfNull(memory.DefaultAllocator, s.Field(c).Type, 0)
			continue
		}
		a, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			for _, x := range cols[:c] {
				x.Release()
			}
			return nil, err
		}
		cols[c] = a
	}
	out := array.NewRecordBatch(s, cols, n)
	for _, a := range cols {
		a.Release()
	}
	return out, nil
}

// manifest exposes the decoded manifest to tests.
func (d *Dataset) manifest() *tablepb.Manifest { return d.mf.m }
