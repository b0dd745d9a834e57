package dataset

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestDatasetRecordReader streams a dataset of three fragments whose rows
// live in two data files each (AddColumns), in several batch sizes, with
// and without a projection that mixes both files' columns, and compares
// the batches with ReadAll.
func TestDatasetRecordReader(t *testing.T) {
	ctx := context.Background()
	uri := filepath.Join(t.TempDir(), "ds")
	w, err := Create(ctx, uri, testSchema, WithMaxRowsPerFile(400))
	if err != nil {
		t.Fatal(err)
	}
	writeDataset(t, w, [2]int64{0, 500}, [2]int64{500, 500})
	r := addReader(1000, 300)
	d, err := AddColumns(ctx, uri, r)
	r.Release()
	if err != nil {
		t.Fatal(err)
	}
	if d.NumFragments() != 3 {
		t.Fatalf("%d fragments", d.NumFragments())
	}
	all, err := d.ReadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer all.Release()
	proj := []string{"note", "id", "vec", "st"}
	for _, batch := range []int64{1, 37, 400, 5000} {
		for _, cols := range [][]string{nil, proj} {
			rr, err := d.NewRecordReader(ctx, batch, cols...)
			if err != nil {
				t.Fatal(err)
			}
			at := int64(0)
			for rr.Next() {
				rec := rr.RecordBatch()
				if rec.NumRows() > batch {
					t.Fatalf("batch of %d rows, asked for %d", rec.NumRows(), batch)
				}
				for k := 0; k < int(rec.NumCols()); k++ {
					name := rec.Schema().Field(k).Name
					if cols != nil && name != cols[k] {
						t.Fatalf("column %d is %q, want %q", k, name, cols[k])
					}
					c := all.Schema().FieldIndices(name)[0]
					want := array.NewSlice(all.Column(c), at, at+rec.NumRows())
					if !array.Equal(rec.Column(k), want) {
						t.Fatalf("batch %d, column %q differs at rows [%d, %d)", batch, name, at, at+rec.NumRows())
					}
					want.Release()
				}
				at += rec.NumRows()
			}
			if err := rr.Err(); err != nil {
				t.Fatal(err)
			}
			rr.Release()
			if at != all.NumRows() {
				t.Fatalf("batch %d: %d rows, want %d", batch, at, all.NumRows())
			}
		}
	}
	var _ array.RecordReader = (*RecordReader)(nil)
	for _, bad := range [][]string{{"nope"}, {"id", "id"}} {
		if _, err := d.NewRecordReader(ctx, 10, bad...); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("columns %v: %v", bad, err)
		}
	}
	// A cancelled context ends the stream with its error.
	cctx, cancel := context.WithCancel(ctx)
	rr, err := d.NewRecordReader(cctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer rr.Release()
	if !rr.Next() {
		t.Fatal(rr.Err())
	}
	cancel()
	if rr.Next() || !errors.Is(rr.Err(), context.Canceled) {
		t.Fatalf("after cancel: %v", rr.Err())
	}
}
