package writer

// SetSyncDir replaces the directory sync Create's Close runs after its
// rename, and returns the function that restores it.
func SetSyncDir(f func(dir string) error) (restore func()) {
	old := syncDir
	syncDir = f
	return func() { syncDir = old }
}
