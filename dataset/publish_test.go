package dataset

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// gatedStore holds back the publishing of data files: the Close of a data
// file's writer waits until the test opens that file's gate (or fails it).
// It checks the commit protocol's invariant on every manifest put: each data
// file created so far is published, or was aborted.
type gatedStore struct {
	objectStore
	mu        sync.Mutex
	gates     []chan error    // per data file, in creation order
	closing   chan int        // the index of a data file whose Close is waiting
	published map[string]bool // data keys published
	aborted   map[string]bool
	keys      []string
	violation string
}

func newGatedStore(inner objectStore) *gatedStore {
	return &gatedStore{objectStore: inner, closing: make(chan int, 16), published: map[string]bool{}, aborted: map[string]bool{}}
}

// open lets data file i publish, or fail with err.
func (s *gatedStore) open(i int, err error) {
	s.gate(i) <- err
}

func (s *gatedStore) gate(i int) chan error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.gates) <= i {
		s.gates = append(s.gates, make(chan error, 1))
	}
	return s.gates[i]
}

func (s *gatedStore) Create(ctx context.Context, key string) (objectWriter, error) {
	ow, err := s.objectStore.Create(ctx, key)
	if err != nil || !strings.HasPrefix(key, dataDir+"/") {
		return ow, err
	}
	s.mu.Lock()
	i := len(s.keys)
	s.keys = append(s.keys, key)
	s.mu.Unlock()
	return &gatedWriter{objectWriter: ow, s: s, i: i, key: key}, nil
}

func (s *gatedStore) checkPublished(key string) {
	if !strings.HasPrefix(key, versionsDir+"/") {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range s.keys {
		if !s.published[k] && !s.aborted[k] && s.violation == "" {
			s.violation = "manifest " + key + " put while " + k + " was not published"
		}
	}
}

func (s *gatedStore) Put(ctx context.Context, key string, b []byte) error {
	s.checkPublished(key)
	return s.objectStore.Put(ctx, key, b)
}

func (s *gatedStore) PutIfNotExists(ctx context.Context, key string, b []byte) error {
	s.checkPublished(key)
	return s.objectStore.PutIfNotExists(ctx, key, b)
}

type gatedWriter struct {
	objectWriter
	s   *gatedStore
	i   int
	key string
}

func (w *gatedWriter) Close() error {
	w.s.closing <- w.i
	if err := <-w.s.gate(w.i); err != nil {
		w.objectWriter.Abort()
		w.s.mu.Lock()
		w.s.aborted[w.key] = true
		w.s.mu.Unlock()
		return err
	}
	err := w.objectWriter.Close()
	w.s.mu.Lock()
	w.s.published[w.key] = err == nil
	w.s.mu.Unlock()
	return err
}

func (w *gatedWriter) Abort() {
	w.objectWriter.Abort()
	w.s.mu.Lock()
	w.s.aborted[w.key] = true
	w.s.mu.Unlock()
}

// within runs f and fails the test if it has not returned after a minute:
// the call is expected to go on without waiting for a gate.
func within(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute):
		t.Fatalf("%s waited for a data file's publishing", what)
		return nil
	}
}

// TestWriterPublishesInBackground: at a file cut the writer goes on to the
// next file while the store takes the last bytes of the one cut (the last
// parts of an S3 upload), one file at a time; Commit waits until every
// file is in the store before it writes the manifest.
func TestWriterPublishesInBackground(t *testing.T) {
	ctx := context.Background()
	w, err := Create(ctx, filepath.Join(t.TempDir(), "ds"), testSchema, WithMaxRowsPerFile(100))
	if err != nil {
		t.Fatal(err)
	}
	st := newGatedStore(w.root.st)
	w.root.st = st
	write := func(first, n int64) error {
		rec := testBatch(first, n)
		defer rec.Release()
		return w.Write(rec)
	}
	// The first 100 rows fill file 0: Write returns with it publishing.
	if err := within(t, "the write that cut file 0", func() error { return write(0, 100) }); err != nil {
		t.Fatal(err)
	}
	if i := <-st.closing; i != 0 {
		t.Fatalf("file %d closing, want 0", i)
	}
	// The next rows go to file 1 while file 0 is still held back.
	if err := within(t, "a write to file 1", func() error { return write(100, 60) }); err != nil {
		t.Fatal(err)
	}
	// Cutting file 1 waits for file 0: open it once the cut is under way.
	cut := make(chan error, 1)
	go func() { cut <- write(160, 40) }()
	st.open(0, nil)
	if err := <-cut; err != nil {
		t.Fatal(err)
	}
	if i := <-st.closing; i != 1 {
		t.Fatalf("file %d closing, want 1", i)
	}
	if err := within(t, "a write to file 2", func() error { return write(200, 30) }); err != nil {
		t.Fatal(err)
	}
	// Commit cuts file 2 and waits for files 1 and 2.
	res := make(chan error, 1)
	var d *Dataset
	go func() {
		var err error
		d, err = w.Commit(ctx)
		res <- err
	}()
	select {
	case err := <-res:
		t.Fatalf("Commit returned (%v) while file 1 was not published", err)
	case <-time.After(50 * time.Millisecond):
	}
	st.open(1, nil)
	if i := <-st.closing; i != 2 {
		t.Fatalf("file %d closing, want 2", i)
	}
	select {
	case err := <-res:
		t.Fatalf("Commit returned (%v) while file 2 was not published", err)
	case <-time.After(50 * time.Millisecond):
	}
	st.open(2, nil)
	if err := <-res; err != nil {
		t.Fatal(err)
	}
	if st.violation != "" {
		t.Fatal(st.violation)
	}
	var got []uint64
	for _, f := range d.manifest().Fragments {
		got = append(got, f.PhysicalRows)
	}
	if len(got) != 3 || got[0] != 100 || got[1] != 100 || got[2] != 30 {
		t.Fatalf("fragments of %v rows, want [100 100 30]", got)
	}
	checkRows(t, d, 230)
}

// TestWriterPublishFailure: a data file that fails to publish after its cut
// fails the writer at its next call; nothing is committed, and Abort leaves
// no data file behind.
func TestWriterPublishFailure(t *testing.T) {
	ctx := context.Background()
	errStore := errors.New("store refused the upload")
	for _, next := range []string{"write", "commit"} {
		t.Run(next, func(t *testing.T) {
			uri := filepath.Join(t.TempDir(), "ds")
			w, err := Create(ctx, uri, testSchema, WithMaxRowsPerFile(100))
			if err != nil {
				t.Fatal(err)
			}
			st := newGatedStore(w.root.st)
			w.root.st = st
			rec := testBatch(0, 150)
			defer rec.Release()
			if err := within(t, "the write that cut file 0", func() error { return w.Write(rec) }); err != nil {
				t.Fatal(err)
			}
			<-st.closing
			st.open(0, errStore)
			st.open(1, nil)
			if next == "write" {
				more := testBatch(150, 100) // cuts file 1, which waits for file 0
				defer more.Release()
				err = w.Write(more)
			} else {
				_, err = w.Commit(ctx)
			}
			if !errors.Is(err, errStore) || !strings.Contains(err.Error(), "data file") {
				t.Fatalf("%s after a failed publish: %v, want the store's error with its file", next, err)
			}
			if _, err := w.Commit(ctx); !errors.Is(err, errStore) {
				t.Fatalf("Commit after the failure: %v", err)
			}
			if err := w.Abort(); err != nil {
				t.Fatal(err)
			}
			if _, err := Open(ctx, uri); err == nil {
				t.Fatal("a dataset was committed")
			}
			left, err := os.ReadDir(filepath.Join(uri, dataDir))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			if len(left) != 0 {
				t.Fatalf("Abort left %d data files", len(left))
			}
			if st.violation != "" {
				t.Fatal(st.violation)
			}
		})
	}
}
