package dataset

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/tablepb"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/structural"
)

// How a fragment's data files hold the manifest schema's columns, as Lance
// reads them (lance 14.0.2, dataset/fragment.rs open_readers and lance-file
// reader/structural.rs projection_from_field_ids):
//
//   - Each DataFile lists field ids (fields) and, at the same positions, the
//     physical column of the file that holds each (column_indices). A
//     negative column index, and an id the schema does not hold (a dropped
//     column, a tombstone, a hidden row-lineage column), are ignored.
//   - The manifest schema alone names and types the columns; the names and
//     ids stored inside a data file are never consulted. So a rename or a
//     name swap is metadata only, and a cast writes new files under new ids.
//   - A field that no data file of the fragment holds reads as nulls (a
//     column added to the schema only, or rows added without it).
//
// Since 2.1 a physical column is a leaf: one per primitive leaf, packed
// struct or blob (structural.LeafPathsField counts them the same way).

// topField is one top-level field of the manifest schema with the ids of its
// physical columns, in column order.
type topField struct {
	field  arrow.Field
	leaves []int32
}

// topFields groups the schema's leaves by top-level field.
func topFields(s *arrow.Schema, cols []format.Column) ([]topField, error) {
	out := make([]topField, s.NumFields())
	for i, f := range s.Fields() {
		out[i].field = f
	}
	for _, c := range cols {
		if c.Top >= len(out) {
			return nil, fmt.Errorf("column %q of no schema field: %w", c.Path, ErrCorrupt)
		}
		out[c.Top].leaves = append(out[c.Top].leaves, c.ID)
	}
	return out, nil
}

// fileVersionSupported refuses data files of versions this package cannot
// read, naming them as Lance does: (0, 0..2) legacy, (0, 3) and (2, 0)
// storage 2.0.
func fileVersionSupported(df *tablepb.DataFile) error {
	switch ma, mi := df.FileMajorVersion, df.FileMinorVersion; {
	case ma == 2 && mi >= 1 && mi <= 3:
		return nil
	case legacyFile(df):
		return fmt.Errorf("data file %s is in Lance's legacy (v1) file format: %w", df.Path, ErrUnsupported)
	case ma == 0 && mi == 3, ma == 2 && mi == 0:
		return fmt.Errorf("data file %s is storage version 2.0 (planar reads 2.1, 2.2 and 2.3): %w", df.Path, ErrUnsupported)
	default:
		return fmt.Errorf("data file %s has unknown file version %d.%d: %w", df.Path, ma, mi, ErrUnsupported)
	}
}

// legacyFile reports whether a data file is in Lance's legacy (v1) format.
func legacyFile(df *tablepb.DataFile) bool {
	return df.FileMajorVersion == 0 && df.FileMinorVersion <= 2
}

// fragPlan is how one fragment serves a projection, settled from the
// manifest alone: which data files to open for which columns, which columns
// read as nulls.
type fragPlan struct {
	frag  *tablepb.DataFragment
	files []planFile
	nulls []int // projected positions no data file holds
}

// planFile is one data file a projection needs.
type planFile struct {
	path  string
	pos   []int // projected positions it serves
	first []int // the first physical column of each
}

// planFragment settles how frag serves the projected fields proj. It
// refuses (ErrUnsupported, ErrCorrupt) everything it cannot read, so that a
// read can be refused before it returns a row.
func planFragment(frag *tablepb.DataFragment, proj []topField) (*fragPlan, error) {
	if err := checkDeletionFile(frag); err != nil {
		return nil, err
	}
	if len(frag.Files) == 0 {
		return nil, fmt.Errorf("fragment %d has no data file: %w", frag.Id, ErrUnsupported)
	}
	type at struct{ file, col int }
	where := map[int32]at{}
	for fi, df := range frag.Files {
		if df.BaseId != nil {
			return nil, fmt.Errorf("fragment %d: data file %s in base path %d: %w", frag.Id, df.Path, *df.BaseId, ErrUnsupported)
		}
		if df.Path == "" || strings.Contains(df.Path, "..") || strings.Contains(df.Path, "\\") || filepath.IsAbs(df.Path) {
			return nil, fmt.Errorf("fragment %d: data file path %q: %w", frag.Id, df.Path, ErrCorrupt)
		}
		if len(df.ColumnIndices) < len(df.Fields) {
			return nil, fmt.Errorf("fragment %d: data file %s has %d fields and %d column indices: %w",
				frag.Id, df.Path, len(df.Fields), len(df.ColumnIndices), ErrCorrupt)
		}
		for j, id := range df.Fields {
			c := df.ColumnIndices[j]
			if c < 0 || id < 0 {
				continue
			}
			if prev, ok := where[id]; ok {
				return nil, fmt.Errorf("fragment %d: field %d is in data files %s and %s: %w",
					frag.Id, id, frag.Files[prev.file].Path, df.Path, ErrCorrupt)
			}
			where[id] = at{fi, int(c)}
		}
	}
	p := &fragPlan{frag: frag}
	byFile := map[int]int{} // data file -> index in p.files
	for pos, tf := range proj {
		first, ok := where[tf.leaves[0]]
		found := 0
		for j, id := range tf.leaves {
			w, has := where[id]
			if !has {
				continue
			}
			found++
			if !ok || w.file != first.file || w.col != first.col+j {
				ok = false
			}
		}
		switch {
		case found == 0:
			p.nulls = append(p.nulls, pos)
			continue
		case !ok || found != len(tf.leaves):
			return nil, fmt.Errorf("fragment %d: column %q is split over data files or stored in part: %w", frag.Id, tf.field.Name, ErrUnsupported)
		}
		df := frag.Files[first.file]
		if err := fileVersionSupported(df); err != nil {
			return nil, fmt.Errorf("fragment %d: %w", frag.Id, err)
		}
		k, seen := byFile[first.file]
		if !seen {
			k = len(p.files)
			byFile[first.file] = k
			p.files = append(p.files, planFile{path: df.Path})
		}
		p.files[k].pos = append(p.files[k].pos, pos)
		p.files[k].first = append(p.files[k].first, first.col)
	}
	return p, nil
}

// openFragment is a fragment opened for a projection: its needed data files
// with the file fields that hold each projected column, and its deletions.
type openFragment struct {
	plan  *fragPlan
	proj  []topField
	rows  int64 // physical rows
	files []*reader.File
	names [][]string // per file: the file fields to read, in plan order
	del   deletions
}

func (of *openFragment) Close() error {
	var first error
	for _, f := range of.files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	of.files = nil
	return first
}

// open opens the data files of a plan and finds, in each, the top-level
// field whose columns hold each projected column: it must start at the
// column the manifest gives, span as many columns as the manifest field has
// leaves, and have the same shape as the manifest's type.
func (p *fragPlan) open(ctx context.Context, root *location, proj []topField) (*openFragment, error) {
	of := &openFragment{plan: p, proj: proj, rows: int64(p.frag.PhysicalRows)}
	for _, pf := range p.files {
		f, err := root.openDataFile(ctx, pf.path)
		if err != nil {
			of.Close()
			return nil, err
		}
		of.files = append(of.files, f)
		if f.NumRows() != of.rows {
			of.Close()
			return nil, fmt.Errorf("data file %s has %d rows, manifest %d: %w", pf.path, f.NumRows(), of.rows, ErrCorrupt)
		}
		starts := map[int]int{} // first column -> file field
		col := 0
		fs := f.Schema()
		for i, fld := range fs.Fields() {
			starts[col] = i
			col += len(structural.LeafPathsField(fld))
		}
		names := make([]string, len(pf.pos))
		for j, pos := range pf.pos {
			tf := proj[pos]
			i, ok := starts[pf.first[j]]
			if ok && len(structural.LeafPathsField(fs.Field(i))) != len(tf.leaves) {
				ok = false
			}
			if !ok {
				of.Close()
				return nil, fmt.Errorf("data file %s: column %d does not start a field of %d columns for %q: %w",
					pf.path, pf.first[j], len(tf.leaves), tf.field.Name, ErrUnsupported)
			}
			if !sameShape(fs.Field(i).Type, tf.field.Type) {
				of.Close()
				return nil, fmt.Errorf("data file %s: field %q is %s, the dataset's %q is %s: %w",
					pf.path, fs.Field(i).Name, fs.Field(i).Type, tf.field.Name, tf.field.Type, ErrSchemaMismatch)
			}
			names[j] = fs.Field(i).Name
		}
		of.names = append(of.names, names)
	}
	if p.frag.DeletionFile != nil {
		del, err := loadDeletions(ctx, root, p.frag)
		if err != nil {
			of.Close()
			return nil, err
		}
		of.del = del
	}
	return of, nil
}

// join assembles the projected columns from one batch per data file (in
// plan order) and nulls for the columns no file holds, typed as the
// manifest types them.
func (of *openFragment) join(schema *arrow.Schema, recs []arrow.RecordBatch, rows int64) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, len(of.proj))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for k, rec := range recs {
		if rec.NumRows() != rows {
			return nil, fmt.Errorf("data files read %d and %d rows: %w", rows, rec.NumRows(), ErrCorrupt)
		}
		for j, pos := range of.plan.files[k].pos {
			a, err := conform(rec.Column(j), of.proj[pos].field.Type)
			if err != nil {
				return nil, fmt.Errorf("column %q: %w", of.proj[pos].field.Name, err)
			}
			cols[pos] = a
		}
	}
	for _, pos := range of.plan.nulls {
		cols[pos] = array.MakeArrayOfNull(memory.DefaultAllocator, of.proj[pos].field.Type, int(rows))
	}
	return array.NewRecordBatch(schema, cols, rows), nil
}

// take reads the rows at the given physical offsets.
func (of *openFragment) take(schema *arrow.Schema, rows []int64) (arrow.RecordBatch, error) {
	recs := make([]arrow.RecordBatch, 0, len(of.files))
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for k, f := range of.files {
		rec, err := f.TakeColumns(rows, of.names[k]...)
		if err != nil {
			return nil, fmt.Errorf("data file %s: %w", of.plan.files[k].path, err)
		}
		recs = append(recs, rec)
	}
	return of.join(schema, recs, int64(len(rows)))
}

// sameShape reports whether arrays of type a can be read as type b: the same
// physical layout, whatever the field names, nullability and metadata.
func sameShape(a, b arrow.DataType) bool {
	if a.ID() != b.ID() {
		return false
	}
	switch at := a.(type) {
	case arrow.NestedType:
		bt := b.(arrow.NestedType)
		af, bf := at.Fields(), bt.Fields()
		if len(af) != len(bf) {
			return false
		}
		if fa, ok := a.(*arrow.FixedSizeListType); ok && fa.Len() != b.(*arrow.FixedSizeListType).Len() {
			return false
		}
		for i := range af {
			if !sameShape(af[i].Type, bf[i].Type) {
				return false
			}
		}
		return true
	default:
		return arrow.TypeEqual(a, b)
	}
}

// conform returns a as an array of type dt (sameShape), sharing its buffers.
func conform(a arrow.Array, dt arrow.DataType) (arrow.Array, error) {
	if arrow.TypeEqual(a.DataType(), dt) {
		a.Retain()
		return a, nil
	}
	if !sameShape(a.DataType(), dt) {
		return nil, fmt.Errorf("data file type %s, dataset type %s: %w", a.DataType(), dt, ErrSchemaMismatch)
	}
	d := retype(a.Data(), dt)
	defer d.Release()
	return array.MakeFromData(d), nil
}

// retype rebuilds d (and its children) with type dt.
func retype(d arrow.ArrayData, dt arrow.DataType) arrow.ArrayData {
	var children []arrow.ArrayData
	if nt, ok := dt.(arrow.NestedType); ok {
		fs := nt.Fields()
		for i, c := range d.Children() {
			children = append(children, retype(c, fs[i].Type))
		}
	}
	out := array.NewData(dt, d.Len(), d.Buffers(), children, d.NullN(), d.Offset())
	for _, c := range children {
		c.Release()
	}
	return out
}
