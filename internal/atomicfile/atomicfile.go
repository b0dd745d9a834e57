// Package atomicfile publishes a local file all at once: it is written under
// a temporary name beside its destination, synced, then moved into place
// and the directory synced, so that readers see the old file (or none) or
// the whole new one, never a part, and the new one survives a crash once
// published. Every planar package that writes a local file publishes it
// here, with one mode policy: the mode os.Create would give it (0666 less
// the umask for a new file; the permission bits of the file it replaces).
//
// A process that dies before publishing leaves its ".<name>.tmp-*" file
// behind (listings that skip dot files skip it); the destination is
// untouched.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
)

// ErrExists is returned by PublishNew when a file is already at the
// destination.
var ErrExists = fs.ErrExist

// File is a file being written for one destination.
type File struct {
	*os.File
	path, tmp string
}

// Create creates the temporary file for path, in path's directory (which
// must exist).
func Create(path string) (*File, error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	perm, keep := os.FileMode(0o666), false
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		perm, keep = fi.Mode().Perm(), true
	}
	for try := 0; ; try++ {
		name := filepath.Join(dir, "."+base+".tmp-"+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		if err != nil {
			return nil, err
		}
		if keep {
			// OpenFile applied the umask; a replaced file's bits are kept
			// as they are, as os.Create keeps them.
			if err := f.Chmod(perm); err != nil {
				f.Close()
				os.Remove(name)
				return nil, err
			}
		}
		return &File{File: f, path: path, tmp: name}, nil
	}
}

// TempName is the temporary file's path.
func (f *File) TempName() string { return f.tmp }

// Publish syncs and closes the file and moves it to its destination,
// replacing what is there, then syncs the directory. On error the temporary
// file is removed and the destination is untouched.
func (f *File) Publish() error { return f.publish(true, true) }

// PublishNew is Publish that fails with ErrExists when a file is already at
// the destination (a hard link, atomic; on file systems without hard links
// a rename after a check).
func (f *File) PublishNew() error { return f.publish(false, true) }

// PublishUnsynced is Publish without the directory sync: a caller that
// publishes many files in one directory syncs it once (SyncDir) before it
// relies on them.
func (f *File) PublishUnsynced() error { return f.publish(true, false) }

// PublishNewUnsynced is PublishNew without the directory sync.
func (f *File) PublishNewUnsynced() error { return f.publish(false, false) }

func (f *File) publish(replace, syncDir bool) error {
	err := f.File.Sync()
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = place(f.tmp, f.path, replace)
	}
	if err != nil {
		os.Remove(f.tmp)
		return err
	}
	if !syncDir {
		return nil
	}
	if err := SyncDir(filepath.Dir(f.path)); err != nil {
		return fmt.Errorf("%s is in place, but syncing its directory failed (it may not survive a crash): %w", f.path, err)
	}
	return nil
}

func place(tmp, path string, replace bool) error {
	if replace {
		return os.Rename(tmp, path)
	}
	if err := os.Link(tmp, path); err != nil {
		if _, serr := os.Lstat(path); serr == nil {
			return fmt.Errorf("%s: %w", path, ErrExists)
		}
		// No hard links on this file system: rename after the check.
		return os.Rename(tmp, path)
	}
	return os.Remove(tmp)
}

// Abort closes and removes the temporary file; the destination is
// untouched.
func (f *File) Abort() {
	f.File.Close()
	os.Remove(f.tmp)
}

// SyncDir flushes a directory's entries (a rename, a link) to stable
// storage. It is a variable so tests can observe it.
var SyncDir = func(dir string) error {
	if runtime.GOOS == "windows" {
		return nil // directories cannot be opened for sync; NTFS journals renames
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
