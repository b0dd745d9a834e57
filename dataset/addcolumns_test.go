package dataset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// addSchema is the columns the AddColumns tests add.
var addSchema = arrow.NewSchema([]arrow.Field{
	{Name: "vec", Type: arrow.FixedSizeListOf(8, arrow.PrimitiveTypes.Float32), Nullable: true},
	{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

// addBatch builds the new columns of rows [first, first+n).
func addBatch(first, n int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, addSchema)
	defer b.Release()
	vec := b.Field(0).(*array.FixedSizeListBuilder)
	vv := vec.ValueBuilder().(*array.Float32Builder)
	note := b.Field(1).(*array.StringBuilder)
	for i := first; i < first+n; i++ {
		if i%4 == 2 {
			vec.AppendNull()
		} else {
			vec.Append(true)
			for k := range 8 {
				vv.Append(float32(i)*0.5 - float32(k))
			}
		}
		if i%9 == 0 {
			note.AppendNull()
		} else {
			note.Append(fmt.Sprintf("n%d", i*7))
		}
	}
	return b.NewRecordBatch()
}

// addReader yields the new columns of rows [0, total) in batches of step.
func addReader(total, step int64) array.RecordReader {
	var recs []arrow.RecordBatch
	for at := int64(0); at < total; at += step {
		recs = append(recs, addBatch(at, min(step, total-at)))
	}
	r, err := array.NewRecordReader(addSchema, recs)
	if err != nil {
		panic(err)
	}
	for _, rec := range recs {
		rec.Release()
	}
	return r
}

// requireRefused checks that a call failed with want and left the dataset
// at uri at version 1 with the data files before.
func requireRefused(t *testing.T, uri string, before map[string][]byte, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error %v, want %v", err, want)
	}
	d, err := Open(context.Background(), uri)
	if err != nil || d.Version() != 1 {
		t.Fatalf("version %d %v", d.Version(), err)
	}
	if after := dataFiles(t, uri); len(after) != len(before) {
		t.Fatalf("%d data files left, want %d", len(after), len(before))
	}
}

var errSource = errors.New("the source failed")

// failingReader yields after batches of its reader, then fails.
type failingReader struct {
	array.RecordReader
	after int
	err   error
}

func (f *failingReader) Next() bool {
	if f.after == 0 {
		f.err = errSource
		return false
	}
	f.after--
	return f.RecordReader.Next()
}

func (f *failingReader) Err() error { return f.err }

func dataFiles(t *testing.T, uri string) map[string][]byte {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(uri, dataDir, "*.lance"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(n)] = b
	}
	return out
}

func TestDatasetAddColumns(t *testing.T) {
	ctx := context.Background()
	for _, sv := range []string{StorageVersion2_2, StorageVersion2_3} {
		t.Run(sv, func(t *testing.T) {
			uri := filepath.Join(t.TempDir(), "ds")
			w, err := Create(ctx, uri, testSchema, WithStorageVersion(sv), WithMaxRowsPerFile(400))
			if err != nil {
				t.Fatal(err)
			}
			writeDataset(t, w, [2]int64{0, 1000})
			before := dataFiles(t, uri)
			if len(before) != 3 {
				t.Fatalf("%d data files", len(before))
			}
			r := addReader(1000, 333)
			d, err := AddColumns(ctx, uri, r)
			r.Release()
			if err != nil {
				t.Fatal(err)
			}
			if d.Version() != 2 || d.NumFragments() != 3 || d.Schema().NumFields() != 7 {
				t.Fatalf("version %d, %d fragments, schema %v", d.Version(), d.NumFragments(), d.Schema())
			}
			after := dataFiles(t, uri)
			var oldBytes, newBytes int
			for name, b := range after {
				if old, ok := before[name]; ok {
					if !bytes.Equal(old, b) {
						t.Fatalf("data file %s changed", name)
					}
					oldBytes += len(b)
				} else {
					newBytes += len(b)
				}
			}
			if len(after) != 6 {
				t.Fatalf("%d data files after", len(after))
			}
			for _, f := range d.manifest().Fragments {
				nf := f.Files[1]
				if len(f.Files) != 2 || len(nf.Fields) != 2 || nf.Fields[0] != 8 || nf.Fields[1] != 9 ||
					nf.ColumnIndices[1] != 1 || nf.FileMinorVersion != uint32(sv[2]-'0') {
					t.Fatalf("fragment %d files %v", f.Id, f.Files)
				}
			}
			got, err := d.ReadAll(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			old, add := testBatch(0, 1000), addBatch(0, 1000)
			defer old.Release()
			defer add.Release()
			for i := range 7 {
				var want arrow.Array
				if i < 5 {
					want = old.Column(i)
				} else {
					want = add.Column(i - 5)
				}
				if !array.Equal(got.Column(i), want) {
					t.Fatalf("column %d differs", i)
				}
			}
			take, err := d.Take(ctx, []int64{999, 0, 400, 401})
			if err != nil {
				t.Fatal(err)
			}
			if s := take.Column(6).(*array.String); !s.IsNull(0) || !s.IsNull(1) || s.Value(2) != "n2800" || s.Value(3) != "n2807" {
				t.Fatalf("take notes %v", s)
			}
			take.Release()
			v1, err := OpenVersion(ctx, uri, 1)
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, v1, 1000)
			t.Logf("%s: AddColumns wrote %d bytes; the table's data files total %d bytes (a full rewrite)", sv, newBytes, oldBytes+newBytes)
		})
	}
}

func TestDatasetAddColumnsErrors(t *testing.T) {
	ctx := context.Background()
	uri := filepath.Join(t.TempDir(), "ds")
	w, err := Create(ctx, uri, testSchema, WithMaxRowsPerFile(400))
	if err != nil {
		t.Fatal(err)
	}
	writeDataset(t, w, [2]int64{0, 1000})
	before := dataFiles(t, uri)
	dup := arrow.NewSchema([]arrow.Field{{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "emb", Type: arrow.PrimitiveTypes.Int32}}, nil)
	dupReader, err := array.NewRecordReader(dup, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dupReader.Release()
	cases := []struct {
		name string
		r    array.RecordReader
		want error
	}{
		{"existing column", dupReader, ErrColumnExists},
		{"too few rows", addReader(999, 400), ErrRowCount},
		{"too many rows", addReader(1001, 300), ErrRowCount},
		{"no rows", addReader(0, 1), ErrRowCount},
		// Fails while the third of the three fragments is fed, the first
		// two being written or already written side by side.
		{"source fails", &failingReader{RecordReader: addReader(1000, 100), after: 9}, errSource},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := AddColumns(ctx, uri, c.r)
			requireRefused(t, uri, before, err, c.want)
		})
	}
	if _, err := AddColumns(ctx, filepath.Join(t.TempDir(), "none"), addReader(1, 1)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing dataset: %v", err)
	}
}

// appendAtEnd is a RecordReader that commits an append to the dataset when
// its rows run out, so the append lands between AddColumns' read and its
// commit.
type appendAtEnd struct {
	array.RecordReader
	t   *testing.T
	uri string
}

func (a *appendAtEnd) Next() bool {
	if a.RecordReader.Next() {
		return true
	}
	w, err := Append(context.Background(), a.uri)
	if err != nil {
		a.t.Error(err)
		return false
	}
	rec := testBatch(1000, 10)
	defer rec.Release()
	if err := w.Write(rec); err != nil {
		a.t.Error(err)
	}
	if _, err := w.Commit(context.Background()); err != nil {
		a.t.Error(err)
	}
	return false
}

func TestDatasetAddColumnsConflict(t *testing.T) {
	ctx := context.Background()
	uri := filepath.Join(t.TempDir(), "ds")
	w, err := Create(ctx, uri, testSchema, WithMaxRowsPerFile(400))
	if err != nil {
		t.Fatal(err)
	}
	writeDataset(t, w, [2]int64{0, 1000})
	r := &appendAtEnd{RecordReader: addReader(1000, 250), t: t, uri: uri}
	defer r.Release()
	if _, err := AddColumns(ctx, uri, r); !errors.Is(err, ErrConflict) {
		t.Fatalf("error %v, want ErrConflict", err)
	}
	d, err := Open(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	if d.Version() != 2 || d.Schema().NumFields() != 5 {
		t.Fatalf("version %d with %d columns", d.Version(), d.Schema().NumFields())
	}
	checkRows(t, d, 1010)
	if n := len(dataFiles(t, uri)); n != 4 {
		t.Fatalf("%d data files, want 4 (AddColumns' removed)", n)
	}
}
