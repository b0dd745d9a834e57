//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestModesAndPublication: a new file gets os.Create's mode, a replaced
// file keeps its bits; nothing is at the destination before Publish;
// PublishNew refuses an existing file; Abort leaves nothing.
func TestModesAndPublication(t *testing.T) {
	dir := t.TempDir()
	umask := syscall.Umask(0o022)
	syscall.Umask(umask)
	ref := filepath.Join(dir, "ref")
	rf, err := os.Create(ref)
	if err != nil {
		t.Fatal(err)
	}
	rf.Close()
	refInfo, _ := os.Stat(ref)

	dst := filepath.Join(dir, "a.lance")
	f, err := Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("one")
	if _, err := os.Stat(dst); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("destination visible before Publish: %v", err)
	}
	if err := f.Publish(); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(dst)
	if fi.Mode().Perm() != refInfo.Mode().Perm() {
		t.Errorf("new file mode %v, os.Create gives %v", fi.Mode().Perm(), refInfo.Mode().Perm())
	}

	os.Chmod(dst, 0o600)
	f, _ = Create(dst)
	f.WriteString("two")
	if err := f.Publish(); err != nil {
		t.Fatal(err)
	}
	fi, _ = os.Stat(dst)
	b, _ := os.ReadFile(dst)
	if fi.Mode().Perm() != 0o600 || string(b) != "two" {
		t.Errorf("replaced file: mode %v, %q; want 0600, \"two\"", fi.Mode().Perm(), b)
	}

	f, _ = Create(dst)
	f.WriteString("three")
	if err := f.PublishNew(); !errors.Is(err, ErrExists) {
		t.Errorf("PublishNew over a file: %v, want ErrExists", err)
	}
	f, _ = Create(filepath.Join(dir, "b.lance"))
	tmp := f.TempName()
	f.Abort()
	left, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) || len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	if b, _ := os.ReadFile(dst); string(b) != "two" {
		t.Errorf("destination %q after a refused PublishNew", b)
	}
}
