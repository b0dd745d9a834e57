package dataset

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
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
