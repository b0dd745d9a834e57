package dataset

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/proto/tablepb"
	"github.com/planarlance/planar/proto/txnpb"
)

func sampleManifest() (*tablepb.Manifest, *txnpb.Transaction) {
	id := uint32(0)
	m := &tablepb.Manifest{
		Version:       1,
		MaxFragmentId: &id,
		Fragments: []*tablepb.DataFragment{{
			Files:        []*tablepb.DataFile{{Path: "a.lance", Fields: []int32{0}, ColumnIndices: []int32{0}, FileMajorVersion: 2, FileMinorVersion: 2}},
			PhysicalRows: 3,
		}},
		DataFormat: &tablepb.Manifest_DataStorageFormat{FileFormat: "lance", Version: "2.2"},
	}
	t := &txnpb.Transaction{Uuid: "u", Operation: &txnpb.Transaction_Append_{Append: &txnpb.Transaction_Append{}}}
	return m, t
}

func TestDatasetManifestBytes(t *testing.T) {
	m, txn := sampleManifest()
	b, err := encodeManifestFile(m, txn, []byte("idx"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(b, []byte{0, 0, 2, 0, 'L', 'A', 'N', 'C'}) {
		t.Fatalf("footer % x", b[len(b)-16:])
	}
	mf, err := decodeManifestFile(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(mf.indexSection) != "idx" || *mf.m.IndexSection != 0 || *mf.m.TransactionSection != 7 || !proto.Equal(mf.m, m) {
		t.Fatalf("round trip: %v", mf.m)
	}
	inline, err := section(b, *mf.m.TransactionSection)
	if err != nil {
		t.Fatal(err)
	}
	got := &txnpb.Transaction{}
	if err := proto.Unmarshal(inline, got); err != nil || !proto.Equal(got, txn) {
		t.Fatalf("inline transaction %v %v", got, err)
	}
	for cut := 1; cut < len(b); cut += 7 {
		if _, err := decodeManifestFile(b[:len(b)-cut]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("cut %d: %v", cut, err)
		}
	}
}

func FuzzManifestFile(f *testing.F) {
	m, txn := sampleManifest()
	b, _ := encodeManifestFile(m, txn, nil)
	f.Add(b)
	b2, _ := encodeManifestFile(m, nil, []byte{1, 2, 3})
	f.Add(b2)
	f.Add([]byte("LANC"))
	f.Fuzz(func(t *testing.T, b []byte) {
		mf, err := decodeManifestFile(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		out, err := encodeManifestFile(mf.m, nil, mf.indexSection)
		if err != nil {
			t.Fatal(err)
		}
		again, err := decodeManifestFile(out)
		if err != nil || !bytes.Equal(again.indexSection, mf.indexSection) {
			t.Fatalf("re-encoded manifest: %v", err)
		}
	})
}

func TestDatasetEmpty(t *testing.T) {
	ctx := context.Background()
	uri := filepath.Join(t.TempDir(), "ds")
	w, err := Create(ctx, uri, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	d, err := w.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx); !errors.Is(err, ErrClosed) {
		t.Fatalf("second commit: %v", err)
	}
	rec, err := d.ReadAll(ctx)
	if err != nil || rec.NumRows() != 0 || rec.NumCols() != 5 {
		t.Fatalf("empty read: %v %v", rec, err)
	}
	rec.Release()
	rec, err = d.Take(ctx, nil)
	if err != nil || rec.NumRows() != 0 {
		t.Fatalf("empty take: %v %v", rec, err)
	}
	rec.Release()
	w, err = Append(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	d = writeDataset(t, w, [2]int64{0, 5})
	if d.manifest().Fragments[0].Id != 0 || d.Version() != 2 {
		t.Fatalf("first fragment of an empty dataset: %v", d.manifest().Fragments)
	}
	checkRows(t, d, 5)
}

// TestOperationNumber names the operation of transactions pylance 14.0.2
// wrote (testdata/transactions), and what an Append may be rebased over.
func TestOperationNumber(t *testing.T) {
	for name, want := range map[string]struct {
		op       int
		appendOK bool
	}{
		"overwrite": {102, false}, "append": {100, true}, "delete": {101, true}, "update": {108, true},
		"create_index": {103, true}, "merge": {105, true}, "project": {109, true}, "rewrite": {104, true},
		"reserve_fragments": {107, true}, "restore": {106, false},
	} {
		b, err := os.ReadFile("testdata/transactions/" + name + ".txn")
		if err != nil {
			t.Fatal(err)
		}
		txn := &txnpb.Transaction{}
		if err := proto.Unmarshal(b, txn); err != nil {
			t.Fatal(err)
		}
		if got := operationNumber(txn); got != want.op {
			t.Errorf("%s: operation %d, want %d", name, got, want.op)
		}
		ctx := context.Background()
		root, err := openLocation(t.TempDir(), defaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		if err := root.st.Put(ctx, transactionsDir+"/x.txn", b); err != nil {
			t.Fatal(err)
		}
		err = appendCompatible(ctx, root, &tablepb.Manifest{Version: 2, TransactionFile: "x.txn"})
		if (err == nil) != want.appendOK || err != nil && !errors.Is(err, ErrConflict) {
			t.Errorf("%s: append rebase: %v, want ok=%v", name, err, want.appendOK)
		}
	}
}
