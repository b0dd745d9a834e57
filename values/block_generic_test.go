package values

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/planarlance/planar/proto/enc21pb"
)

// Byte-level tests of the 2.3 generic block codecs, built from the layouts of
// Lance 14 (lance-encoding src/encodings/physical/{rle,dictionary}.rs):
//
//	RLE:        no payload if both children are metadata only, else
//	            [u64 LE values payload bytes][values payload][run-lengths payload];
//	            run lengths are u32; the run count comes from a Constant run
//	            length (n / length), Range run lengths (the k whose lengths sum
//	            to n), a Flat values payload or a Flat run-lengths payload.
//	Dictionary: no payload if both children are metadata only, else
//	            [u64 LE indices bytes][u64 LE items bytes][indices][items];
//	            indices are u32, 1..4096 items of the block's width.

func u32s(vs ...uint32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	return b
}

func u64s(vs ...uint64) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return b
}

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

// rleFrame is the generic block RLE payload of two child payloads.
func rleFrame(v, l []byte) []byte { return cat(u64s(uint64(len(v))), v, l) }

// dictFrame is the block dictionary payload of two child payloads.
func dictFrame(idx, items []byte) []byte {
	return cat(u64s(uint64(len(idx)), uint64(len(items))), idx, items)
}

func dictEnc(idx, items *enc21pb.CompressiveEncoding, n uint32) *enc21pb.CompressiveEncoding {
	return &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Dictionary{Dictionary: &enc21pb.Dictionary{Indices: idx, Items: items, NumDictionaryItems: n}}}
}

func constEnc(v []byte) *enc21pb.CompressiveEncoding { return fzCE(&enc21pb.Constant{Value: v}) }

func rangeEnc(bits int, start, step uint64) *enc21pb.CompressiveEncoding {
	return fzCE(&enc21pb.Range{UncompressedBitsPerValue: uint64(bits), Start: start, Step: step})
}

func oolPayload(t *testing.T, bits, w int, vals ...uint64) []byte {
	t.Helper()
	var src []byte
	for _, v := range vals {
		src = fzPut(src, bits, v)
	}
	out, err := AppendOutOfLineBitpacked(nil, bits, w, src, len(vals))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func valuesOf(b Block) []uint64 {
	out := make([]uint64, b.N)
	for i := range out {
		if b.Bits == 32 {
			out[i] = uint64(binary.LittleEndian.Uint32(b.Data[4*i:]))
		} else {
			out[i] = binary.LittleEndian.Uint64(b.Data[8*i:])
		}
	}
	return out
}

func TestGenericBlockCodecs(t *testing.T) {
	zstdFlat := fzCompress(SchemeZstd, u32s(5, 6, 7, 8))
	cases := []struct {
		name string
		e    *enc21pb.CompressiveEncoding
		buf  []byte
		bits int
		want []uint64
	}{
		{"rle(flat64,constant32)", fzRle(FlatEncoding(64), constEnc(u32s(3))), rleFrame(u64s(7, 9), nil), 64, []uint64{7, 7, 7, 9, 9, 9}},
		{"rle(range32,flat32)", fzRle(rangeEnc(32, 10, 5), FlatEncoding(32)), rleFrame(nil, u32s(1, 2, 3)), 32, []uint64{10, 15, 15, 20, 20, 20}},
		{"rle(constant64,range32) no payload", fzRle(constEnc(u64s(4)), rangeEnc(32, 1, 1)), nil, 64, []uint64{4, 4, 4, 4, 4, 4}},
		{"rle(ool32,flat32)", fzRle(fzOOL(32, 4), FlatEncoding(32)), rleFrame(oolPayload(t, 32, 4, 3, 1, 2), u32s(2, 2, 1)), 32, []uint64{3, 3, 1, 1, 2}},
		{"rle(flat64,ool32)", fzRle(FlatEncoding(64), fzOOL(32, 2)), rleFrame(u64s(1<<40, 0), oolPayload(t, 32, 2, 3, 1)), 64, []uint64{1 << 40, 1 << 40, 1 << 40, 0}},
		{"rle(flat32,flat32) stable frame", fzRle(FlatEncoding(32), FlatEncoding(32)), rleFrame(u32s(8, 9), u32s(1, 2)), 32, []uint64{8, 9, 9}},
		{"dict(flat32,flat64)", dictEnc(FlatEncoding(32), FlatEncoding(64), 2), dictFrame(u32s(1, 0, 1, 1), u64s(100, 200)), 64, []uint64{200, 100, 200, 200}},
		{"dict(constant32,range32) no payload", dictEnc(constEnc(u32s(1)), rangeEnc(32, 5, 7), 3), nil, 32, []uint64{12, 12, 12}},
		{"dict(ool32,flat32)", dictEnc(fzOOL(32, 2), FlatEncoding(32), 3), dictFrame(oolPayload(t, 32, 2, 2, 0, 1, 2, 2), u32s(40, 50, 60)), 32, []uint64{60, 40, 50, 60, 60}},
		{"dict(range32,constant64)", dictEnc(rangeEnc(32, 0, 0), constEnc(u64s(9)), 1), nil, 64, []uint64{9, 9}},
		{"dict(flat32,range64) items metadata", dictEnc(FlatEncoding(32), rangeEnc(64, 1, 1), 2), dictFrame(u32s(0, 1, 1), nil), 64, []uint64{1, 2, 2}},
		{"constant32", constEnc(u32s(6)), nil, 32, []uint64{6, 6, 6}},
		{"range64", rangeEnc(64, 3, 4), nil, 64, []uint64{3, 7, 11}},
		{"delta64(flat64)", fzCE(&enc21pb.Delta{UncompressedBitsPerValue: 64, Base: 10, Deltas: FlatEncoding(64)}), u64s(1, 2), 64, []uint64{10, 11, 13}},
		{"delta32(ool32)", fzCE(&enc21pb.Delta{UncompressedBitsPerValue: 32, Base: 1, Deltas: fzOOL(32, 3)}), oolPayload(t, 32, 3, 5, 0, 7), 32, []uint64{1, 6, 6, 13}},
		{"delta32(constant32)", fzCE(&enc21pb.Delta{UncompressedBitsPerValue: 32, Base: 2, Deltas: constEnc(u32s(3))}), nil, 32, []uint64{2, 5, 8}},
		{"ool64", fzOOL(64, 5), oolPayload(t, 64, 5, 31, 0, 17), 64, []uint64{31, 0, 17}},
		{"zstd(flat32)", fzGeneral(SchemeZstd, FlatEncoding(32)), zstdFlat, 32, []uint64{5, 6, 7, 8}},
		{"flat32", FlatEncoding(32), u32s(1, 2), 32, []uint64{1, 2}},
	}
	for _, c := range cases {
		got, err := DecodeBlock(c.e, c.buf, len(c.want))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got.Bits != c.bits || fmt.Sprint(valuesOf(got)) != fmt.Sprint(c.want) {
			t.Errorf("%s: %d-bit %v, want %d-bit %v", c.name, got.Bits, valuesOf(got), c.bits, c.want)
		}
		if HasPayload(c.e) != (c.buf != nil) {
			t.Errorf("%s: HasPayload = %v with a %d-byte payload", c.name, HasPayload(c.e), len(c.buf))
		}
	}

	bad := []struct {
		name string
		e    *enc21pb.CompressiveEncoding
		buf  []byte
		n    int
	}{
		{"rle values size overruns", fzRle(FlatEncoding(64), constEnc(u32s(3))), cat(u64s(24), u64s(7, 9)), 6},
		{"rle runs sum short", fzRle(fzOOL(32, 4), FlatEncoding(32)), rleFrame(oolPayload(t, 32, 4, 3, 1, 2), u32s(2, 2, 1)), 6},
		{"rle zero run", fzRle(FlatEncoding(32), fzOOL(32, 2)), rleFrame(u32s(1, 2), oolPayload(t, 32, 2, 0, 3)), 3},
		{"rle constant length does not divide", fzRle(FlatEncoding(64), constEnc(u32s(4))), rleFrame(u64s(7, 9), nil), 6},
		{"rle range lengths do not sum", fzRle(constEnc(u64s(4)), rangeEnc(32, 1, 1)), nil, 5},
		{"rle metadata only with payload", fzRle(constEnc(u64s(4)), rangeEnc(32, 1, 1)), []byte{0}, 6},
		{"rle metadata child with framed bytes", fzRle(rangeEnc(32, 10, 5), FlatEncoding(32)), cat(u64s(4), u32s(1), u32s(1, 2, 3)), 6},
		{"rle header short", fzRle(FlatEncoding(64), constEnc(u32s(3))), []byte{1, 2}, 3},
		{"rle no run count", fzRle(fzOOL(32, 4), fzOOL(32, 4)), rleFrame(oolPayload(t, 32, 4, 1), oolPayload(t, 32, 4, 1)), 1},
		{"dict index out of range", dictEnc(FlatEncoding(32), FlatEncoding(64), 2), dictFrame(u32s(2), u64s(100, 200)), 1},
		{"dict frame sizes disagree", dictEnc(FlatEncoding(32), FlatEncoding(64), 2), cat(u64s(4, 8), u32s(1), u64s(100, 200)), 1},
		{"dict no items", dictEnc(FlatEncoding(32), FlatEncoding(64), 0), dictFrame(u32s(0), nil), 1},
		{"dict too many items", dictEnc(constEnc(u32s(0)), rangeEnc(64, 0, 1), 5000), nil, 1},
		{"dict items short", dictEnc(FlatEncoding(32), FlatEncoding(64), 3), dictFrame(u32s(0), u64s(1)), 1},
		{"dict metadata only with payload", dictEnc(constEnc(u32s(0)), rangeEnc(64, 0, 1), 2), make([]byte, 16), 1},
	}
	for _, c := range bad {
		_, err := DecodeBlock(c.e, c.buf, c.n)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", c.name, err)
		}
	}
}

// fzGenericBlockCases are round-trip cases of the generic block codecs, with
// payloads laid out as in TestGenericBlockCodecs.
func fzGenericBlockCases() []fzCase {
	runsOf := func(b Block) (vals []uint64, lens []uint32) {
		for _, v := range valuesOf(b) {
			if k := len(vals) - 1; k >= 0 && vals[k] == v {
				lens[k]++
				continue
			}
			vals = append(vals, v)
			lens = append(lens, 1)
		}
		return vals, lens
	}
	put := func(bits int, vs []uint64) []byte {
		var out []byte
		for _, v := range vs {
			out = fzPut(out, bits, v)
		}
		return out
	}
	ool := func(bits int, vs []uint64) (*enc21pb.CompressiveEncoding, []byte, error) {
		src := put(bits, vs)
		w := max(bitLength(bits, src, len(vs)), 1)
		if w >= bits {
			return nil, nil, errFzSkip
		}
		out, err := AppendOutOfLineBitpacked(nil, bits, w, src, len(vs))
		return fzOOL(bits, w), out, err
	}
	var cs []fzCase
	for _, bits := range []int{32, 64} {
		cs = append(cs,
			fzFixedCase(fmt.Sprintf("rle%d(flat,flat32)", bits), bits, func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
				if b.N == 0 {
					return nil, nil, errFzSkip
				}
				vals, lens := runsOf(b)
				l := make([]uint64, len(lens))
				for i, x := range lens {
					l[i] = uint64(x)
				}
				return fzRle(FlatEncoding(bits), FlatEncoding(32)), [][]byte{rleFrame(put(bits, vals), put(32, l))}, nil
			}),
			fzFixedCase(fmt.Sprintf("rle%d(ool,flat32)", bits), bits, func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
				if b.N == 0 {
					return nil, nil, errFzSkip
				}
				vals, lens := runsOf(b)
				l := make([]uint64, len(lens))
				for i, x := range lens {
					l[i] = uint64(x)
				}
				ve, vp, err := ool(bits, vals)
				if err != nil {
					return nil, nil, err
				}
				return fzRle(ve, FlatEncoding(32)), [][]byte{rleFrame(vp, put(32, l))}, nil
			}),
			fzFixedCase(fmt.Sprintf("dict%d(ool32,flat)", bits), bits, func(b Block) (*enc21pb.CompressiveEncoding, [][]byte, error) {
				var items []uint64
				at := map[uint64]uint64{}
				var idx []uint64
				for _, v := range valuesOf(b) {
					k, ok := at[v]
					if !ok {
						k = uint64(len(items))
						at[v] = k
						items = append(items, v)
					}
					idx = append(idx, k)
				}
				if len(items) < 2 || len(items) > maxBlockDictionaryItems {
					return nil, nil, errFzSkip
				}
				ie, ip, err := ool(32, idx)
				if err != nil {
					return nil, nil, err
				}
				return dictEnc(ie, FlatEncoding(bits), uint32(len(items))), [][]byte{dictFrame(ip, put(bits, items))}, nil
			}),
		)
	}
	cs = append(cs,
		fzCase{name: "rle64(constant,constant32)", build: func(data []byte) (*enc21pb.CompressiveEncoding, Block, [][]byte, error) {
			if len(data) < 2 {
				return nil, Block{}, nil, errFzSkip
			}
			l, runs := 1+uint32(data[0]%9), 1+len(data)%50
			b := Block{Bits: 64, N: int(l) * runs}
			for range b.N {
				b.Data = fzPut(b.Data, 64, uint64(data[1]))
			}
			return fzRle(constEnc(u64s(uint64(data[1]))), constEnc(u32s(l))), b, nil, nil
		}},
		fzCase{name: "dict32(range32,range32)", build: func(data []byte) (*enc21pb.CompressiveEncoding, Block, [][]byte, error) {
			if len(data) < 2 {
				return nil, Block{}, nil, errFzSkip
			}
			items := 2 + int(data[0]%30)
			b := Block{Bits: 32, N: items}
			for i := range items {
				b.Data = fzPut(b.Data, 32, uint64(data[1])+3*uint64(i))
			}
			return dictEnc(rangeEnc(32, 0, 1), rangeEnc(32, uint64(data[1]), 3), uint32(items)), b, nil, nil
		}},
	)
	return cs
}
