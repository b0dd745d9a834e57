package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/planarlance/planar/internal/atomicfile"
)

// ErrObjectExists is wrapped by objectStore.PutIfNotExists when the key is
// already taken.
var ErrObjectExists = errors.New("planar/dataset: object already exists")

// ErrObjectNotFound is wrapped by objectStore reads of a key that does not
// exist.
var ErrObjectNotFound = errors.New("planar/dataset: object not found")

// objectInfo is one listed object.
type objectInfo struct {
	Key  string // relative to the store root, '/'-separated
	Size int64
}

// objectStore is the storage a dataset lives on: a flat key space under one
// root, keys '/'-separated and relative to that root. Implementations are
// safe for concurrent use.
type objectStore interface {
	// List returns the objects whose keys start with prefix, sorted by key.
	List(ctx context.Context, prefix string) ([]objectInfo, error)
	// Get returns the whole object (at most maxManifestBytes; larger
	// objects are read with GetRange).
	Get(ctx context.Context, key string) ([]byte, error)
	// GetRange reads len(p) bytes at off into p.
	GetRange(ctx context.Context, key string, off int64, p []byte) error
	// Size returns the object's size.
	Size(ctx context.Context, key string) (int64, error)
	// Put writes the object, replacing any previous one.
	Put(ctx context.Context, key string, b []byte) error
	// PutIfNotExists writes the object only if the key is free; otherwise it
	// returns an error wrapping ErrObjectExists and leaves the object alone.
	PutIfNotExists(ctx context.Context, key string, b []byte) error
	// Delete removes the object; deleting a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// Create streams a new object under key (replacing any previous one
	// once closed); large objects are written without holding them whole.
	Create(ctx context.Context, key string) (objectWriter, error)
}

// checkKey rejects keys that could leave the store root.
func checkKey(key string) error {
	if key == "" || strings.HasPrefix(key, "/") || strings.Contains(key, "\\") {
		return fmt.Errorf("object key %q: %w", key, ErrInvalidOption)
	}
	for _, part := range strings.Split(key, "/") {
		if part == "" || part == "." || part == ".." {
			return fmt.Errorf("object key %q: %w", key, ErrInvalidOption)
		}
	}
	return nil
}

// localStore is an objectStore on a local directory. PutIfNotExists writes a
// temporary file and hard-links it into place, so a reader never sees a
// partial object and exactly one of several racing writers wins.
type localStore struct {
	root string
}

func newLocalStore(root string) *localStore { return &localStore{root: root} }

func (s *localStore) path(key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	return filepath.Join(s.root, filepath.FromSlash(key)), nil
}

func notFound(err error, key string) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w: %w", key, err, ErrObjectNotFound)
	}
	return fmt.Errorf("%s: %w", key, err)
}

func (s *localStore) List(ctx context.Context, prefix string) ([]objectInfo, error) {
	// Walk the deepest directory the prefix names, then filter by prefix.
	dir := ""
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		dir = prefix[:i]
	}
	start := s.root
	if dir != "" {
		if err := checkKey(dir); err != nil {
			return nil, err
		}
		start = filepath.Join(s.root, filepath.FromSlash(dir))
	}
	var out []objectInfo
	err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(s.root, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) || strings.HasPrefix(path.Base(key), ".") {
			return nil // temporary files start with '.'
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		out = append(out, objectInfo{Key: key, Size: info.Size()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %q: %w", prefix, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

func (s *localStore) Get(ctx context.Context, key string) ([]byte, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(p)
	if err != nil {
		return nil, notFound(err, key)
	}
	if st.Size() > maxManifestBytes {
		return nil, fmt.Errorf("get %s: %d bytes: %w", key, st.Size(), ErrCorrupt)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, notFound(err, key)
	}
	return b, nil
}

func (s *localStore) GetRange(ctx context.Context, key string, off int64, p []byte) error {
	fp, err := s.path(key)
	if err != nil {
		return err
	}
	if off < 0 {
		return fmt.Errorf("%s: negative offset %d: %w", key, off, ErrInvalidOption)
	}
	f, err := os.Open(fp)
	if err != nil {
		return notFound(err, key)
	}
	defer f.Close()
	if _, err := f.ReadAt(p, off); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return fmt.Errorf("%s: read %d bytes at %d: %w", key, len(p), off, err)
	}
	return nil
}

func (s *localStore) Size(ctx context.Context, key string) (int64, error) {
	p, err := s.path(key)
	if err != nil {
		return 0, err
	}
	st, err := os.Stat(p)
	if err != nil {
		return 0, notFound(err, key)
	}
	return st.Size(), nil
}

// Put writes the object through Create (a temporary file renamed into
// place) and syncs the directory.
func (s *localStore) Put(ctx context.Context, key string, b []byte) error {
	w, err := s.Create(ctx, key)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		w.Abort()
		return fmt.Errorf("put %s: %w", key, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	p, _ := s.path(key) // checked by Create
	syncDir(filepath.Dir(p))
	return nil
}

func (s *localStore) PutIfNotExists(ctx context.Context, key string, b []byte) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	f, err := atomicfile.Create(p)
	if err != nil {
		return fmt.Errorf("put %s: %w", key, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Abort()
		return fmt.Errorf("put %s: %w", key, err)
	}
	if err := f.PublishNewUnsynced(); err != nil {
		if errors.Is(err, atomicfile.ErrExists) {
			return fmt.Errorf("put %s: %w", key, ErrObjectExists)
		}
		return fmt.Errorf("put %s: %w", key, err)
	}
	// In place: a failed directory sync must not report the put failed.
	syncDir(filepath.Dir(p))
	return nil
}

func (s *localStore) Delete(ctx context.Context, key string) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

// objectReaderAt reads one object through ranged gets; it implements
// io.ReaderAt for the file reader.
type objectReaderAt struct {
	ctx   context.Context
	store objectStore
	key   string
	size  int64
}

func (r *objectReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: negative offset %d: %w", r.key, off, ErrInvalidOption)
	}
	if off >= r.size {
		return 0, io.EOF
	}
	n := len(p)
	var eof error
	if rem := r.size - off; int64(n) > rem {
		n = int(rem)
		eof = io.EOF
	}
	if n == 0 {
		return 0, eof
	}
	if err := r.store.GetRange(r.ctx, r.key, off, p[:n]); err != nil {
		return 0, err
	}
	return n, eof
}
