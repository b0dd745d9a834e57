package values

import (
	"encoding/binary"
	"fmt"

	"github.com/planarlance/planar/proto/enc21pb"
)

// DecodeLevelRuns decodes a block of n u16 levels stored as block RLE
// (Rle{Flat16, Flat8|16|32}, possibly under General) into its runs without
// expanding them: a read of a few rows of a page whose levels are long runs
// then costs the runs, not the levels. ok is false (and nothing is decoded)
// for other encodings. The runs cover exactly n levels, none is empty.
func DecodeLevelRuns(enc *enc21pb.CompressiveEncoding, buf []byte, n int) (vals []uint16, lens []uint32, ok bool, err error) {
	for depth := 0; enc.GetGeneral() != nil; depth++ {
		if depth > 4 {
			return nil, nil, true, fmt.Errorf("level encoding nested too deep: %w", ErrCorrupt)
		}
		g := enc.GetGeneral()
		if !isLevelRLE(g.GetValues()) {
			return nil, nil, false, nil
		}
		if buf, err = Decompress(nil, Scheme(g.GetCompression().GetScheme()), buf); err != nil {
			return nil, nil, true, err
		}
		enc = g.GetValues()
	}
	if !isLevelRLE(enc) {
		return nil, nil, false, nil
	}
	lbits := int(enc.GetRle().GetRunLengths().GetFlat().GetBitsPerValue())
	w, lw, err := rleWidths(16, lbits)
	if err != nil {
		return nil, nil, true, err
	}
	if len(buf) < 8 {
		return nil, nil, true, fmt.Errorf("values: rle block of %d bytes is shorter than its 8-byte header: %w", len(buf), ErrCorrupt)
	}
	vlen := binary.LittleEndian.Uint64(buf)
	if vlen > uint64(len(buf)-8) {
		return nil, nil, true, fmt.Errorf("values: rle block values part of %d bytes exceeds the %d bytes available: %w", vlen, len(buf)-8, ErrCorrupt)
	}
	vp, lp := buf[8:8+int(vlen)], buf[8+int(vlen):]
	runs, err := rleRuns(w, lw, vp, lp)
	if err != nil {
		return nil, nil, true, err
	}
	vals, lens = make([]uint16, runs), make([]uint32, runs)
	var total uint64
	for r := range runs {
		vals[r] = binary.LittleEndian.Uint16(vp[2*r:])
		l := rleLoad(lp, lw, r)
		if l == 0 {
			return nil, nil, true, fmt.Errorf("values: rle run %d has length 0: %w", r, ErrCorrupt)
		}
		lens[r] = uint32(l)
		total += l
	}
	if total != uint64(n) {
		return nil, nil, true, fmt.Errorf("values: rle runs cover %d levels, expected %d: %w", total, n, ErrCorrupt)
	}
	return vals, lens, true, nil
}

func isLevelRLE(e *enc21pb.CompressiveEncoding) bool {
	r := e.GetRle()
	if r == nil {
		return false
	}
	v, l := r.GetValues().GetFlat(), r.GetRunLengths().GetFlat()
	return v != nil && l != nil && v.BitsPerValue == 16 && v.Data == nil && l.Data == nil
}
