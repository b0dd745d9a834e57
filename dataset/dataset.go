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
	tops    []topField // the schema's top-level fields with their leaf ids
	storage string
	starts  []int64 // first live row of each fragment, plus the total
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
	return newDataset(ctx, root, mf)
}

// newDataset opens the version of mf. Tables planar cannot even count (data
// files in Lance's legacy v1 format, whose manifests may lack row counts)
// are refused here, typed.
func newDataset(ctx context.Context, root *location, mf *manifestFile) (*Dataset, error) {
	m := mf.m
	s, cols, err := format.SchemaFromLance(&filepb.Schema{Fields: m.Fields, Metadata: m.SchemaMetadata})
	if err != nil {
		return nil, fmt.Errorf("dataset %s version %d schema: %w", root, m.Version, err)
	}
	tops, err := topFields(s, cols)
	if err != nil {
		return nil, fmt.Errorf("dataset %s version %d schema: %w", root, m.Version, err)
	}
	d := &Dataset{root: root, mf: mf, schema: s, cols: cols, tops: tops}
	switch {
	case m.DataFormat != nil && m.DataFormat.Version != "":
		d.storage = m.DataFormat.Version
	case len(m.Fragments) > 0 && len(m.Fragments[0].Files) > 0:
		f := m.Fragments[0].Files[0]
		d.storage = fmt.Sprintf("%d.%d", f.FileMajorVersion, f.FileMinorVersion)
	default:
		d.storage = StorageVersion2_2
	}
	for _, f := range m.Fragments {
		for _, df := range f.Files {
			if legacyFile(df) {
				return nil, fmt.Errorf("dataset %s version %d: fragment %d: %w", root, m.Version, f.Id, fileVersionSupported(df))
			}
		}
	}
	d.starts = make([]int64, 0, len(m.Fragments)+1)
	var at int64
	for _, f := range m.Fragments {
		d.starts = append(d.starts, at)
		live := int64(f.PhysicalRows)
		if df := f.DeletionFile; df != nil {
			n := int64(df.NumDeletedRows)
			if n == 0 {
				// Lance writers before num_deleted_rows: count the file.
				del, err := loadDeletions(ctx, root, f)
				if err != nil {
					return nil, fmt.Errorf("dataset %s version %d: %w", root, m.Version, err)
				}
				n = int64(len(del))
			}
			live -= n
		}
		if live < 0 {
			return nil, fmt.Errorf("dataset %s version %d: fragment %d has fewer rows than deletions: %w", root, m.Version, f.Id, ErrCorrupt)
		}
		at += live
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
func (d *Dataset) CountRows() int64 { return d.starts[len(d.starts)-1] }

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

// plan settles how every fragment serves the projected fields, refusing
// what cannot be read before any row is.
func (d *Dataset) plan(proj []topField) ([]*fragPlan, error) {
	plans := make([]*fragPlan, len(d.mf.m.Fragments))
	for i, f := range d.mf.m.Fragments {
		p, err := planFragment(f, proj)
		if err != nil {
			return nil, fmt.Errorf("dataset %s version %d: %w", d.root, d.mf.m.Version, err)
		}
		plans[i] = p
	}
	return plans, nil
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

// Take reads the rows at the given offsets, in the order given; repeats are
// allowed. Offsets are logical, as pylance's take counts them: 0 is the
// first live row of the version in scan order, deleted rows are skipped. An
// offset outside [0, CountRows()) is reader.ErrOutOfRange, before any data
// is read.
func (d *Dataset) Take(ctx context.Context, rows []int64) (arrow.RecordBatch, error) {
	total := d.CountRows()
	for _, r := range rows {
		if r < 0 || r >= total {
			return nil, fmt.Errorf("take row %d of %d: %w", r, total, reader.ErrOutOfRange)
		}
	}
	plans, err := d.plan(d.tops)
	if err != nil {
		return nil, err
	}
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	open := map[int]*openFragment{}
	defer func() {
		for _, f := range open {
			f.Close()
		}
	}()
	local := make([]int64, 0, len(rows))
	for i := 0; i < len(rows); {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fi := d.fragmentOf(rows[i])
		lo, hi := d.starts[fi], d.starts[fi+1]
		of, ok := open[fi]
		if !ok {
			var err error
			if of, err = plans[fi].open(ctx, d.root, d.tops); err != nil {
				return nil, fmt.Errorf("fragment %d: %w", d.mf.m.Fragments[fi].Id, err)
			}
			open[fi] = of
		}
		local = local[:0]
		for ; i < len(rows) && rows[i] >= lo && rows[i] < hi; i++ {
			local = append(local, of.del.physical(rows[i]-lo))
		}
		rec, err := of.take(d.schema, local)
		if err != nil {
			return nil, fmt.Errorf("fragment %d: %w", d.mf.m.Fragments[fi].Id, err)
		}
		recs = append(recs, rec)
	}
	return concatRecords(d.schema, recs)
}

// fragmentOf returns the fragment holding live row r (0 <= r < total).
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
	// Skip fragments without live rows that start at the same row.
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
