package dataset

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
)

// TestDatasetConcurrentWriters: several goroutines append at once, many
// rounds each; every commit lands and every row is there exactly once.
func TestDatasetConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	uri := filepath.Join(t.TempDir(), "ds")
	w, err := Create(ctx, uri, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	writeDataset(t, w)
	const writers, rounds, rows = 4, 6, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers*rounds)
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				a, err := Append(ctx, uri, WithMaxCommitRetries(writers*rounds))
				if err != nil {
					errs <- err
					return
				}
				rec := testBatch(int64((g*rounds+r)*rows), rows)
				err = a.Write(rec)
				rec.Release()
				if err == nil {
					_, err = a.Commit(ctx)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	d, err := Open(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	if d.Version() != 1+writers*rounds || d.CountRows() != writers*rounds*rows {
		t.Fatalf("version %d with %d rows", d.Version(), d.CountRows())
	}
	seen := make([]bool, writers*rounds*rows)
	for rec, err := range d.Scan(ctx, 0) {
		if err != nil {
			t.Fatal(err)
		}
		ids := rec.Column(0).(*array.Int64)
		for i := range ids.Len() {
			id := ids.Value(i)
			if seen[id] {
				t.Fatalf("row %d twice", id)
			}
			seen[id] = true
		}
		rec.Release()
	}
	ids := map[uint64]bool{}
	for _, f := range d.manifest().Fragments {
		if ids[f.Id] {
			t.Fatalf("fragment id %d twice", f.Id)
		}
		ids[f.Id] = true
	}
}

// TestCommitRetriesFromVersions checks what ReadVersion documents: a commit
// that rebased over k concurrent appends lands k versions after
// ReadVersion+1, so the jump counts its retries.
func TestCommitRetriesFromVersions(t *testing.T) {
	ctx := context.Background()
	uri := filepath.Join(t.TempDir(), "ds")
	w, err := Create(ctx, uri, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	writeDataset(t, w)
	for _, others := range []int{0, 1, 3} {
		late, err := Append(ctx, uri)
		if err != nil {
			t.Fatal(err)
		}
		base := late.ReadVersion()
		for k := range others {
			a, err := Append(ctx, uri)
			if err != nil {
				t.Fatal(err)
			}
			writeDataset(t, a, [2]int64{int64(1000*others + 10*k), 10})
		}
		d := writeDataset(t, late, [2]int64{int64(1000*others + 500), 10})
		if retries := d.Version() - base - 1; retries != uint64(others) {
			t.Errorf("%d appends committed first: version %d from %d, %d retries", others, d.Version(), base, retries)
		}
	}
}
