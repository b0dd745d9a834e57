package reader

import (
	"errors"
	"fmt"
	"io"

	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// ioError marks an error of the caller's io.ReaderAt other than a short
// read: it says nothing about the file's bytes and is returned as is.
type ioError struct{ err error }

func (e ioError) Error() string { return e.err.Error() }
func (e ioError) Unwrap() error { return e.err }

// classify makes err wrap the reader's documented classes: ErrCorrupt for
// anything caused by the file's bytes (the decoding packages' corrupt-data
// errors, inconsistent levels, short reads, unexpected failures while
// assembling), ErrUnsupported for well-formed content planar cannot decode
// (unsupported encodings, types and versions). Errors of the caller's
// io.ReaderAt and ErrOutOfRange (a request outside the file) are kept as
// they are.
func classify(err error) error {
	var ioe ioError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrCorrupt) || errors.Is(err, ErrUnsupported):
		return err
	case errors.Is(err, ErrOutOfRange):
		return err
	case errors.As(err, &ioe):
		return err
	case errors.Is(err, values.ErrUnsupported), errors.Is(err, format.ErrUnsupportedType), errors.Is(err, format.ErrUnsupportedVersion):
		return fmt.Errorf("%w (%w)", err, ErrUnsupported)
	}
	// values.ErrCorrupt, structural.ErrCorruptLevels,
	// structural.ErrCorruptSparse, format.ErrNotLance, io.EOF and anything
	// unforeseen: the bytes are not what they claim.
	_, _ = structural.ErrCorruptLevels, structural.ErrCorruptSparse
	return fmt.Errorf("%w (%w)", err, ErrCorrupt)
}

// shortRead turns a ReadAt failure into a reader error: a read past the end
// of the data is corruption (the file is shorter than its metadata says).
func shortRead(off, n uint64, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("reading [%d, +%d): the data ends early (%v): %w", off, n, err, ErrCorrupt)
	}
	return ioError{fmt.Errorf("reading [%d, +%d): %w", off, n, err)}
}
