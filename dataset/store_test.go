package dataset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"
)

// testObjectStore checks the objectStore contract the commit protocol relies
// on. It is run against every implementation.
func testObjectStore(t *testing.T, s objectStore) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	big := make([]byte, 1<<20+17)
	for i := range big {
		big[i] = byte(i * 7)
	}
	objs := map[string][]byte{
		"data/a.lance":         big,
		"data/b.lance":         []byte("b"),
		"_versions/1.manifest": {},
		"_versions/2.manifest": []byte("two"),
		"datax/c":              []byte("c"),
	}
	for k, v := range objs {
		if err := s.Put(ctx, k, v); err != nil {
			t.Fatalf("put %s: %v", k, err)
		}
	}
	for k, v := range objs {
		got, err := s.Get(ctx, k)
		if err != nil || !bytes.Equal(got, v) {
			t.Fatalf("get %s: %d bytes, %v; want %d bytes", k, len(got), err, len(v))
		}
		n, err := s.Size(ctx, k)
		if err != nil || n != int64(len(v)) {
			t.Fatalf("size %s: %d, %v; want %d", k, n, err, len(v))
		}
	}

	t.Run("list", func(t *testing.T) {
		tests := []struct {
			prefix string
			want   []string
		}{
			{"data/", []string{"data/a.lance", "data/b.lance"}},
			{"data", []string{"data/a.lance", "data/b.lance", "datax/c"}},
			{"_versions/", []string{"_versions/1.manifest", "_versions/2.manifest"}},
			{"_versions/2", []string{"_versions/2.manifest"}},
			{"nothing/", nil},
		}
		for _, tc := range tests {
			got, err := s.List(ctx, tc.prefix)
			if err != nil {
				t.Fatalf("list %q: %v", tc.prefix, err)
			}
			var keys []string
			for _, o := range got {
				keys = append(keys, o.Key)
				if o.Size != int64(len(objs[o.Key])) {
					t.Errorf("list %q: %s size %d, want %d", tc.prefix, o.Key, o.Size, len(objs[o.Key]))
				}
			}
			if fmt.Sprint(keys) != fmt.Sprint(tc.want) {
				t.Errorf("list %q = %v, want %v", tc.prefix, keys, tc.want)
			}
		}
	})

	t.Run("ranges", func(t *testing.T) {
		r := &objectReaderAt{ctx: ctx, store: s, key: "data/a.lance", size: int64(len(big))}
		tests := []struct {
			off, n  int
			wantN   int
			wantEOF bool
		}{
			{0, 10, 10, false},
			{1000, 70000, 70000, false},
			{len(big) - 5, 5, 5, false},
			{len(big) - 5, 10, 5, true},
			{len(big), 1, 0, true},
		}
		for _, tc := range tests {
			p := make([]byte, tc.n)
			n, err := r.ReadAt(p, int64(tc.off))
			if n != tc.wantN || (err == io.EOF) != tc.wantEOF || (err != nil && err != io.EOF) {
				t.Fatalf("ReadAt(%d, %d) = %d, %v; want %d, eof %v", tc.n, tc.off, n, err, tc.wantN, tc.wantEOF)
			}
			if !bytes.Equal(p[:n], big[tc.off:tc.off+n]) {
				t.Fatalf("ReadAt(%d, %d): wrong bytes", tc.n, tc.off)
			}
		}
		if err := s.GetRange(ctx, "data/b.lance", 0, make([]byte, 2)); err == nil {
			t.Fatal("GetRange past the end succeeded")
		}
	})

	t.Run("missing", func(t *testing.T) {
		if _, err := s.Get(ctx, "data/none"); !errors.Is(err, ErrObjectNotFound) {
			t.Errorf("get missing: %v, want ErrObjectNotFound", err)
		}
		if _, err := s.Size(ctx, "data/none"); !errors.Is(err, ErrObjectNotFound) {
			t.Errorf("size missing: %v, want ErrObjectNotFound", err)
		}
		if err := s.GetRange(ctx, "data/none", 0, make([]byte, 1)); !errors.Is(err, ErrObjectNotFound) {
			t.Errorf("range missing: %v, want ErrObjectNotFound", err)
		}
		if err := s.Delete(ctx, "data/none"); err != nil {
			t.Errorf("delete missing: %v", err)
		}
	})

	t.Run("bad keys", func(t *testing.T) {
		for _, k := range []string{"", "/abs", "a/../b", "a//b", "a\\b", ".."} {
			if err := s.Put(ctx, k, nil); !errors.Is(err, ErrInvalidOption) {
				t.Errorf("put %q: %v, want ErrInvalidOption", k, err)
			}
		}
	})

	t.Run("put if not exists", func(t *testing.T) {
		if err := s.PutIfNotExists(ctx, "_versions/2.manifest", []byte("other")); !errors.Is(err, ErrObjectExists) {
			t.Fatalf("conditional put on existing key: %v, want ErrObjectExists", err)
		}
		if got, _ := s.Get(ctx, "_versions/2.manifest"); string(got) != "two" {
			t.Fatalf("existing object changed to %q", got)
		}
		// Racing writers on one key: exactly one wins and its bytes stay.
		const writers = 8
		var wg sync.WaitGroup
		errs := make([]error, writers)
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = s.PutIfNotExists(ctx, "_versions/3.manifest", []byte{byte(i)})
			}()
		}
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil:
				if winner >= 0 {
					t.Fatalf("writers %d and %d both won", winner, i)
				}
				winner = i
			case !errors.Is(err, ErrObjectExists):
				t.Fatalf("writer %d: %v", i, err)
			}
		}
		if winner < 0 {
			t.Fatal("no writer won")
		}
		if got, _ := s.Get(ctx, "_versions/3.manifest"); !bytes.Equal(got, []byte{byte(winner)}) {
			t.Fatalf("object holds %v, winner wrote %d", got, winner)
		}
	})

	t.Run("create", func(t *testing.T) {
		// Sizes around the S3 part size: one PutObject, an exact part, and
		// a multipart upload with a short last part, written in odd chunks.
		for _, n := range []int{0, 100, s3PartSize, 2*s3PartSize + 12345} {
			data := make([]byte, n)
			for i := range data {
				data[i] = byte(i*31 + n)
			}
			key := fmt.Sprintf("data/create-%d.lance", n)
			w, err := s.Create(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			for off := 0; off < n; {
				c := min(n-off, 1<<20+3)
				if _, err := w.Write(data[off : off+c]); err != nil {
					t.Fatalf("%s: write: %v", key, err)
				}
				off += c
			}
			if _, err := s.Size(ctx, key); !errors.Is(err, ErrObjectNotFound) {
				t.Fatalf("%s visible before Close: %v", key, err)
			}
			if err := w.Close(); err != nil {
				t.Fatalf("%s: close: %v", key, err)
			}
			if _, err := w.Write([]byte("x")); !errors.Is(err, ErrClosed) {
				t.Fatalf("%s: write after close: %v", key, err)
			}
			w.Abort() // after Close: leaves the object alone
			got := make([]byte, n)
			if sz, err := s.Size(ctx, key); err != nil || sz != int64(n) {
				t.Fatalf("%s: size %d, %v; want %d", key, sz, err, n)
			}
			if err := s.GetRange(ctx, key, 0, got); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%s: read back %v, equal %v", key, err, bytes.Equal(got, data))
			}
			if err := s.Delete(ctx, key); err != nil {
				t.Fatal(err)
			}
		}
		// An aborted object, small or multipart, never appears.
		for _, n := range []int{10, s3PartSize + 1} {
			key := fmt.Sprintf("data/aborted-%d.lance", n)
			w, err := s.Create(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(make([]byte, n)); err != nil {
				t.Fatal(err)
			}
			w.Abort()
			if _, err := s.Size(ctx, key); !errors.Is(err, ErrObjectNotFound) {
				t.Fatalf("%s after Abort: %v", key, err)
			}
		}
		got, err := s.List(ctx, "data/")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range got {
			if o.Key != "data/a.lance" && o.Key != "data/b.lance" {
				t.Fatalf("left behind: %s", o.Key)
			}
		}
	})

	t.Run("delete", func(t *testing.T) {
		if err := s.Delete(ctx, "data/b.lance"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "data/b.lance"); !errors.Is(err, ErrObjectNotFound) {
			t.Fatalf("get deleted: %v", err)
		}
		got, err := s.List(ctx, "data/")
		if err != nil || len(got) != 1 || got[0].Key != "data/a.lance" {
			t.Fatalf("list after delete: %v, %v", got, err)
		}
	})
}

func TestDatasetStoreLocal(t *testing.T) {
	testObjectStore(t, newLocalStore(t.TempDir()))
}
