package dataset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/writer"
)

func writeDataset(t *testing.T, w *Writer, batches ...[2]int64) *Dataset {
	t.Helper()
	for _, b := range batches {
		rec := testBatch(b[0], b[1])
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	d, err := w.Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// checkRows reads the whole version and checks it holds ids 0..n-1 with the
// values testBatch gives them.
func checkRows(t *testing.T, d *Dataset, n int64) {
	t.Helper()
	got, err := d.ReadAll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	want := testBatch(0, n)
	defer want.Release()
	if !array.RecordEqual(got, want) {
		t.Fatalf("version %d: rows differ (%d vs %d rows)", d.Version(), got.NumRows(), want.NumRows())
	}
	if d.CountRows() != n {
		t.Fatalf("CountRows %d, want %d", d.CountRows(), n)
	}
}

func TestDatasetCreateAppendRead(t *testing.T) {
	ctx := context.Background()
	for _, sv := range []string{StorageVersion2_2, StorageVersion2_3} {
		t.Run(sv, func(t *testing.T) {
			uri := filepath.Join(t.TempDir(), "ds")
			w, err := Create(ctx, uri, testSchema, WithStorageVersion(sv), WithMaxRowsPerFile(1000))
			if err != nil {
				t.Fatal(err)
			}
			d := writeDataset(t, w, [2]int64{0, 700}, [2]int64{700, 800})
			if d.Version() != 1 || d.NumFragments() != 2 || d.StorageVersion() != sv {
				t.Fatalf("version %d, %d fragments, storage %s", d.Version(), d.NumFragments(), d.StorageVersion())
			}
			checkRows(t, d, 1500)
			w, err = Append(ctx, "file://"+uri, WithMaxRowsPerFile(1000))
			if err != nil {
				t.Fatal(err)
			}
			d = writeDataset(t, w, [2]int64{1500, 2600})
			if d.Version() != 2 || d.NumFragments() != 5 {
				t.Fatalf("version %d, %d fragments", d.Version(), d.NumFragments())
			}
			m := d.manifest()
			if *m.MaxFragmentId != 4 || m.Fragments[4].Id != 4 || m.Fragments[4].PhysicalRows != 600 {
				t.Fatalf("max fragment id %d, last fragment %v", *m.MaxFragmentId, m.Fragments[4])
			}
			if f := m.Fragments[0].Files[0]; f.FileMinorVersion != uint32(sv[2]-'0') || f.FileSizeBytes == 0 ||
				len(f.Fields) != 6 || f.Fields[2] != 3 || f.Fields[5] != 7 {
				t.Fatalf("data file %v", f)
			}
			checkRows(t, d, 4100)
			frags := d.Fragments()
			if len(frags) != 5 || frags[4].ID != 4 || frags[4].PhysicalRows != 600 || len(frags[4].Files) != 1 {
				t.Fatalf("Fragments() = %+v", frags)
			}
			if df := frags[0].Files[0]; df.Path != m.Fragments[0].Files[0].Path || df.FileSizeBytes == 0 {
				t.Fatalf("Fragments()[0] data file %+v", df)
			} else if _, err := os.Stat(filepath.Join(uri, "data", df.Path)); err != nil {
				t.Fatalf("data file of Fragments(): %v", err)
			}
			old, err := OpenVersion(ctx, uri, 1)
			if err != nil {
				t.Fatal(err)
			}
			checkRows(t, old, 1500)
			vs, err := d.Versions()
			if err != nil || len(vs) != 2 || vs[1].Version != 2 {
				t.Fatalf("versions %v %v", vs, err)
			}
			take := []int64{4099, 0, 999, 1000, 1000, 2500}
			rec, err := d.Take(ctx, take)
			if err != nil {
				t.Fatal(err)
			}
			ids := rec.Column(0).(*array.Int64)
			for i, r := range take {
				if ids.Value(i) != r {
					t.Fatalf("take %d gave id %d", r, ids.Value(i))
				}
			}
			rec.Release()
			if _, err := d.Take(ctx, []int64{4100}); err == nil {
				t.Fatal("take past the end")
			}
			names, _ := filepath.Glob(filepath.Join(uri, "_versions", "*.manifest"))
			txns, _ := filepath.Glob(filepath.Join(uri, "_transactions", "*.txn"))
			if len(names) != 2 || len(txns) != 2 || !strings.HasSuffix(names[0], "18446744073709551613.manifest") {
				t.Fatalf("manifests %v, transactions %v", names, txns)
			}
			hint, _ := os.ReadFile(filepath.Join(uri, "_versions", "latest_version_hint.json"))
			if string(hint) != `{"version":2}` {
				t.Fatalf("hint %s", hint)
			}
		})
	}
}

func TestDatasetErrors(t *testing.T) {
	ctx := context.Background()
	uri := filepath.Join(t.TempDir(), "ds")
	if _, err := Open(ctx, uri); !errors.Is(err, ErrNotFound) {
		t.Fatalf("open missing: %v", err)
	}
	// A lone file where a dataset is expected.
	lone := filepath.Join(t.TempDir(), "lone.lance")
	os.WriteFile(lone, []byte("not a directory"), 0o644)
	if _, err := Open(ctx, lone); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "is a file, not a dataset directory") {
		t.Fatalf("open a file: %v", err)
	}
	if _, err := Create(ctx, "gs://bucket/ds", testSchema); !errors.Is(err, ErrUnsupportedScheme) {
		t.Fatalf("gs: %v", err)
	}
	if _, err := Create(ctx, "s3://bucket/ds", testSchema, WithStorageOptions(map[string]string{"aws_bogus": "1"})); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("s3 with an unknown storage option: %v", err)
	}
	w, err := Create(ctx, uri, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	writeDataset(t, w, [2]int64{0, 10})
	if _, err := Create(ctx, uri, testSchema); !errors.Is(err, ErrExists) {
		t.Fatalf("create twice: %v", err)
	}
	if _, err := OpenVersion(ctx, uri, 9); !errors.Is(err, ErrNoVersion) {
		t.Fatalf("version 9: %v", err)
	}
	if _, err := Append(ctx, uri, WithStorageVersion(StorageVersion2_3)); !errors.Is(err, ErrVersionMismatch) {
		t.Fatalf("append 2.3 to 2.2: %v", err)
	}
	w, err = Append(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	other := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32}}, nil)
	b := array.NewRecordBuilder(nil, other)
	rec := b.NewRecordBatch()
	if err := w.Write(rec); !errors.Is(err, ErrSchemaMismatch) {
		t.Fatalf("wrong schema: %v", err)
	}
	rec.Release()
	b.Release()
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	// A corrupt manifest is a typed error, and the versions before it stay
	// readable.
	m2 := filepath.Join(uri, "_versions", manifestName(2))
	if err := os.WriteFile(m2, []byte("not a manifest at all, no"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, uri); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt manifest: %v", err)
	}
	d, err := OpenVersion(ctx, uri, 1)
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, d, 10)
}

// TestDatasetCorruptTransaction rebases an append over a version whose
// transaction file is truncated: the commit fails with ErrCorrupt and
// commits nothing; once the file is whole again, the same commit lands.
func TestDatasetCorruptTransaction(t *testing.T) {
	ctx := context.Background()
	uri := filepath.Join(t.TempDir(), "ds")
	w, err := Create(ctx, uri, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	writeDataset(t, w, [2]int64{0, 100})
	a, err := Append(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Append(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	d2 := writeDataset(t, a, [2]int64{100, 50})
	txn := filepath.Join(uri, "_transactions", d2.manifest().TransactionFile)
	whole, err := os.ReadFile(txn)
	if err != nil {
		t.Fatal(err)
	}
	rec := testBatch(150, 50)
	defer rec.Release()
	if err := b.Write(rec); err != nil {
		t.Fatal(err)
	}
	for _, cut := range []int{1, len(whole) / 2, len(whole) - 1} {
		if err := os.WriteFile(txn, whole[:cut], 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Commit(ctx); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("rebase over a transaction cut to %d of %d bytes: %v, want ErrCorrupt", cut, len(whole), err)
		}
		d, err := Open(ctx, uri)
		if err != nil {
			t.Fatal(err)
		}
		if d.Version() != 2 {
			t.Fatalf("after the failed commit the dataset is at version %d", d.Version())
		}
		checkRows(t, d, 150)
	}
	if err := os.WriteFile(txn, whole, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := b.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.Version() != 3 {
		t.Fatalf("version %d", d.Version())
	}
	checkRows(t, d, 200)
}

// TestDatasetConcurrentAppend commits two appends from the same read
// version: the second rebases over the first.
func TestDatasetConcurrentAppend(t *testing.T) {
	ctx := context.Background()
	uri := filepath.Join(t.TempDir(), "ds")
	w, err := Create(ctx, uri, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	writeDataset(t, w, [2]int64{0, 100})
	a, err := Append(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Append(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	writeDataset(t, a, [2]int64{100, 50})
	d := writeDataset(t, b, [2]int64{150, 50})
	if d.Version() != 3 || d.NumFragments() != 3 || d.manifest().Fragments[2].Id != 2 {
		t.Fatalf("version %d, %d fragments", d.Version(), d.NumFragments())
	}
	checkRows(t, d, 200)

	// An append cannot rebase over a version that is not an append.
	c, err := Append(ctx, uri, WithMaxCommitRetries(3))
	if err != nil {
		t.Fatal(err)
	}
	loc := &location{uri: filepath.Clean(uri), st: newLocalStore(filepath.Clean(uri))}
	d4, err := readManifestVersion(ctx, loc, 3)
	if err != nil {
		t.Fatal(err)
	}
	// Version 4's transaction has no operation (an empty file).
	d4.m.Version = 4
	d4.m.TransactionFile = "x.txn"
	if err := os.WriteFile(filepath.Join(uri, "_transactions", "x.txn"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	bs, err := encodeManifestFile(d4.m, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := loc.st.PutIfNotExists(ctx, "_versions/"+manifestName(4), bs); err != nil {
		t.Fatal(err)
	}
	rec := testBatch(200, 5)
	defer rec.Release()
	if err := c.Write(rec); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Commit(ctx); !errors.Is(err, ErrConflict) {
		t.Fatalf("append over a non-append: %v", err)
	}
	d, err = OpenVersion(ctx, uri, 3)
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, d, 200)
}

func TestDatasetNames(t *testing.T) {
	if got := manifestName(1); got != "18446744073709551614.manifest" {
		t.Fatal(got)
	}
	for _, c := range []struct {
		name string
		v    uint64
		ok   bool
	}{
		{"18446744073709551614.manifest", 1, true},
		{"3.manifest", 3, true},
		{"d3.manifest", 0, false},
		{".18446744073709551614.manifest.1234.tmp", 0, false},
		{"latest_version_hint.json", 0, false},
		{"99999999999999999999.manifest", 0, false},
	} {
		v, ok := parseManifestName(c.name)
		if v != c.v || ok != c.ok {
			t.Errorf("%s: %d %v", c.name, v, ok)
		}
	}
	n := dataFileName()
	if len(n) != 56 || strings.Trim(n[:24], "01") != "" || !strings.HasSuffix(n, ".lance") {
		t.Fatal(n)
	}
}

// TestDatasetFileCuts: files are cut at the row cap (a batch may span two
// files) and, checked after each batch, at the byte cap, which counts the
// bytes the file writer has flushed (small pages here, so it flushes).
func TestDatasetFileCuts(t *testing.T) {
	ctx := context.Background()
	// One goroutine: pages are written as they are cut, so the cuts by bytes
	// do not depend on the machine.
	small := WithWriterOptions(writer.WithMaxPageBytes(1<<10), writer.WithConcurrency(1))
	for _, c := range []struct {
		name string
		opts []Option
		want []uint64 // rows per fragment
	}{
		{"default", nil, []uint64{600}},
		{"rows", []Option{WithMaxRowsPerFile(250)}, []uint64{250, 250, 100}},
		{"bytes", []Option{WithMaxBytesPerFile(1), small}, []uint64{200, 200, 200}},
		{"both", []Option{WithMaxBytesPerFile(1), WithMaxRowsPerFile(150), small}, []uint64{150, 50, 150, 50, 150, 50}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, err := Create(ctx, filepath.Join(t.TempDir(), "ds"), testSchema, c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			d := writeDataset(t, w, [2]int64{0, 200}, [2]int64{200, 200}, [2]int64{400, 200})
			var got []uint64
			for _, f := range d.manifest().Fragments {
				got = append(got, f.PhysicalRows)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("fragments of %v rows, want %v", got, c.want)
			}
			checkRows(t, d, 600)
		})
	}
	if _, err := Create(ctx, t.TempDir(), testSchema, WithMaxRowsPerFile(0)); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("zero rows per file: %v", err)
	}
	if _, err := Create(ctx, t.TempDir(), testSchema, WithStorageVersion("2.1")); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("storage 2.1: %v", err)
	}
}

// TestTableConfig: WithTableConfig sets the manifest's config map and
// Lance's table-config writer flag on Create; an append keeps both.
func TestTableConfig(t *testing.T) {
	ctx := context.Background()
	uri := filepath.Join(t.TempDir(), "t.lance")
	rec := testBatch(0, 10)
	defer rec.Release()
	w, err := Create(ctx, uri, rec.Schema(), WithTableConfig(CompactionBinaryCopy), WithTableConfig(map[string]string{"x": "1"}))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	d, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []*Dataset{d, appendRows(t, uri, rec)} {
		m := v.manifest()
		if m.Config["lance.compaction.compaction_mode"] != "try_binary_copy" || m.Config["x"] != "1" || m.WriterFeatureFlags&flagTableConfig == 0 {
			t.Errorf("version %d: config %v, writer flags %#x", m.Version, m.Config, m.WriterFeatureFlags)
		}
	}
	if _, err := Create(ctx, filepath.Join(t.TempDir(), "u.lance"), rec.Schema(), WithTableConfig(map[string]string{"": "v"})); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("empty key: %v", err)
	}
}

func appendRows(t *testing.T, uri string, rec arrow.RecordBatch) *Dataset {
	t.Helper()
	w, err := Append(context.Background(), uri)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	d, err := w.Commit(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestWriterSurvivesABadBatch: a batch the file writer refuses (a null in
// the non-nullable id, or a wrong type) is refused whole with nothing of it
// written, and the writer goes on: the commit holds exactly the good
// batches, also when the bad one would have spanned two files.
func TestWriterSurvivesABadBatch(t *testing.T) {
	ctx := context.Background()
	uri := filepath.Join(t.TempDir(), "ds")
	w, err := Create(ctx, uri, testSchema, WithMaxRowsPerFile(150))
	if err != nil {
		t.Fatal(err)
	}
	good1, good2 := testBatch(0, 100), testBatch(100, 100)
	defer good1.Release()
	defer good2.Release()
	bad := testBatch(1000, 100) // spans the first file's end
	defer bad.Release()
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	for i := range 100 {
		if i == 70 {
			ib.AppendNull()
		} else {
			ib.Append(int64(1000 + i))
		}
	}
	ids := ib.NewArray()
	cols := append([]arrow.Array{ids}, bad.Columns()[1:]...)
	badRec := array.NewRecordBatch(testSchema, cols, 100)
	defer badRec.Release()
	if err := w.Write(good1); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(badRec); !errors.Is(err, writer.ErrInvalidBatch) {
		t.Fatalf("bad batch: %v, want ErrInvalidBatch", err)
	}
	if err := w.Write(good2); err != nil {
		t.Fatalf("a good batch after a bad one: %v", err)
	}
	d, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.ReadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	want, _ := concatRecords(testSchema, []arrow.RecordBatch{good1, good2})
	defer want.Release()
	if !array.RecordEqual(got, want) {
		t.Fatalf("committed %d rows, want the 200 good ones", got.NumRows())
	}
	tmp, _ := filepath.Glob(filepath.Join(uri, "data", "*tmp*"))
	if len(tmp) != 0 {
		t.Fatalf("left behind: %v", tmp)
	}
}
