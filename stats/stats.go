// Package stats measures a page in one pass over its leaf data: null counts,
// value widths, runs and constancy. The selector decides from these numbers
// alone, without trial-encoding every candidate.
package stats

import (
	"encoding/binary"
	"math/bits"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// Page is what one pass over a page's values measured.
type Page struct {
	NumValues    int  // leaf value slots
	NullCount    int  // null leaf slots
	BitsPerValue int  // physical width of one value
	MaxBitWidth  int  // bit length of the OR of every non-null value (unsigned)
	Runs         int  // maximal runs of equal adjacent non-null values
	Constant     bool // every non-null value equal (and at least one)
}

// FixedWidth measures a page made of fixed-width arrays (bit widths that are
// multiples of 8 and at most 64 get MaxBitWidth, Runs and Constant; others
// only counts).
func FixedWidth(arrs []arrow.Array, bitsPerValue int) Page {
	p := Page{BitsPerValue: bitsPerValue}
	bw := bitsPerValue / 8
	measurable := bitsPerValue%8 == 0 && bw >= 1 && bw <= 8
	var or, prev uint64
	seen := false
	p.Constant = true
	for _, a := range arrs {
		n := a.Len()
		p.NumValues += n
		p.NullCount += a.NullN()
		if !measurable {
			p.Constant = false
			continue
		}
		data := a.Data()
		buf := data.Buffers()[1].Bytes()[data.Offset()*bw:]
		bm := a.NullBitmapBytes()
		hasNulls := a.NullN() > 0 && bm != nil
		for i := 0; i < n; i++ {
			if hasNulls && !bitutil.BitIsSet(bm, data.Offset()+i) {
				continue
			}
			v := load(buf[i*bw:], bw)
			or |= v
			if !seen || v != prev {
				p.Runs++
				if seen {
					p.Constant = false
				}
			}
			prev, seen = v, true
		}
	}
	if !seen {
		p.Constant = false
	}
	p.MaxBitWidth = 64 - bits.LeadingZeros64(or)
	return p
}

func load(b []byte, w int) uint64 {
	switch w {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	case 8:
		return binary.LittleEndian.Uint64(b)
	}
	var v uint64
	for i := w - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}
