package dataset

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/planarlance/planar/reader"
)

// localRoot resolves a dataset URI to a directory on local disk. Plain paths
// and file:// URIs are accepted; any other scheme is ErrUnsupportedScheme.
func localRoot(uri string) (string, error) {
	if uri == "" {
		return "", fmt.Errorf("empty dataset URI: %w", ErrInvalidOption)
	}
	i := strings.Index(uri, "://")
	if i < 0 {
		return filepath.Clean(uri), nil
	}
	scheme := strings.ToLower(uri[:i])
	if scheme != "file" {
		return "", fmt.Errorf("dataset %q: scheme %q: %w", uri, scheme, ErrUnsupportedScheme)
	}
	u, err := url.Parse(uri)
	if err != nil {
		return "", fmt.Errorf("dataset %q: %v: %w", uri, err, ErrInvalidOption)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("dataset %q: file URI with host %q: %w", uri, u.Host, ErrUnsupportedScheme)
	}
	if u.Path == "" {
		return "", fmt.Errorf("dataset %q: file URI without a path: %w", uri, ErrInvalidOption)
	}
	return filepath.Clean(filepath.FromSlash(u.Path)), nil
}

// location is where a dataset lives: its URI (a local directory for local
// datasets, as errors and Dataset.URI show it) and the object store under it.
type location struct {
	uri string
	st  objectStore
}

func (l *location) String() string { return l.uri }

// openLocation resolves a dataset URI: s3://bucket/prefix goes to S3 (see
// newS3Store for the configuration), plain paths and file:// URIs to local
// disk, anything else is ErrUnsupportedScheme.
func openLocation(uri string, o options) (*location, error) {
	if strings.HasPrefix(strings.ToLower(uri), "s3://") {
		st, err := newS3StoreFromEnv(uri, o.storageOpts)
		if err != nil {
			return nil, err
		}
		return &location{uri: strings.TrimRight(uri, "/"), st: st}, nil
	}
	root, err := localRoot(uri)
	if err != nil {
		return nil, err
	}
	return &location{uri: root, st: newLocalStore(root)}, nil
}

// isLocal reports whether the dataset is on local disk.
func (l *location) isLocal() bool {
	_, ok := l.st.(*localStore)
	return ok
}

// syncData makes new data files durable on local disk; object stores need
// nothing.
func (l *location) syncData() {
	if l.isLocal() {
		syncDir(filepath.Join(l.uri, dataDir))
	}
}

// dataKey is the store key of a data file.
func dataKey(name string) string { return dataDir + "/" + name }

// openDataFile opens a data file for reading: directly on local disk,
// through ranged gets otherwise.
func (l *location) openDataFile(ctx context.Context, name string) (*reader.File, error) {
	key := dataKey(name)
	if ls, ok := l.st.(*localStore); ok {
		p, err := ls.path(key)
		if err != nil {
			return nil, err
		}
		return reader.OpenPath(p)
	}
	size, err := l.st.Size(ctx, key)
	if err != nil {
		return nil, err
	}
	f, err := reader.Open(&objectReaderAt{ctx: ctx, store: l.st, key: key, size: size}, size)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return f, nil
}
