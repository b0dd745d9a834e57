package relayout

import (
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/file2pb"
	"github.com/planarlance/planar/reader"
)

// container is the raw metadata of a Lance v2 file: what a conversion
// rewrites. reader.Open has validated it before it is parsed here, so the
// checks below only guard the assumptions this package adds (every buffer
// lies in the data region before the column metadata).
type container struct {
	footer  format.Footer
	globals []format.BufferRange
	// metaRaw are the serialized ColumnMetadata messages as stored.
	metaRaw [][]byte
	meta    []*file2pb.ColumnMetadata
}

// readRange reads [off, off+n) of src; a short read is corruption.
func readRange(src io.ReaderAt, size int64, off, n uint64) ([]byte, error) {
	if off > uint64(size) || n > uint64(size)-off {
		return nil, fmt.Errorf("range [%d, +%d) outside file of %d bytes: %w", off, n, size, reader.ErrCorrupt)
	}
	b := make([]byte, n)
	if k, err := src.ReadAt(b, int64(off)); err != nil && !(errors.Is(err, io.EOF) && uint64(k) == n) {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("reading [%d, +%d): the data ends early: %w", off, n, reader.ErrCorrupt)
		}
		return nil, fmt.Errorf("reading [%d, +%d): %w", off, n, err)
	}
	return b, nil
}

// parseContainer reads the footer, the offset tables and every column's
// metadata of a file reader.Open accepted.
func parseContainer(src io.ReaderAt, size int64, numColumns int) (*container, error) {
	t, err := format.ParseTail(uint64(size), func(off, n uint64) ([]byte, error) { return readRange(src, size, off, n) })
	if err != nil {
		return nil, err
	}
	ft := t.Footer
	if numColumns >= 0 && int(ft.NumColumns) != numColumns {
		return nil, fmt.Errorf("footer has %d columns, schema %d: %w", ft.NumColumns, numColumns, reader.ErrCorrupt)
	}
	c := &container{footer: ft, globals: t.Globals}
	cmo := t.Columns
	start := ft.ColumnMetaStart
	for i, r := range c.globals {
		if r.Position+r.Size > start {
			return nil, fmt.Errorf("global buffer %d [%d, +%d) lies after the data region (column metadata at %d): %w",
				i, r.Position, r.Size, start, reader.ErrUnsupported)
		}
	}
	for i, r := range cmo {
		b, err := readRange(src, size, r.Position, r.Size)
		if err != nil {
			return nil, err
		}
		cm := &file2pb.ColumnMetadata{}
		if err := proto.Unmarshal(b, cm); err != nil {
			return nil, fmt.Errorf("column %d metadata: %v: %w", i, err, reader.ErrCorrupt)
		}
		for k, off := range cm.BufferOffsets {
			if k >= len(cm.BufferSizes) || off+cm.BufferSizes[k] > start {
				return nil, fmt.Errorf("column %d buffer %d lies outside the data region: %w", i, k, reader.ErrUnsupported)
			}
		}
		for pi, p := range cm.Pages {
			for k, off := range p.BufferOffsets {
				if k >= len(p.BufferSizes) || off+p.BufferSizes[k] > start {
					return nil, fmt.Errorf("column %d page %d buffer %d lies outside the data region: %w", i, pi, k, reader.ErrUnsupported)
				}
			}
		}
		c.metaRaw = append(c.metaRaw, b)
		c.meta = append(c.meta, cm)
	}
	return c, nil
}

// writeTail writes the column metadata, both offset tables and the footer
// at the output's position; meta[i] are column i's serialized bytes.
func writeTail(w *countingWriter, meta [][]byte, globals []format.BufferRange, major, minor uint16) error {
	return w.write(format.AppendTail(nil, w.n, meta, globals, major, minor))
}

// countingWriter tracks the output position.
type countingWriter struct {
	w io.Writer
	n uint64
}

func (c *countingWriter) write(b []byte) error {
	k, err := c.w.Write(b)
	c.n += uint64(k)
	if err == nil && k != len(b) {
		err = io.ErrShortWrite
	}
	return err
}

var padding = func() (p [format.Alignment]byte) {
	for i := range p {
		p[i] = format.PadByte
	}
	return p
}()

// pad moves the position to the next 64-byte boundary.
func (c *countingWriter) pad() error {
	if k := format.PadLen(c.n, format.Alignment); k > 0 {
		return c.write(padding[:k])
	}
	return nil
}
