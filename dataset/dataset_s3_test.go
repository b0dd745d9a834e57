package dataset

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/planarlance/planar/internal/s3test"
)

// TestDatasetS3 runs the dataset on a real S3 server: create, append, open,
// scan and take, configured by storage options and by the environment; and
// concurrent appends racing on the conditional manifest put.
func TestDatasetS3(t *testing.T) {
	srv := s3test.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	so := WithStorageOptions(map[string]string{
		"aws_access_key_id":     srv.AccessKey,
		"aws_secret_access_key": srv.SecretKey,
		"aws_endpoint":          srv.Endpoint,
		"aws_region":            srv.Region,
		"allow_http":            "true",
	})

	t.Run("multipart data file", func(t *testing.T) {
		// A data file larger than an S3 part goes up as a multipart upload
		// while it is written; it reads back whole.
		uri := "s3://" + srv.Bucket + "/multipart/ds"
		w, err := Create(ctx, uri, testSchema, so)
		if err != nil {
			t.Fatal(err)
		}
		const rows = 400_000
		d := writeDataset(t, w, [2]int64{0, rows / 2}, [2]int64{rows / 2, rows / 2})
		files := d.manifest().Fragments[0].Files
		if len(d.manifest().Fragments) != 1 || files[0].FileSizeBytes <= s3PartSize {
			t.Fatalf("%d fragments, first file %d bytes: want one file over %d bytes", len(d.manifest().Fragments), files[0].FileSizeBytes, s3PartSize)
		}
		size, err := d.root.st.Size(ctx, dataKey(files[0].Path))
		if err != nil || uint64(size) != files[0].FileSizeBytes {
			t.Fatalf("stored size %d, %v; manifest says %d", size, err, files[0].FileSizeBytes)
		}
		checkRows(t, d, rows)
	})

	t.Run("create append read", func(t *testing.T) {
		uri := "s3://" + srv.Bucket + "/basic/ds"
		if _, err := Open(ctx, uri, so); !errors.Is(err, ErrNotFound) {
			t.Fatalf("open before create: %v, want ErrNotFound", err)
		}
		w, err := Create(ctx, uri, testSchema, so, WithMaxRowsPerFile(150))
		if err != nil {
			t.Fatal(err)
		}
		d := writeDataset(t, w, [2]int64{0, 100}, [2]int64{100, 100})
		if d.Version() != 1 || len(d.manifest().Fragments) != 2 {
			t.Fatalf("version %d, %d fragments", d.Version(), len(d.manifest().Fragments))
		}
		checkRows(t, d, 200)
		if _, err := Create(ctx, uri, testSchema, so); !errors.Is(err, ErrExists) {
			t.Fatalf("create over a dataset: %v, want ErrExists", err)
		}

		a, err := Append(ctx, uri, so)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		d = writeDataset(t, a, [2]int64{200, 50})
		t.Logf("append of 50 rows (data file put + transaction + manifest) took %v", time.Since(start))
		checkRows(t, d, 250)

		// Reopen through the environment instead of options.
		for _, e := range srv.Env() {
			k, v, _ := strings.Cut(e, "=")
			t.Setenv(k, v)
		}
		d, err = Open(ctx, uri)
		if err != nil {
			t.Fatal(err)
		}
		if d.Version() != 2 || d.URI() != uri {
			t.Fatalf("reopened version %d at %q", d.Version(), d.URI())
		}
		checkRows(t, d, 250)
		got, err := d.Take(ctx, []int64{249, 0, 120})
		if err != nil {
			t.Fatal(err)
		}
		defer got.Release()
		ids := got.Column(0).(*array.Int64)
		if got.NumRows() != 3 || ids.Value(0) != 249 || ids.Value(1) != 0 || ids.Value(2) != 120 {
			t.Fatalf("take: %v", ids)
		}
		old, err := OpenVersion(ctx, uri, 1)
		if err != nil {
			t.Fatal(err)
		}
		checkRows(t, old, 200)
		vs, err := d.Versions()
		if err != nil || len(vs) != 2 {
			t.Fatalf("versions %v, %v", vs, err)
		}
	})

	t.Run("commit latency", func(t *testing.T) {
		uri := "s3://" + srv.Bucket + "/latency/ds"
		w, err := Create(ctx, uri, testSchema, so)
		if err != nil {
			t.Fatal(err)
		}
		writeDataset(t, w, [2]int64{0, 10})
		const n = 10
		lat := make([]time.Duration, n)
		for i := range n {
			a, err := Append(ctx, uri, so)
			if err != nil {
				t.Fatal(err)
			}
			rec := testBatch(int64(10+i*10), 10)
			err = a.Write(rec)
			rec.Release()
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if _, err := a.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			lat[i] = time.Since(start)
		}
		slices.Sort(lat)
		t.Logf("Commit of a 10-row append (data file put, transaction, manifest, hint): min %v, median %v, max %v", lat[0], lat[n/2], lat[n-1])
		d, err := Open(ctx, uri, so)
		if err != nil {
			t.Fatal(err)
		}
		checkRows(t, d, 10+n*10)
	})

	t.Run("add columns", func(t *testing.T) {
		uri := "s3://" + srv.Bucket + "/add/ds"
		w, err := Create(ctx, uri, testSchema, so, WithMaxRowsPerFile(120))
		if err != nil {
			t.Fatal(err)
		}
		writeDataset(t, w, [2]int64{0, 300})
		r := addReader(300, 100)
		d, err := AddColumns(ctx, uri, r, so)
		r.Release()
		if err != nil {
			t.Fatal(err)
		}
		if d.Version() != 2 || d.NumFragments() != 3 || d.Schema().NumFields() != 7 {
			t.Fatalf("version %d, %d fragments, schema %v", d.Version(), d.NumFragments(), d.Schema())
		}
		got, err := d.Take(ctx, []int64{0, 150, 299})
		if err != nil {
			t.Fatal(err)
		}
		defer got.Release()
		for i, id := range []int64{0, 150, 299} {
			want := addBatch(id, 1)
			ok := array.SliceEqual(got.Column(5), int64(i), int64(i+1), want.Column(0), 0, 1) &&
				array.SliceEqual(got.Column(6), int64(i), int64(i+1), want.Column(1), 0, 1) &&
				got.Column(0).(*array.Int64).Value(i) == id
			want.Release()
			if !ok {
				t.Fatalf("row %d: new columns differ", id)
			}
		}
	})

	t.Run("concurrent appends", func(t *testing.T) {
		uri := "s3://" + srv.Bucket + "/race/ds"
		w, err := Create(ctx, uri, testSchema, so)
		if err != nil {
			t.Fatal(err)
		}
		writeDataset(t, w)
		const writers, rounds, rows = 3, 3, 40
		var wg sync.WaitGroup
		errs := make(chan error, writers*rounds)
		for g := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range rounds {
					a, err := Append(ctx, uri, so, WithMaxCommitRetries(writers*rounds))
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
		d, err := Open(ctx, uri, so)
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
				if id < 0 || id >= int64(len(seen)) || seen[id] {
					t.Fatalf("row %d out of range or twice", id)
				}
				seen[id] = true
			}
			rec.Release()
		}
		for id, ok := range seen {
			if !ok {
				t.Fatalf("row %d missing", id)
			}
		}
	})
}
