package relayout

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/reader"
)

// When pages are re-encoded the data region is rebuilt rather than copied
// whole: every live buffer (page buffers of the pages kept or re-expressed,
// column buffers, global buffers with the schema) is copied, byte for byte
// and in its original order, 64-byte aligned, and the buffers of the pages
// that replace a re-encoded page take the place of its old ones. The
// re-encoded pages' old bytes are dropped, so the output is no larger than
// its contents; the copied buffers move, which is why a conversion without
// re-encoding copies the region whole instead.

// reloc maps a buffer's old position and size to its new position.
type reloc map[[2]uint64]uint64

func (r reloc) at(pos, size uint64) uint64 { return r[[2]uint64{pos, size}] }

// item is one piece of the rebuilt data region, in old position order.
type item struct {
	pos, size uint64
	fresh     []*freshPage // non-nil: write these pages' buffers here
}

// writeCompact writes the rebuilt data region to w (at position 0) and
// returns where every live buffer went.
func writeCompact(src io.ReaderAt, c *container, plans []*pagePlan, fresh []*freshPage, w *countingWriter) (reloc, error) {
	var items []item
	byPage := map[[2]int][]*freshPage{}
	for _, fp := range fresh {
		k := [2]int{fp.col, fp.srcPage}
		byPage[k] = append(byPage[k], fp)
	}
	var tail []*freshPage // re-encoded pages whose old page had no bytes
	pi := 0
	for col, cm := range c.meta {
		for k, off := range cm.BufferOffsets {
			items = append(items, item{pos: off, size: cm.BufferSizes[k]})
		}
		for j, pg := range cm.Pages {
			p := plans[pi]
			pi++
			if p.action != Reencoded {
				for k, off := range pg.BufferOffsets {
					items = append(items, item{pos: off, size: pg.BufferSizes[k]})
				}
				continue
			}
			fps := byPage[[2]int{col, j}]
			anchor := false
			for k, off := range pg.BufferOffsets {
				if pg.BufferSizes[k] > 0 {
					items = append(items, item{pos: off, fresh: fps})
					anchor = true
					break
				}
			}
			if !anchor {
				tail = append(tail, fps...)
			}
		}
	}
	for _, g := range c.globals {
		items = append(items, item{pos: g.Position, size: g.Size})
	}
	// Old position order; at one position, empty buffers and new pages
	// before the buffer that starts there.
	slices.SortStableFunc(items, func(a, b item) int {
		if d := cmp.Compare(a.pos, b.pos); d != 0 {
			return d
		}
		return cmp.Compare(a.size, b.size)
	})
	r := reloc{}
	buf := make([]byte, 64<<10)
	for _, it := range items {
		if it.fresh != nil {
			if err := writeFresh(w, it.fresh); err != nil {
				return nil, err
			}
			continue
		}
		key := [2]uint64{it.pos, it.size}
		if _, done := r[key]; done {
			continue
		}
		if err := w.pad(); err != nil {
			return nil, err
		}
		r[key] = w.n
		if it.size == 0 {
			continue
		}
		if err := copyRange(src, it.pos, it.size, w, buf); err != nil {
			return nil, err
		}
	}
	if err := writeFresh(w, tail); err != nil {
		return nil, err
	}
	return r, nil
}

// writeFresh writes new pages' buffers, aligned, and records their
// positions in the pages.
func writeFresh(w *countingWriter, fps []*freshPage) error {
	for _, fp := range fps {
		for k, b := range fp.buffers {
			if err := w.pad(); err != nil {
				return err
			}
			fp.page.BufferOffsets[k] = w.n
			if err := w.write(b); err != nil {
				return err
			}
		}
	}
	return nil
}

// copyRange copies [pos, pos+size) of src to w through buf.
func copyRange(src io.ReaderAt, pos, size uint64, w *countingWriter, buf []byte) error {
	for size > 0 {
		n := min(size, uint64(len(buf)))
		if k, err := src.ReadAt(buf[:n], int64(pos)); uint64(k) != n {
			if err == nil || errors.Is(err, io.EOF) {
				return fmt.Errorf("reading [%d, +%d): the data ends early: %w", pos, n, reader.ErrCorrupt)
			}
			return err
		}
		if err := w.write(buf[:n]); err != nil {
			return err
		}
		pos += n
		size -= n
	}
	return nil
}

// relocated returns the global buffer table after a rebuild.
func (r reloc) globals(gs []format.BufferRange) []format.BufferRange {
	out := make([]format.BufferRange, len(gs))
	for i, g := range gs {
		out[i] = format.BufferRange{Position: r.at(g.Position, g.Size), Size: g.Size}
	}
	return out
}

// offsets relocates a buffer table's positions (nil r: unchanged).
func (r reloc) offsets(pos, sizes []uint64) []uint64 {
	if r == nil {
		return pos
	}
	out := make([]uint64, len(pos))
	for i, p := range pos {
		out[i] = r.at(p, sizes[i])
	}
	return out
}
