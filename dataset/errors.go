package dataset

import "errors"

var (
	// ErrConflict is wrapped when another writer committed a version that
	// this commit cannot be rebased over (or the retries ran out).
	ErrConflict = errors.New("planar/dataset: commit conflict")
	// ErrNotFound is wrapped when no dataset exists at the URI.
	ErrNotFound = errors.New("planar/dataset: dataset not found")
	// ErrNoFragment is wrapped when a version has no fragment of the
	// asked id.
	ErrNoFragment = errors.New("planar/dataset: no such fragment")
	// ErrNoVersion is wrapped when the asked version does not exist.
	ErrNoVersion = errors.New("planar/dataset: no such version")
	// ErrExists is wrapped when Create finds a dataset already there.
	ErrExists = errors.New("planar/dataset: dataset already exists")
	// ErrSchemaMismatch is wrapped when appended batches do not match the
	// dataset's schema, or a data file does not match it.
	ErrSchemaMismatch = errors.New("planar/dataset: schema mismatch")
	// ErrVersionMismatch is wrapped when an append asks for a data storage
	// version other than the dataset's.
	ErrVersionMismatch = errors.New("planar/dataset: data storage version mismatch")
	// ErrUnsupportedScheme is wrapped for URIs other than local paths,
	// file:// and s3:// URIs.
	ErrUnsupportedScheme = errors.New("planar/dataset: unsupported URI scheme")
	// ErrCorrupt is wrapped when a manifest or transaction file cannot be
	// decoded.
	ErrCorrupt = errors.New("planar/dataset: corrupt dataset file")
	// ErrUnsupported is wrapped for dataset features this package does not
	// read or write (storage 2.0 and legacy data files, data files in other
	// base paths, feature flags it does not know); the message names the
	// feature.
	ErrUnsupported = errors.New("planar/dataset: unsupported dataset feature")
	// ErrInvalidOption is wrapped for bad options or arguments.
	ErrInvalidOption = errors.New("planar/dataset: invalid option")
	// ErrClosed is wrapped when a Writer is used after Commit or Abort.
	ErrClosed = errors.New("planar/dataset: writer closed")
)

var (
	// ErrColumnExists is wrapped when AddColumns is asked for a column the
	// dataset already has.
	ErrColumnExists = errors.New("planar/dataset: column already exists")
	// ErrRowCount is wrapped when AddColumns gets more or fewer rows than
	// the dataset has.
	ErrRowCount = errors.New("planar/dataset: wrong row count")
)
