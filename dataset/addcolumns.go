package dataset

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/filepb"
	"github.com/planarlance/planar/proto/tablepb"
	"github.com/planarlance/planar/proto/txnpb"
)

// AddColumns adds the columns of r's schema to every row of the latest
// version of the dataset at uri (the backfill of pylance's
// LanceDataset.add_columns). r yields the new columns' values for every
// existing row in row order: its batches may have any size, and are split
// across fragments by their row counts. Each fragment gets one new data file
// holding only the new fields (field ids continue after the dataset's
// largest); the existing data files are neither read nor rewritten. The new
// version is committed as Lance's Merge, the operation pylance commits for
// add_columns.
//
// A new column whose name is already a column is ErrColumnExists; r yielding
// more or fewer rows than the dataset has is ErrRowCount; fragments with
// deletion files are ErrUnsupported. Any commit landing between the read
// and the commit is ErrConflict (a Merge replaces every fragment). On error
// nothing is committed and the new data files are removed. Writer options
// (WithWriterOptions and the like) apply; file size limits do not, one file
// per fragment being the layout.
func AddColumns(ctx context.Context, uri string, r array.RecordReader, opts ...Option) (*Dataset, error) {
	o, err := applyOptions(opts)
	if err != nil {
		return nil, err
	}
	d, err := Open(ctx, uri, opts...)
	if err != nil {
		return nil, err
	}
	w, fields, err := addColumnsWriter(d, r.Schema(), o)
	if err != nil {
		return nil, fmt.Errorf("add columns to %s: %w", uri, err)
	}
	files, err := w.backfill(ctx, d.mf.m.Fragments, r)
	if err != nil {
		_ = w.Abort()
		return nil, fmt.Errorf("add columns to %s: %w", uri, err)
	}
	w.root.syncData()
	prev := d.mf.m
	frags := make([]*tablepb.DataFragment, len(prev.Fragments))
	for i, f := range prev.Fragments {
		nf := proto.Clone(f).(*tablepb.DataFragment)
		nf.Files = append(nf.Files, files[i])
		frags[i] = nf
	}
	allFields := append(append([]*filepb.Field(nil), prev.Fields...), fields...)
	preserves := true
	for _, f := range fields {
		preserves = preserves && f.Nullable
	}
	txn := &txnpb.Transaction{
		ReadVersion: prev.Version,
		Uuid:        uuidString(newUUID()),
		Operation: &txnpb.Transaction_Merge_{Merge: &txnpb.Transaction_Merge{
			Fragments: frags, Schema: allFields, SchemaMetadata: prev.SchemaMetadata,
			PreservesNullability: preserves,
		}},
	}
	spec := commitSpec{root: d.root, txn: txn, maxRetries: o.maxRetries, keepIndex: true,
		build: func(pm *tablepb.Manifest) (*tablepb.Manifest, error) {
			m := proto.Clone(pm).(*tablepb.Manifest)
			m.Fields = allFields
			m.Fragments = frags
			return m, nil
		}}
	mf, err := commit(ctx, spec, d.mf)
	if err != nil {
		_ = w.Abort()
		return nil, err
	}
	w.done = true
	return newDataset(d.root, mf)
}

// addColumnsWriter checks the new schema against the dataset and returns a
// Writer for the new data files with the new fields' Lance ids.
func addColumnsWriter(d *Dataset, s *arrow.Schema, o options) (*Writer, []*filepb.Field, error) {
	if s == nil || s.NumFields() == 0 {
		return nil, nil, fmt.Errorf("no new columns: %w", ErrInvalidOption)
	}
	for _, f := range s.Fields() {
		if d.schema.HasField(f.Name) {
			return nil, nil, fmt.Errorf("column %q: %w", f.Name, ErrColumnExists)
		}
	}
	m := d.mf.m
	if err := checkFeatureFlags(m); err != nil {
		return nil, nil, err
	}
	for _, f := range m.Fragments {
		if f.DeletionFile != nil {
			return nil, nil, fmt.Errorf("fragment %d has a deletion file: %w", f.Id, ErrUnsupported)
		}
	}
	ls, cols, err := format.SchemaToLance(s)
	if err != nil {
		return nil, nil, err
	}
	base := int32(-1)
	for _, f := range m.Fields {
		base = max(base, f.Id)
	}
	base++
	for _, f := range ls.Fields {
		f.Id += base
		if f.ParentId >= 0 {
			f.ParentId += base
		}
	}
	w := &Writer{root: d.root, schema: s, base: d.mf, opts: o}
	for _, c := range cols {
		w.leafIDs = append(w.leafIDs, c.ID+base)
	}
	if err := w.setStorage(d.storage); err != nil {
		return nil, nil, fmt.Errorf("data storage version %q: %w", d.storage, ErrUnsupported)
	}
	return w, ls.Fields, nil
}

// backfill writes one data file per fragment from r's rows, in order, and
// returns the files' entries.
func (w *Writer) backfill(ctx context.Context, frags []*tablepb.DataFragment, r array.RecordReader) ([]*tablepb.DataFile, error) {
	var total int64
	for _, f := range frags {
		total += int64(f.PhysicalRows)
	}
	fi := 0
	var got int64
	// next closes the file of each full fragment and opens the next
	// fragment's (fragments with no rows get an empty file).
	next := func() error {
		for {
			switch {
			case w.cur != nil && w.cur.rows == int64(frags[fi].PhysicalRows):
				if err := w.closeFile(); err != nil {
					return err
				}
				fi++
			case w.cur == nil && fi < len(frags):
				if err := w.openFile(); err != nil {
					return err
				}
			default:
				return nil
			}
		}
	}
	if err := next(); err != nil {
		return nil, err
	}
	for r.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rec := r.RecordBatch()
		if err := compatible(w.schema, rec.Schema()); err != nil {
			return nil, err
		}
		got += rec.NumRows()
		if got > total {
			return nil, fmt.Errorf("more than the dataset's %d rows: %w", total, ErrRowCount)
		}
		for off := int64(0); off < rec.NumRows(); {
			n := min(rec.NumRows()-off, int64(frags[fi].PhysicalRows)-w.cur.rows)
			part := rec.NewSlice(off, off+n)
			if w.schema != part.Schema() {
				p2 := array.NewRecordBatch(w.schema, part.Columns(), n)
				part.Release()
				part = p2
			}
			err := w.cur.w.WriteBatch(part)
			part.Release()
			if err != nil {
				return nil, fmt.Errorf("data file %s: %w", w.cur.name, err)
			}
			w.cur.rows += n
			off += n
			if err := next(); err != nil {
				return nil, err
			}
		}
	}
	if err := r.Err(); err != nil {
		return nil, err
	}
	if got != total {
		return nil, fmt.Errorf("%d rows, dataset has %d: %w", got, total, ErrRowCount)
	}
	out := make([]*tablepb.DataFile, len(w.frags))
	for i, f := range w.frags {
		out[i] = f.Files[0]
	}
	return out, nil
}
