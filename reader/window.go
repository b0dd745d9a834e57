package reader

import (
	"fmt"

	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// Pages whose rows are not backed by stored values (dense constant and
// no-values pages: a 200-byte file can claim 2^31 rows of them) are never
// materialized whole: a read decodes only the rows it asks for.

// unbackedAllowance is how many values (levels, slots, items) a page may
// claim beyond what its stored bytes can hold (backedPerByte per byte): the
// reader allocates by such counts only within that bound, so a small file
// cannot make it allocate without limit.
const (
	unbackedAllowance = 1 << 22
	backedPerByte     = 1024
)

// backed reports whether count values can come from payload bytes.
func backed(count uint64, payload uint64) bool {
	return count <= unbackedAllowance || payload < (1<<53)/backedPerByte && count-unbackedAllowance <= backedPerByte*payload
}

// maxWindowLevels bounds the levels one read of such a page materializes
// (a single row may still claim more: its data is refused, not allocated).
const maxWindowLevels = 1 << 27

// levelStream is a decoded level stream: the levels themselves, or (for
// run-length encoded levels) their runs.
type levelStream struct {
	vals []uint16
	lens []uint32 // run lengths; nil when vals are the levels
	n    uint64   // number of levels
}

func (l *levelStream) present() bool { return l != nil }

// each calls fn for every run of levels inside [a, b) (value, run start,
// run length), in order.
func (l *levelStream) each(a, b uint64, fn func(v uint16, at, k uint64) bool) {
	if l.lens == nil {
		for i := a; i < b; i++ {
			if !fn(l.vals[i], i, 1) {
				return
			}
		}
		return
	}
	var at uint64
	for r, k := range l.lens {
		s, e := at, at+uint64(k)
		at = e
		if e <= a {
			continue
		}
		if s >= b {
			return
		}
		s, e = max(s, a), min(e, b)
		if !fn(l.vals[r], s, e-s) {
			return
		}
	}
}

// extract materializes levels [a, b).
func (l *levelStream) extract(a, b uint64) []uint16 {
	out := make([]uint16, 0, b-a)
	l.each(a, b, func(v uint16, _, k uint64) bool {
		for range k {
			out = append(out, v)
		}
		return true
	})
	return out
}

// rowStarts returns the level index of the start of every row in rows (an
// increasing list of row numbers; row == total rows maps to n) and the total
// number of rows (levels equal to maxRep).
func (l *levelStream) rowStarts(maxRep uint16, rows []uint64) ([]uint64, uint64) {
	out := make([]uint64, len(rows))
	k, seen := 0, uint64(0)
	l.each(0, l.n, func(v uint16, at, n uint64) bool {
		if v != maxRep {
			return true
		}
		for k < len(rows) && rows[k] < seen+n {
			out[k] = at + (rows[k] - seen)
			k++
		}
		seen += n
		return true
	})
	for ; k < len(rows); k++ {
		out[k] = l.n
	}
	return out, seen
}

// decodeLevelStream decodes one level buffer of a constant page: raw u16
// when enc is nil, run-length encoded levels as runs, anything else in full
// (its size then bounded by its own payload).
func decodeLevelStream(enc *enc21pb.CompressiveEncoding, b []byte, cnt uint64) (*levelStream, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if enc == nil {
		if len(b)%2 != 0 {
			return nil, fmt.Errorf("raw levels of %d bytes: %w", len(b), ErrCorrupt)
		}
		lv, err := values.DecodeLevels(values.FlatEncoding(16), b, len(b)/2, nil)
		return &levelStream{vals: lv, n: uint64(len(lv))}, err
	}
	if cnt > MaxPageRows*4 {
		return nil, fmt.Errorf("%d levels: %w", cnt, ErrCorrupt)
	}
	vals, lens, ok, err := values.DecodeLevelRuns(enc, b, int(cnt))
	if err != nil {
		return nil, err
	}
	if ok {
		return &levelStream{vals: vals, lens: lens, n: cnt}, nil
	}
	if !backed(cnt, uint64(len(b))) {
		return nil, fmt.Errorf("%d levels from %d bytes of %s: %w", cnt, len(b), values.EncodingName(enc), ErrCorrupt)
	}
	lv, err := values.DecodeLevels(enc, b, int(cnt), nil)
	return &levelStream{vals: lv, n: uint64(len(lv))}, err
}

// decodeConstantWindow decodes elements [a, b) of a dense constant or
// no-values page of rows elements.
func decodeConstantWindow(c *enc21pb.ConstantLayout, bufs [][]byte, rows, a, b uint64) (*pageData, error) {
	pd := &pageData{layers: c.Layers}
	levels := bufs
	switch len(bufs) {
	case 1, 3:
		// Lance 2.2 writes scalars that do not fit the 32-byte inline value
		// (strings, binaries, wide fixed-size binaries) into a leading value
		// buffer; the levels, if any, follow.
		if c.InlineValue != nil {
			return nil, fmt.Errorf("constant page with an inline value and a scalar buffer: %w", ErrCorrupt)
		}
		pd.scalarBuf = bufs[0]
		levels = bufs[1:]
	}
	var rep, def *levelStream
	if len(levels) == 2 {
		// Levels are raw u16 unless the page is all null with compressed
		// levels (a scalar page's levels are always raw).
		scalar := c.InlineValue != nil || pd.scalarBuf != nil
		repEnc, defEnc := c.RepCompression, c.DefCompression
		if scalar {
			repEnc, defEnc = nil, nil
		}
		var err error
		if rep, err = decodeLevelStream(repEnc, levels[0], c.NumRepValues); err != nil {
			return nil, fmt.Errorf("constant page rep: %w", err)
		}
		if def, err = decodeLevelStream(defEnc, levels[1], c.NumDefValues); err != nil {
			return nil, fmt.Errorf("constant page def: %w", err)
		}
		if rep != nil && def != nil && rep.n != def.n {
			return nil, fmt.Errorf("constant page has %d rep and %d def levels: %w", rep.n, def.n, ErrCorrupt)
		}
	}
	la, lb := a, b
	switch {
	case rep != nil:
		maxRep := uint16(structural.NumLists(c.Layers))
		starts, total := rep.rowStarts(maxRep, []uint64{0, a, b})
		if total != rows || rows > 0 && starts[0] != 0 {
			return nil, fmt.Errorf("constant page levels hold %d rows (first at level %d), page %d: %w", total, starts[0], rows, ErrCorrupt)
		}
		la, lb = starts[1], starts[2]
	case def != nil:
		if def.n != rows {
			return nil, fmt.Errorf("constant page has %d levels for %d rows: %w", def.n, rows, ErrCorrupt)
		}
	}
	if lb-la > maxWindowLevels {
		return nil, fmt.Errorf("rows [%d, %d) of a constant page hold %d levels, over the reader's limit of %d: %w", a, b, lb-la, maxWindowLevels, ErrUnsupported)
	}
	if rep != nil {
		pd.rep = rep.extract(la, lb)
	}
	if def != nil {
		pd.def = def.extract(la, lb)
	}
	pd.numVisible = countVisible(c.Layers, pd.rep, pd.def, int(lb-la))
	switch {
	case c.InlineValue != nil:
		pd.constant = c.InlineValue
	case pd.scalarBuf == nil:
		pd.allNull = true
	}
	return pd, nil
}
