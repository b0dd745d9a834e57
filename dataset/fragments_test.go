package dataset

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// writeWorkers runs one goroutine per worker; worker g writes ids
// first+g*per .. first+(g+1)*per-1 in batches of 40 rows, with files cut at
// 64 rows. The fragments go through JSON, as they would between processes,
// and come back in worker order.
func writeWorkers(t *testing.T, uri string, first, workers, per int64, opts ...Option) []FragmentMetadata {
	t.Helper()
	ctx := context.Background()
	out := make([][]byte, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var recs []arrow.RecordBatch
			for at := int64(0); at < per; at += 40 {
				recs = append(recs, testBatch(first+g*per+at, min(40, per-at)))
			}
			frags, err := WriteFragments(ctx, uri, testSchema, recs, append([]Option{WithMaxRowsPerFile(64)}, opts...)...)
			for _, r := range recs {
				r.Release()
			}
			if err == nil {
				out[g], err = json.Marshal(frags)
			}
			errs[g] = err
		}()
	}
	wg.Wait()
	var all []FragmentMetadata
	for g := range workers {
		if errs[g] != nil {
			t.Fatalf("worker %d: %v", g, errs[g])
		}
		var frags []FragmentMetadata
		if err := json.Unmarshal(out[g], &frags); err != nil {
			t.Fatalf("worker %d: %v", g, err)
		}
		if want := (per + 63) / 64; int64(len(frags)) != want {
			t.Fatalf("worker %d: %d fragments, want %d", g, len(frags), want)
		}
		all = append(all, frags...)
	}
	return all
}

func TestDatasetWriteFragments(t *testing.T) {
	ctx := context.Background()
	for _, storage := range []string{StorageVersion2_2, StorageVersion2_3} {
		t.Run(storage, func(t *testing.T) {
			uri := filepath.Join(t.TempDir(), "ds")
			frags := writeWorkers(t, uri, 0, 4, 150, WithStorageVersion(storage))
			if _, err := Open(ctx, uri); !errors.Is(err, ErrNotFound) {
				t.Fatalf("open before any commit: %v, want ErrNotFound", err)
			}
			d, err := CommitOverwrite(ctx, uri, testSchema, frags)
			if err != nil {
				t.Fatal(err)
			}
			if d.Version() != 1 || d.StorageVersion() != storage || d.NumFragments() != len(frags) {
				t.Fatalf("version %d storage %s with %d fragments", d.Version(), d.StorageVersion(), d.NumFragments())
			}
			checkRows(t, d, 600)

			// A second round appends to the dataset: field ids come from it.
			more := writeWorkers(t, uri, 600, 3, 100)
			if d, err = Open(ctx, uri); err != nil || d.Version() != 1 {
				t.Fatalf("fragments were committed: %v", err)
			}
			d, err = CommitAppend(ctx, uri, more)
			if err != nil {
				t.Fatal(err)
			}
			if d.Version() != 2 {
				t.Fatalf("version %d, want 2", d.Version())
			}
			checkRows(t, d, 900)
			for i, f := range d.manifest().Fragments {
				if f.Id != uint64(i) {
					t.Fatalf("fragment %d has id %d", i, f.Id)
				}
			}
			if m := d.manifest().MaxFragmentId; m == nil || int(*m) != len(frags)+len(more)-1 {
				t.Fatalf("max fragment id %v", m)
			}
		})
	}
}

// TestDatasetCommitAppendRace: CommitAppend rebases over Appends committed
// after the fragments were written.
func TestDatasetCommitAppendRace(t *testing.T) {
	ctx := context.Background()
	uri := filepath.Join(t.TempDir(), "ds")
	w, err := Create(ctx, uri, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	writeDataset(t, w, [2]int64{0, 100})
	frags := writeWorkers(t, uri, 200, 2, 50)
	const writers = 4
	var wg sync.WaitGroup
	errs := make(chan error, writers+1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err := CommitAppend(ctx, uri, frags, WithMaxCommitRetries(10))
		errs <- err
	}()
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := Append(ctx, uri, WithMaxCommitRetries(10))
			if err == nil {
				rec := testBatch(300+int64(g)*25, 25)
				err = a.Write(rec)
				rec.Release()
			}
			if err == nil {
				_, err = a.Commit(ctx)
			}
			errs <- err
		}()
	}
	// Rows 100..199 come last, from a plain Append.
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	a, err := Append(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	d := writeDataset(t, a, [2]int64{100, 100})
	if d.Version() != 2+writers+1 {
		t.Fatalf("version %d, want %d", d.Version(), 2+writers+1)
	}
	seen := make([]bool, 400)
	for rec, err := range d.Scan(ctx, 0) {
		if err != nil {
			t.Fatal(err)
		}
		ids := rec.Column(0).(*array.Int64)
		for i := range ids.Len() {
			if seen[ids.Value(i)] {
				t.Fatalf("row %d twice", ids.Value(i))
			}
			seen[ids.Value(i)] = true
		}
		rec.Release()
	}
	for id, ok := range seen {
		if !ok {
			t.Fatalf("row %d missing", id)
		}
	}
}

func TestDatasetFragmentErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	uri := filepath.Join(dir, "ds")
	w, err := Create(ctx, uri, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	writeDataset(t, w, [2]int64{0, 10})
	good := writeWorkers(t, uri, 10, 1, 10)

	other := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64}}, nil)
	ob := array.NewRecordBuilder(memory.DefaultAllocator, other)
	ob.Field(0).(*array.Float64Builder).Append(1)
	orec := ob.NewRecordBatch()
	ob.Release()
	defer orec.Release()
	otherFrags, err := WriteFragments(ctx, filepath.Join(dir, "other"), other, []arrow.RecordBatch{orec})
	if err != nil {
		t.Fatal(err)
	}
	v23 := writeWorkers(t, filepath.Join(dir, "v23"), 0, 1, 10, WithStorageVersion(StorageVersion2_3))

	mutate := func(f func(*FragmentMetadata)) []FragmentMetadata {
		c := good[0]
		c.Files = []DataFile{good[0].Files[0]}
		c.Files[0].Fields = append([]int32(nil), c.Files[0].Fields...)
		f(&c)
		return []FragmentMetadata{c}
	}
	for _, tc := range []struct {
		name string
		run  func() error
		want error
	}{
		{"write other schema", func() error {
			_, err := WriteFragments(ctx, uri, other, []arrow.RecordBatch{orec})
			return err
		}, ErrSchemaMismatch},
		{"write nil schema", func() error {
			_, err := WriteFragments(ctx, uri, nil, nil)
			return err
		}, ErrInvalidOption},
		{"write other storage", func() error {
			_, err := WriteFragments(ctx, uri, testSchema, nil, WithStorageVersion(StorageVersion2_3))
			return err
		}, ErrVersionMismatch},
		{"no dataset", func() error {
			_, err := CommitAppend(ctx, filepath.Join(dir, "none"), good)
			return err
		}, ErrNotFound},
		{"no fragments", func() error {
			_, err := CommitAppend(ctx, uri, nil)
			return err
		}, ErrInvalidOption},
		{"other fields", func() error {
			_, err := CommitAppend(ctx, uri, mutate(func(f *FragmentMetadata) { f.Files[0].Fields[1] = 42 }))
			return err
		}, ErrSchemaMismatch},
		{"other schema's file", func() error {
			_, err := CommitAppend(ctx, uri, otherFrags)
			return err
		}, ErrSchemaMismatch},
		{"other version", func() error {
			_, err := CommitAppend(ctx, uri, mutate(func(f *FragmentMetadata) { f.Files[0].FileMinorVersion = 3 }))
			return err
		}, ErrVersionMismatch},
		{"mixed versions", func() error {
			_, err := CommitOverwrite(ctx, filepath.Join(dir, "mixed"), testSchema, append(append([]FragmentMetadata(nil), good...), v23...))
			return err
		}, ErrVersionMismatch},
		{"missing file", func() error {
			_, err := CommitAppend(ctx, uri, mutate(func(f *FragmentMetadata) { f.Files[0].Path = "nope.lance" }))
			return err
		}, fs.ErrNotExist},
		{"escaping path", func() error {
			_, err := CommitAppend(ctx, uri, mutate(func(f *FragmentMetadata) { f.Files[0].Path = "../x.lance" }))
			return err
		}, ErrInvalidOption},
		{"wrong size", func() error {
			_, err := CommitAppend(ctx, uri, mutate(func(f *FragmentMetadata) { f.Files[0].FileSizeBytes++ }))
			return err
		}, ErrCorrupt},
		{"wrong rows", func() error {
			_, err := CommitAppend(ctx, uri, mutate(func(f *FragmentMetadata) { f.PhysicalRows++ }))
			return err
		}, ErrCorrupt},
		{"two data files", func() error {
			_, err := CommitAppend(ctx, uri, mutate(func(f *FragmentMetadata) { f.Files = append(f.Files, f.Files[0]) }))
			return err
		}, ErrUnsupported},
		{"same file twice", func() error {
			_, err := CommitAppend(ctx, uri, append(mutate(func(*FragmentMetadata) {}), good[0]))
			return err
		}, ErrInvalidOption},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.run(); !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
		})
	}
	d, err := Open(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	if d.Version() != 1 {
		t.Fatalf("a failed commit committed version %d", d.Version())
	}
	if d, err = CommitAppend(ctx, uri, good); err != nil {
		t.Fatal(err)
	}
	checkRows(t, d, 20)
}

// pylanceFragmentJSON is what pylance 14.0.2's FragmentMetadata.to_json gives
// (json.dumps) for a fragment of lance.fragment.write_fragments.
const pylanceFragmentJSON = `{"id": 0, "files": [{"fields": [0, 2, 3], "column_indices": [0, 1, 2], "file_major_version": 2, "file_minor_version": 2, "file_size_bytes": 709, "base_id": null, "path": "111110101111101100110101dcfd8d4a6b97cf5752a61e5f05.lance"}], "overlays": [], "physical_rows": 2, "deletion_file": null, "row_id_meta": null, "created_at_version_meta": null, "last_updated_at_version_meta": null}`

func TestDatasetFragmentJSON(t *testing.T) {
	var f FragmentMetadata
	if err := json.Unmarshal([]byte(pylanceFragmentJSON), &f); err != nil {
		t.Fatal(err)
	}
	want := FragmentMetadata{PhysicalRows: 2, Files: []DataFile{{
		Path: "111110101111101100110101dcfd8d4a6b97cf5752a61e5f05.lance", Fields: []int32{0, 2, 3},
		ColumnIndices: []int32{0, 1, 2}, FileMajorVersion: 2, FileMinorVersion: 2, FileSizeBytes: 709,
	}}}
	b1, _ := json.Marshal(f)
	b2, _ := json.Marshal(want)
	if string(b1) != string(b2) {
		t.Fatalf("decoded %s, want %s", b1, b2)
	}
	// Go's encoding has pylance's keys in pylance's order, without spaces.
	wantCompact := `{"id":0,"files":[{"fields":[0,2,3],"column_indices":[0,1,2],"file_major_version":2,"file_minor_version":2,"file_size_bytes":709,"base_id":null,"path":"111110101111101100110101dcfd8d4a6b97cf5752a61e5f05.lance"}],"overlays":[],"physical_rows":2,"deletion_file":null,"row_id_meta":null,"created_at_version_meta":null,"last_updated_at_version_meta":null}`
	if string(b1) != wantCompact {
		t.Fatalf("encoded\n%s\nwant\n%s", b1, wantCompact)
	}
	for _, tc := range []struct {
		name, json string
		want       error
	}{
		{"deletion file", `{"id":1,"files":[],"physical_rows":3,"deletion_file":{"read_version":1,"id":2,"file_type":"array","num_deleted_rows":1}}`, ErrUnsupported},
		{"row ids", `{"id":1,"files":[],"physical_rows":3,"row_id_meta":{"inline":[1]}}`, ErrUnsupported},
		{"overlay", `{"id":1,"files":[],"physical_rows":3,"overlays":[{}]}`, ErrUnsupported},
		{"base id", `{"id":1,"files":[{"path":"a.lance","fields":[0],"base_id":1}],"physical_rows":3}`, ErrUnsupported},
		{"bad type", `{"id":"x"}`, ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f FragmentMetadata
			if err := json.Unmarshal([]byte(tc.json), &f); !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
		})
	}
}

// TestDatasetCommitOverwriteExisting: CommitOverwrite over a dataset replaces
// its rows and schema in a new version; the old version stays readable and
// fragment ids keep growing.
func TestDatasetCommitOverwriteExisting(t *testing.T) {
	ctx := context.Background()
	uri := filepath.Join(t.TempDir(), "ds")
	w, err := Create(ctx, uri, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	writeDataset(t, w, [2]int64{0, 300})
	small := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, small)
	for i := range 50 {
		b.Field(0).(*array.Float64Builder).Append(float64(i) / 2)
	}
	rec := b.NewRecordBatch()
	b.Release()
	defer rec.Release()
	// The dataset exists with another schema: WriteFragments refuses,
	// unless the fragments are for an overwrite.
	if _, err := WriteFragments(ctx, uri, small, []arrow.RecordBatch{rec}); !errors.Is(err, ErrSchemaMismatch) {
		t.Fatalf("err %v, want ErrSchemaMismatch", err)
	}
	frags, err := WriteFragments(ctx, uri, small, []arrow.RecordBatch{rec}, WithMaxRowsPerFile(20), ForOverwrite())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CommitAppend(ctx, uri, frags); !errors.Is(err, ErrSchemaMismatch) {
		t.Fatalf("append of overwrite fragments: err %v, want ErrSchemaMismatch", err)
	}
	d, err := CommitOverwrite(ctx, uri, small, frags)
	if err != nil {
		t.Fatal(err)
	}
	if d.Version() != 2 || d.CountRows() != 50 || d.NumFragments() != 3 || !d.Schema().Equal(small) {
		t.Fatalf("version %d, %d rows in %d fragments, schema %v", d.Version(), d.CountRows(), d.NumFragments(), d.Schema())
	}
	if id := d.manifest().Fragments[0].Id; id != 1 {
		t.Fatalf("first fragment id %d, want 1", id)
	}
	got, err := d.ReadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if !array.RecordEqual(got, rec) {
		t.Fatal("overwritten rows differ")
	}
	old, err := OpenVersion(ctx, uri, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, old, 300)
}

// TestFragmentJSONDeletionFile: a fragment with a deletion file marshals
// with pylance's deletion_file (what FragmentMetadata.to_json printed for
// pylance 14.0.2's own fragment), and cannot be committed as new.
func TestFragmentJSONDeletionFile(t *testing.T) {
	f := FragmentMetadata{ID: 1, PhysicalRows: 10000, Files: []DataFile{{Path: "x.lance", Fields: []int32{0}, ColumnIndices: []int32{0},
		FileMajorVersion: 2, FileMinorVersion: 2, FileSizeBytes: 18908}},
		DeletionFile: &DeletionFile{Bitmap: true, ReadVersion: 2, ID: 4523870012174632799, NumDeletedRows: 8000}}
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":1,"files":[{"fields":[0],"column_indices":[0],"file_major_version":2,"file_minor_version":2,"file_size_bytes":18908,"base_id":null,"path":"x.lance"}],"overlays":[],"physical_rows":10000,"deletion_file":{"read_version":2,"id":4523870012174632799,"file_type":"bitmap","num_deleted_rows":8000,"base_id":null},"row_id_meta":null,"created_at_version_meta":null,"last_updated_at_version_meta":null}`
	if string(b) != want {
		t.Fatalf("JSON\n%s\nwant\n%s", b, want)
	}
	var back FragmentMetadata
	if err := json.Unmarshal(b, &back); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("committing a fragment with a deletion file: %v", err)
	}
}
