package dataset

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/planarlance/planar/reader"
)

// fragmentFiles is one fragment opened for reading: its data files, which
// together hold the dataset's columns. A fragment written in one go has one
// data file; AddColumns (Lance's Merge) adds a file per added column group.
// The files' columns, concatenated in file order, are the dataset's columns
// in schema order.
type fragmentFiles struct {
	files []*reader.File
	rows  int64
}

func (ff *fragmentFiles) NumRows() int64 { return ff.rows }

func (ff *fragmentFiles) Close() error {
	var first error
	for _, f := range ff.files {
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// ReadRange reads rows [start, start+n) of every file and joins their
// columns.
func (ff *fragmentFiles) ReadRange(start, n int64) (arrow.RecordBatch, error) {
	return ff.each(func(f *reader.File) (arrow.RecordBatch, error) { return f.ReadRange(start, n) })
}

// Take reads the given rows of every file and joins their columns.
func (ff *fragmentFiles) Take(rows []int64) (arrow.RecordBatch, error) {
	return ff.each(func(f *reader.File) (arrow.RecordBatch, error) { return f.Take(rows) })
}

func (ff *fragmentFiles) each(read func(*reader.File) (arrow.RecordBatch, error)) (arrow.RecordBatch, error) {
	if len(ff.files) == 1 {
		return read(ff.files[0])
	}
	recs := make([]arrow.RecordBatch, 0, len(ff.files))
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	var fields []arrow.Field
	var cols []arrow.Array
	for _, f := range ff.files {
		rec, err := read(f)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rec)
		if rec.NumRows() != recs[0].NumRows() {
			return nil, fmt.Errorf("data files read %d and %d rows: %w", recs[0].NumRows(), rec.NumRows(), ErrCorrupt)
		}
		fields = append(fields, rec.Schema().Fields()...)
		cols = append(cols, rec.Columns()...)
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, recs[0].NumRows()), nil
}

// openFragment opens the data files of fragment i. Each file must hold a
// run of the dataset's columns in order (column indices 0, 1, ...), and the
// files in order must hold every column once.
func (d *Dataset) openFragment(i int) (*fragmentFiles, error) {
	frag := d.mf.m.Fragments[i]
	if frag.DeletionFile != nil {
		return nil, fmt.Errorf("fragment %d has a deletion file: %w", frag.Id, ErrUnsupported)
	}
	if len(frag.Files) == 0 {
		return nil, fmt.Errorf("fragment %d has no data file: %w", frag.Id, ErrUnsupported)
	}
	next := 0 // the next dataset column a file must start with
	for _, df := range frag.Files {
		if df.BaseId != nil {
			return nil, fmt.Errorf("fragment %d: data file in another base path: %w", frag.Id, ErrUnsupported)
		}
		if df.Path == "" || strings.Contains(df.Path, "..") || filepath.IsAbs(df.Path) {
			return nil, fmt.Errorf("fragment %d: data file path %q: %w", frag.Id, df.Path, ErrCorrupt)
		}
		if len(df.ColumnIndices) != len(df.Fields) || next+len(df.Fields) > len(d.cols) {
			return nil, fmt.Errorf("fragment %d: data file %s has %d fields, %d column indices, schema %d columns: %w",
				frag.Id, df.Path, len(df.Fields), len(df.ColumnIndices), len(d.cols), ErrUnsupported)
		}
		for j, id := range df.Fields {
			if c := d.cols[next+j]; id != c.ID || df.ColumnIndices[j] != int32(j) {
				return nil, fmt.Errorf("fragment %d: data file %s column %d holds field %d at %d, want field %d: %w",
					frag.Id, df.Path, j, id, df.ColumnIndices[j], c.ID, ErrUnsupported)
			}
		}
		next += len(df.Fields)
	}
	if next != len(d.cols) {
		return nil, fmt.Errorf("fragment %d: data files hold %d of %d columns: %w", frag.Id, next, len(d.cols), ErrUnsupported)
	}
	ff := &fragmentFiles{rows: int64(frag.PhysicalRows)}
	for _, df := range frag.Files {
		f, err := d.root.openDataFile(context.Background(), df.Path)
		if err != nil {
			ff.Close()
			return nil, fmt.Errorf("fragment %d: %w", frag.Id, err)
		}
		ff.files = append(ff.files, f)
		if f.NumRows() != ff.rows {
			ff.Close()
			return nil, fmt.Errorf("fragment %d: file %s has %d rows, manifest %d: %w", frag.Id, df.Path, f.NumRows(), frag.PhysicalRows, ErrCorrupt)
		}
	}
	return ff, nil
}
