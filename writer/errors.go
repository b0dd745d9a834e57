package writer

import (
	"errors"

	"github.com/planarlance/planar/internal/format"
)

var (
	// ErrClosed is returned by calls on a closed writer.
	ErrClosed = errors.New("planar/writer: writer is closed")
	// ErrNilRecord is returned by WriteBatch(nil).
	ErrNilRecord = errors.New("planar/writer: nil record batch")
	// ErrSchemaMismatch is returned when a batch's schema differs from the
	// writer's. Nothing of that batch is written.
	ErrSchemaMismatch = errors.New("planar/writer: batch schema differs from writer schema")
	// ErrInvalidBatch is returned when a batch's arrays are inconsistent
	// (lengths, buffer sizes). Nothing of that batch is written.
	ErrInvalidBatch = errors.New("planar/writer: invalid record batch")
	// ErrUnsupportedType is returned by New for a field whose type planar
	// cannot write yet; the message names the field path and the type.
	ErrUnsupportedType = format.ErrUnsupportedType
	// ErrInvalidOption is returned by New for a bad option value.
	ErrInvalidOption = errors.New("planar/writer: invalid option")
	// ErrFailed is returned by every call after the destination failed.
	ErrFailed = errors.New("planar/writer: an earlier write failed")
)
