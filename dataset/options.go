package dataset

import (
	"fmt"

	"github.com/planarlance/planar/writer"
)

// Lance's defaults for cutting data files (pylance write_dataset).
const (
	DefaultMaxRowsPerFile  = 1 << 20 // 1,048,576 rows
	DefaultMaxBytesPerFile = 90 << 30
)

// Data storage versions: the Lance file version of a dataset's data files.
const (
	StorageVersion2_2 = "2.2" // Lance's stable default, as in pylance 14
	StorageVersion2_3 = "2.3" // planar's 2.3 page layout
)

type options struct {
	maxRows        int64
	maxBytes       int64
	storageVersion string // "" means: the dataset's, or 2.2 when creating
	writerOpts     []writer.Option
	maxRetries     int
	forOverwrite   bool // WriteFragments: fragments for CommitOverwrite
	storageOpts    map[string]string
	config         map[string]string // table config upserted by Create and Overwrite
	mixedVersions  bool              // Append/AddColumns may write another storage version
}

func defaultOptions() options {
	return options{maxRows: DefaultMaxRowsPerFile, maxBytes: DefaultMaxBytesPerFile, maxRetries: DefaultMaxCommitRetries}
}

// Option configures Create and Append.
type Option func(*options) error

// WithTableConfig sets keys of the table's config (the manifest's config
// map, pylance's LanceDataset.config) when Create or Overwrite commits, as
// pylance's update_config does; the other operations keep the config as it
// is. Keys under "lance.compaction." tune Lance's compaction of the table:
// CompactionBinaryCopy is the one that matters for tables planar wrote
// (FORMAT.md §8). An empty key is ErrInvalidOption.
func WithTableConfig(kv map[string]string) Option {
	return func(o *options) error {
		for k, v := range kv {
			if k == "" {
				return fmt.Errorf("table config key %q: %w", k, ErrInvalidOption)
			}
			if o.config == nil {
				o.config = map[string]string{}
			}
			o.config[k] = v
		}
		return nil
	}
}

// CompactionBinaryCopy is the table config with which pylance 14's
// compact_files copies pages as they are instead of decoding and
// re-encoding them (lance.compaction.compaction_mode=try_binary_copy): the
// null-run pages planar writes stay small (a 200k-row table with 1% of its
// 768-d vectors set: 6.4 MB copied in 0.04 s, against 634 MB re-encoded in
// 1.7 s). Lance copies only fragments with one data file holding every
// column and no deletions, and LanceDB 0.40's optimize() re-encodes
// whatever the config says.
var CompactionBinaryCopy = map[string]string{"lance.compaction.compaction_mode": "try_binary_copy"}

// WithMaxRowsPerFile caps the rows of one data file (and fragment).
func WithMaxRowsPerFile(n int64) Option {
	return func(o *options) error {
		if n <= 0 {
			return fmt.Errorf("max rows per file %d: %w", n, ErrInvalidOption)
		}
		o.maxRows = n
		return nil
	}
}

// WithMaxBytesPerFile starts a new data file once the bytes written to one
// have reached n. It is checked after each batch against what the file writer
// has written, so a file can exceed n by a batch plus the pages the writer
// still buffers (up to the page size per column, 8 MiB by default) and the
// pages it is still encoding (writer.WithPagesInFlight; with
// writer.WithConcurrency(1) none, and the cuts do not depend on the number
// of cores).
func WithMaxBytesPerFile(n int64) Option {
	return func(o *options) error {
		if n <= 0 {
			return fmt.Errorf("max bytes per file %d: %w", n, ErrInvalidOption)
		}
		o.maxBytes = n
		return nil
	}
}

// WithStorageVersion selects the data storage version, StorageVersion2_2 or
// StorageVersion2_3. Create records it in the dataset; Append and
// AddColumns fail with ErrVersionMismatch when it differs from the
// dataset's, unless WithMixedVersions is given too.
func WithStorageVersion(v string) Option {
	return func(o *options) error {
		if _, _, err := fileFormat(v); err != nil {
			return err
		}
		o.storageVersion = v
		return nil
	}
}

// WithMixedVersions lets Append and AddColumns write data files in the
// storage version WithStorageVersion names although the dataset's default
// differs (a 2.3 backfill into a 2.2 table, say). The commit sets Lance's
// mixed data-file versions feature (bit 8 of the reader and writer flags),
// as Lance does; pylance 14 then reads the table, and every reader needs to
// read each file's own version (LanceDB 0.40 reads no 2.3 file).
func WithMixedVersions() Option {
	return func(o *options) error {
		o.mixedVersions = true
		return nil
	}
}

// WithWriterOptions passes options to the writer of every data file (page
// size, column encodings, policy). The file format option is set by the
// storage version and cannot be overridden here.
func WithWriterOptions(opts ...writer.Option) Option {
	return func(o *options) error {
		o.writerOpts = append(o.writerOpts, opts...)
		return nil
	}
}

// WithMaxCommitRetries sets how many concurrent appends a commit rebases
// over before failing with ErrConflict.
func WithMaxCommitRetries(n int) Option {
	return func(o *options) error {
		if n < 0 {
			return fmt.Errorf("max commit retries %d: %w", n, ErrInvalidOption)
		}
		o.maxRetries = n
		return nil
	}
}

// fileFormat maps a storage version to the writer's format and the data
// file version recorded in DataFile.
func fileFormat(v string) (writer.Format, [2]uint32, error) {
	switch v {
	case StorageVersion2_2:
		return writer.Format2_2, [2]uint32{2, 2}, nil
	case StorageVersion2_3:
		return writer.Format2_3, [2]uint32{2, 3}, nil
	}
	return 0, [2]uint32{}, fmt.Errorf("data storage version %q (want %q or %q): %w", v, StorageVersion2_2, StorageVersion2_3, ErrInvalidOption)
}

// ForOverwrite makes WriteFragments write fragments for CommitOverwrite, as
// pylance's write_fragments(mode="overwrite") does: the schema is the new
// one, its field ids assigned as for a new dataset, whatever dataset is at
// the URI. Other functions ignore it.
func ForOverwrite() Option {
	return func(o *options) error {
		o.forOverwrite = true
		return nil
	}
}

// WithStorageOptions configures object storage with the keys pylance's
// storage_options take: aws_access_key_id, aws_secret_access_key,
// aws_session_token, aws_endpoint, aws_region, allow_http. They override the
// AWS_* environment variables; unknown keys are ErrInvalidOption when an
// s3:// dataset is opened. Local datasets ignore them.
func WithStorageOptions(opts map[string]string) Option {
	return func(o *options) error {
		o.storageOpts = make(map[string]string, len(opts))
		for k, v := range opts {
			o.storageOpts[k] = v
		}
		return nil
	}
}
