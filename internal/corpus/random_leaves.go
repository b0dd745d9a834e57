package corpus

// The differential cases' leaf values: each drawn by its node's value
// pattern (draw, str) and laid out as an Arrow array of the leaf's type
// (leafArray). The schema and the structure around the leaves are drawn in
// random.go.

import (
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/decimal256"
	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

func maxIndex(t arrow.DataType) int {
	switch t.ID() {
	case arrow.INT8:
		return math.MaxInt8 + 1
	case arrow.UINT8:
		return math.MaxUint8 + 1
	case arrow.INT16:
		return math.MaxInt16 + 1
	}
	return 1 << 20
}

func appendInt(b array.Builder, k int64) {
	switch ib := b.(type) {
	case *array.Int8Builder:
		ib.Append(int8(k))
	case *array.Int16Builder:
		ib.Append(int16(k))
	case *array.Int32Builder:
		ib.Append(int32(k))
	case *array.Int64Builder:
		ib.Append(k)
	case *array.Uint8Builder:
		ib.Append(uint8(k))
	case *array.Uint16Builder:
		ib.Append(uint16(k))
	case *array.Uint32Builder:
		ib.Append(uint32(k))
	case *array.Uint64Builder:
		ib.Append(uint64(k))
	default:
		panic("corpus: no index builder " + b.Type().String())
	}
}

// draw returns the i-th value of a pattern as a uint64 of random bits
// shaped by the pattern (callers narrow it to the type).
func (g *rgen) draw(nd *rnode, i int) uint64 {
	r := g.r
	switch nd.vals {
	case valSmall:
		return uint64(r.IntN(16))
	case valSorted:
		return uint64(i*3 + r.IntN(3))
	case valRuns:
		return uint64((i / (1 + nd.card%37)) * 7919)
	case valConst:
		return 42
	case valLowCard:
		return uint64(r.IntN(max(nd.card, 1))) * 0x9E3779B97F4A7C15
	case valEdge:
		return []uint64{0, 1, math.MaxUint64, 1 << 63, 1<<63 - 1, 0x7FF8000000000001, 0xFFF0000000000000, 0x7F800000, 0x7FC00001, 0x8000, 0xFC00}[r.IntN(11)]
	}
	return r.Uint64()
}

var words = []string{"", "a", "alpha", "beta", "ünïcödé", "日本語", "https://example.com/x?y=1", "zeta", " ", "\x00nul"}

func (g *rgen) str(nd *rnode, i int) string {
	r := g.r
	var s string
	switch nd.vals {
	case valConst:
		s = "constant"
	case valLowCard, valRuns, valSmall:
		s = fmt.Sprintf("k%d", g.draw(nd, i)%1000)
	case valSorted:
		s = fmt.Sprintf("%08d", i)
	case valEdge:
		s = words[r.IntN(len(words))]
	default:
		b := make([]byte, r.IntN(20))
		for j := range b {
			b[j] = byte('a' + r.IntN(26))
		}
		s = string(b)
	}
	if nd.wide {
		s = strings.Repeat(s+"w", 1+300/(len(s)+1))
	}
	return s
}

// leafArray draws n leaf values of type t (v: validity, nil = all valid).
// Null slots of fixed-width types keep the drawn bits (garbage Arrow must
// ignore).
func (g *rgen) leafArray(nd *rnode, t arrow.DataType, n int, v []bool) arrow.Array {
	if v == nil {
		v = make([]bool, n)
		for i := range v {
			v[i] = true
		}
	}
	if t.ID() == arrow.NULL {
		return array.NewNull(n)
	}
	if t.ID() == arrow.FIXED_SIZE_LIST { // a vector (primitive items)
		ft := t.(*arrow.FixedSizeListType)
		dim := int(ft.Len())
		cv := make([]bool, 0, n*dim)
		for i := 0; i < n; i++ {
			for j := 0; j < dim; j++ {
				cv = append(cv, v[i])
			}
		}
		item := nd.kids[0]
		iv := g.valid(item, n*dim, cv)
		kid := g.leafArray(item, ft.Elem(), n*dim, iv)
		defer kid.Release()
		bm, nulls := g.bitmapOf(nd, v)
		d := array.NewData(t, n, []*memory.Buffer{bm}, []arrow.ArrayData{kid.Data()}, nulls, 0)
		defer d.Release()
		releaseBuf(bm)
		return array.MakeFromData(d)
	}
	b := array.NewBuilder(g.mem, t)
	defer b.Release()
	b.Reserve(n)
	for i := 0; i < n; i++ {
		if !v[i] {
			b.AppendNull()
			continue
		}
		x := g.draw(nd, i)
		switch bb := b.(type) {
		case *array.BooleanBuilder:
			bb.Append(x&1 == 1)
		case *array.Int8Builder:
			bb.Append(int8(x))
		case *array.Int16Builder:
			bb.Append(int16(x))
		case *array.Int32Builder:
			bb.Append(int32(x))
		case *array.Int64Builder:
			bb.Append(int64(x))
		case *array.Uint8Builder:
			bb.Append(uint8(x))
		case *array.Uint16Builder:
			bb.Append(uint16(x))
		case *array.Uint32Builder:
			bb.Append(uint32(x))
		case *array.Uint64Builder:
			bb.Append(x)
		case *array.Float16Builder:
			bb.Append(float16.FromBits(uint16(x)))
		case *array.Float32Builder:
			bb.Append(math.Float32frombits(uint32(x)))
		case *array.Float64Builder:
			if nd.vals == valRandom {
				bb.Append(g.r.NormFloat64())
			} else {
				bb.Append(math.Float64frombits(x))
			}
		case *array.Decimal128Builder:
			p := t.(*arrow.Decimal128Type).Precision
			bb.Append(decimal128.FromI64(int64(x % pow10(p))))
		case *array.Decimal256Builder:
			bb.Append(decimal256.FromI64(int64(x % 1_000_000_000_000_000_000)))
		case *array.Date32Builder:
			bb.Append(arrow.Date32(int32(x % 100000)))
		case *array.Date64Builder:
			bb.Append(arrow.Date64(int64(x%100000) * 86400000))
		case *array.Time32Builder:
			bb.Append(arrow.Time32(int32(x % 86400)))
		case *array.Time64Builder:
			bb.Append(arrow.Time64(int64(x % 86400_000_000)))
		case *array.TimestampBuilder:
			bb.Append(arrow.Timestamp(int64(x)))
		case *array.DurationBuilder:
			bb.Append(arrow.Duration(int64(x)))
		case *array.StringBuilder:
			bb.Append(g.str(nd, i))
		case *array.LargeStringBuilder:
			bb.Append(g.str(nd, i))
		case *array.BinaryBuilder:
			bb.Append([]byte(g.str(nd, i)))
		case *array.FixedSizeBinaryBuilder:
			w := t.(*arrow.FixedSizeBinaryType).ByteWidth
			buf := make([]byte, w)
			for j := range buf {
				buf[j] = byte(x >> (8 * (j % 8)))
			}
			bb.Append(buf)
		default:
			panic("corpus: no random leaf for " + t.String())
		}
	}
	return b.NewArray()
}

func pow10(p int32) uint64 {
	x := uint64(1)
	for i := int32(0); i < p && i < 18; i++ {
		x *= 10
	}
	return x
}
