package writer

import "github.com/planarlance/planar/internal/atomicfile"

// SetSyncDir replaces the directory sync Create's Close runs after its
// rename, and returns the function that restores it.
func SetSyncDir(f func(dir string) error) (restore func()) {
	old := atomicfile.SyncDir
	atomicfile.SyncDir = f
	return func() { atomicfile.SyncDir = old }
}
