package reader

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNotLanceSaysWhatItIs: paths that are not Lance files are
// ErrNotLance (and ErrCorrupt), with a message naming what they are.
func TestNotLanceSaysWhatItIs(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{
		"parquet.lance": append(append([]byte("PAR1"), make([]byte, 60)...), []byte("PAR1")...),
		"arrow.lance":   append([]byte("ARROW1\x00\x00"), make([]byte, 60)...),
		"short.lance":   []byte("LANC"),
		"other.lance":   make([]byte, 100),
	}
	want := map[string]string{
		"parquet.lance": "a Parquet file, not a Lance file",
		"arrow.lance":   "an Arrow IPC file, not a Lance file",
		"short.lance":   "4 bytes, shorter than a Lance footer",
		"other.lance":   "no Lance footer",
		"":              "a directory, not a Lance file",
	}
	for name, b := range files {
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	for name, w := range want {
		_, err := OpenPath(filepath.Join(dir, name))
		if !errors.Is(err, ErrNotLance) || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), w) {
			t.Errorf("%q: %v, want ErrNotLance saying %q", name, err, w)
		}
		if strings.Count(err.Error(), "planar") != 0 && !strings.Contains(err.Error(), "planar convert") {
			t.Errorf("%q: %v: the sentinels' texts repeated", name, err)
		}
	}
}
