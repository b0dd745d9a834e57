package dataset

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func TestDatasetOverwrite(t *testing.T) {
	ctx := context.Background()
	uri := filepath.Join(t.TempDir(), "ds")
	// Overwrite without a dataset creates one.
	w, err := Overwrite(ctx, uri, testSchema, WithMaxRowsPerFile(40))
	if err != nil {
		t.Fatal(err)
	}
	writeDataset(t, w, [2]int64{0, 100})
	small := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	w, err = Overwrite(ctx, uri, small, WithStorageVersion(StorageVersion2_3))
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewStringBuilder(memory.DefaultAllocator)
	b.AppendValues([]string{"a", "b"}, nil)
	col := b.NewArray()
	b.Release()
	rec := array.NewRecordBatch(small, []arrow.Array{col}, 2)
	col.Release()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	d, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := d.manifest()
	if d.Version() != 2 || !d.Schema().Equal(small) || d.CountRows() != 2 || d.StorageVersion() != StorageVersion2_3 ||
		m.Fragments[0].Id != 3 || *m.MaxFragmentId != 3 {
		t.Fatalf("version %d schema %v rows %d storage %s fragments %v", d.Version(), d.Schema(), d.CountRows(), d.StorageVersion(), m.Fragments)
	}
	got, err := d.ReadAll(ctx)
	if err != nil || !array.RecordEqual(got, rec) {
		t.Fatalf("overwritten rows %v %v", got, err)
	}
	got.Release()
	old, err := OpenVersion(ctx, uri, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, old, 100)

	// An overwrite loses to any commit that lands first.
	o, err := Overwrite(ctx, uri, small)
	if err != nil {
		t.Fatal(err)
	}
	a, err := Append(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Write(rec); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := o.Write(rec); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Commit(ctx); !errors.Is(err, ErrConflict) {
		t.Fatalf("overwrite after a concurrent append: %v", err)
	}
	rec.Release()
	if d, err = Open(ctx, uri); err != nil || d.Version() != 3 || d.CountRows() != 4 {
		t.Fatalf("after the lost overwrite: %v %v", d, err)
	}
}
