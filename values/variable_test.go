package values

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/planarlance/planar/proto/enc21pb"
	"google.golang.org/protobuf/proto"
)

// varStrings returns the offsets (from 0) and data of strs.
func varStrings(strs ...string) ([]uint64, []byte) {
	offs := []uint64{0}
	var data []byte
	for _, s := range strs {
		data = append(data, s...)
		offs = append(offs, uint64(len(data)))
	}
	return offs, data
}

func TestVariableBlockExamples(t *testing.T) {
	offs, data := varStrings("ab", "", "cde")
	blk := AppendVariableBlock([]byte{0xEE}, 32, offs, data)
	want := cxHex(t, "20 00 00 00 18 00 00 00 00 00 00 00 02 00 00 00 02 00 00 00 05 00 00 00 61 62 63 64 65")
	if !bytes.Equal(blk[1:], want) || blk[0] != 0xEE {
		t.Fatalf("32-bit block % x\nwant % x", blk[1:], want)
	}
	bits, gotOffs, gotData, err := decodeVariableBlock(want, 3)
	if err != nil || bits != 32 || !slices.Equal(gotOffs, offs) || !bytes.Equal(gotData, data) {
		t.Fatalf("decode: %d %v %q %v", bits, gotOffs, gotData, err)
	}

	blk64 := AppendVariableBlock(nil, 64, offs, data)
	want64 := cxHex(t, "40 00 00 00 00 00 00 00  30 00 00 00 00 00 00 00"+
		"00 00 00 00 00 00 00 00  02 00 00 00 00 00 00 00  02 00 00 00 00 00 00 00  05 00 00 00 00 00 00 00"+
		"61 62 63 64 65")
	if !bytes.Equal(blk64, want64) {
		t.Fatalf("64-bit block % x\nwant % x", blk64, want64)
	}
	bits, gotOffs, gotData, err = decodeVariableBlock(blk64, 3)
	if err != nil || bits != 64 || !slices.Equal(gotOffs, offs) || !bytes.Equal(gotData, data) {
		t.Fatalf("decode 64: %d %v %q %v", bits, gotOffs, gotData, err)
	}

	// Offsets not starting at 0 are rebased and only the covered bytes kept.
	sub := AppendVariableBlock(nil, 32, []uint64{1, 3, 3, 6}, []byte("xabcdeyy"))
	if !bytes.Equal(sub, want) {
		t.Fatalf("rebased block % x", sub)
	}
}

func TestVariableBlockLegacy(t *testing.T) {
	// Legacy 32-bit: u8 bits, u32 n, u32 bytes_start, offsets from byte 9.
	leg := cxHex(t, "20  03 00 00 00  19 00 00 00  00 00 00 00 02 00 00 00 02 00 00 00 05 00 00 00  61 62 63 64 65")
	bits, offs, data, err := decodeVariableBlock(leg, 3)
	if err != nil || bits != 32 || !slices.Equal(offs, []uint64{0, 2, 2, 5}) || string(data) != "abcde" {
		t.Fatalf("legacy 32: %d %v %q %v", bits, offs, data, err)
	}
	if _, _, _, err := decodeVariableBlock(leg, 4); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("legacy count mismatch: %v", err)
	}
	// Legacy 64-bit: u8 bits, u64 n, u64 bytes_start, offsets from byte 17.
	var leg64 []byte
	leg64 = append(leg64, 64)
	leg64 = binary.LittleEndian.AppendUint64(leg64, 2)
	leg64 = binary.LittleEndian.AppendUint64(leg64, 17+24)
	for _, o := range []uint64{0, 1, 4} {
		leg64 = binary.LittleEndian.AppendUint64(leg64, o)
	}
	leg64 = append(leg64, "xyzw"...)
	bits, offs, data, err = decodeVariableBlock(leg64, 2)
	if err != nil || bits != 64 || !slices.Equal(offs, []uint64{0, 1, 4}) || string(data) != "xyzw" {
		t.Fatalf("legacy 64: %d %v %q %v", bits, offs, data, err)
	}
	// Legacy with n = 0 has zero bytes 1..3 and looks like the current
	// layout; it is still understood.
	leg0 := cxHex(t, "20  00 00 00 00  0D 00 00 00  00 00 00 00")
	bits, offs, data, err = decodeVariableBlock(leg0, 0)
	if err != nil || bits != 32 || !slices.Equal(offs, []uint64{0}) || len(data) != 0 {
		t.Fatalf("legacy n=0: %d %v %q %v", bits, offs, data, err)
	}
	// The current layout with n = 0.
	cur0 := AppendVariableBlock(nil, 32, []uint64{0}, nil)
	if want := cxHex(t, "20 00 00 00 0C 00 00 00 00 00 00 00"); !bytes.Equal(cur0, want) {
		t.Fatalf("n=0 block % x", cur0)
	}
	if _, offs, _, err := decodeVariableBlock(cur0, 0); err != nil || !slices.Equal(offs, []uint64{0}) {
		t.Fatalf("n=0 decode %v %v", offs, err)
	}
}

func TestVariableBlockErrors(t *testing.T) {
	offs, data := varStrings("ab", "", "cde")
	good := AppendVariableBlock(nil, 32, offs, data)
	mod := func(f func(b []byte)) []byte {
		b := slices.Clone(good)
		f(b)
		return b
	}
	cases := map[string]struct {
		b []byte
		n int
	}{
		"empty":            {nil, 0},
		"short header":     {good[:6], 3},
		"truncated":        {good[:len(good)-1], 3},
		"too many values":  {good, 4},
		"negative n":       {good, -1},
		"bits 16":          {mod(func(b []byte) { b[0] = 16 }), 3},
		"bytes_start low":  {mod(func(b []byte) { b[4] = 0x10 }), 3},
		"bytes_start high": {mod(func(b []byte) { b[4] = 0xF0 }), 3},
		"decreasing":       {mod(func(b []byte) { b[12] = 3 }), 3},
		"64 bad width":     {mod(func(b []byte) { b[0] = 64 }), 3},
		"legacy bits":      {mod(func(b []byte) { b[0] = 8; b[1] = 1 }), 3},
		"legacy short":     {[]byte{32, 1, 0, 0, 0, 9}, 1},
		"huge n":           {good, 1 << 40},
	}
	for name, c := range cases {
		if _, _, _, err := decodeVariableBlock(c.b, c.n); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: want ErrCorrupt, got %v", name, err)
		}
	}
	// Extra trailing bytes beyond the last offset are ignored.
	_, _, d, err := decodeVariableBlock(append(slices.Clone(good), 0, 0), 3)
	if err != nil || string(d) != "abcde" {
		t.Fatalf("trailing: %q %v", d, err)
	}
}

func TestVariableChunkExamples(t *testing.T) {
	offs, data := varStrings("ab", "", "cde")
	ch := appendVariableChunk([]byte{1, 2, 3}, 32, offs, data)
	want := cxHex(t, "10 00 00 00 12 00 00 00 12 00 00 00 15 00 00 00 61 62 63 64 65 48 48 48")
	if !bytes.Equal(ch[3:], want) {
		t.Fatalf("chunk % x\nwant % x", ch[3:], want)
	}
	gotOffs, gotData, err := DecodeVariableChunk(want, 32, 3)
	if err != nil || !slices.Equal(gotOffs, offs) || !bytes.Equal(gotData, data) {
		t.Fatalf("decode chunk: %v %q %v", gotOffs, gotData, err)
	}
	// A chunk of a slice of the values: offsets are absolute into data.
	all, allData := varStrings("zz", "ab", "", "cde", "q")
	ch = appendVariableChunk(nil, 32, all[1 : 4+1-1+1][:4], allData)
	if !bytes.Equal(ch, want) {
		t.Fatalf("sub-chunk % x", ch)
	}
	// 64-bit: 4 offsets × 8 = 32, data 5, padded to 40.
	ch64 := appendVariableChunk(nil, 64, offs, data)
	want64 := cxHex(t, "20 00 00 00 00 00 00 00  22 00 00 00 00 00 00 00  22 00 00 00 00 00 00 00  25 00 00 00 00 00 00 00"+
		"61 62 63 64 65 48 48 48")
	if !bytes.Equal(ch64, want64) {
		t.Fatalf("chunk64 % x\nwant % x", ch64, want64)
	}
	gotOffs, gotData, err = DecodeVariableChunk(ch64, 64, 3)
	if err != nil || !slices.Equal(gotOffs, offs) || !bytes.Equal(gotData, data) {
		t.Fatalf("decode chunk64: %v %q %v", gotOffs, gotData, err)
	}
	// No padding when already aligned; zero values.
	ch = appendVariableChunk(nil, 32, []uint64{0, 4}, []byte("abcd"))
	if want := cxHex(t, "08 00 00 00 0C 00 00 00 61 62 63 64"); !bytes.Equal(ch, want) {
		t.Fatalf("aligned chunk % x", ch)
	}
	ch = appendVariableChunk(nil, 32, []uint64{7}, []byte("1234567"))
	if want := cxHex(t, "04 00 00 00"); !bytes.Equal(ch, want) {
		t.Fatalf("empty chunk % x", ch)
	}
	if o, d, err := DecodeVariableChunk(ch, 32, 0); err != nil || !slices.Equal(o, []uint64{0}) || len(d) != 0 {
		t.Fatalf("empty chunk decode %v %v", o, err)
	}
}

func TestVariableChunkErrors(t *testing.T) {
	offs, data := varStrings("ab", "", "cde")
	good := appendVariableChunk(nil, 32, offs, data)
	mod := func(f func(b []byte)) []byte {
		b := slices.Clone(good)
		f(b)
		return b
	}
	cases := map[string]struct {
		b []byte
		m int
	}{
		"empty":          {nil, 0},
		"short offsets":  {good[:12], 3},
		"too many":       {good, 6},
		"negative":       {good, -1},
		"huge":           {good, 1 << 40},
		"overlap":        {mod(func(b []byte) { b[0] = 0x0C }), 3},
		"decreasing":     {mod(func(b []byte) { b[4] = 0x11; b[8] = 0x10 }), 3},
		"beyond chunk":   {mod(func(b []byte) { b[12] = 0x19 }), 3},
		"beyond chunk 2": {good[:20], 3},
	}
	for name, c := range cases {
		if _, _, err := DecodeVariableChunk(c.b, 32, c.m); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: want ErrCorrupt, got %v", name, err)
		}
	}
	if _, _, err := DecodeVariableChunk(good, 16, 3); !errors.Is(err, ErrUnsupported) {
		t.Errorf("16-bit: %v", err)
	}
	// Reading fewer values than stored is fine: the chunk is read up to offset m.
	o, d, err := DecodeVariableChunk(good, 32, 1)
	if err != nil || !slices.Equal(o, []uint64{0, 2}) || string(d) != "ab" {
		t.Errorf("m=1 over a 3-value chunk: %v %q %v", o, d, err)
	}
}

func TestVariableRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, bits := range []int{32, 64} {
		for trial := range 50 {
			n := r.IntN(200)
			if trial == 0 {
				n = 0
			}
			strs := make([]string, n)
			for i := range strs {
				b := make([]byte, r.IntN(20))
				for k := range b {
					b[k] = byte(r.Uint32())
				}
				strs[i] = string(b)
			}
			offs, data := varStrings(strs...)
			blk := AppendVariableBlock(nil, bits, offs, data)
			gb, go_, gd, err := decodeVariableBlock(blk, n)
			if err != nil || gb != bits || !slices.Equal(go_, offs) || !bytes.Equal(gd, data) {
				t.Fatalf("bits=%d n=%d block: %v", bits, n, err)
			}
			// Chunk a random sub-range.
			s := r.IntN(n + 1)
			e := s + r.IntN(n-s+1)
			ch := appendVariableChunk(nil, bits, offs[s:e+1], data)
			if len(ch)%(bits/8) != 0 {
				t.Fatalf("chunk of %d bytes not padded", len(ch))
			}
			co, cd, err := DecodeVariableChunk(ch, bits, e-s)
			if err != nil || !bytes.Equal(cd, data[offs[s]:offs[e]]) {
				t.Fatalf("bits=%d chunk [%d,%d): %v", bits, s, e, err)
			}
			for j := range co {
				if co[j] != offs[s+j]-offs[s] {
					t.Fatalf("chunk offset %d = %d", j, co[j])
				}
			}
		}
	}
}

func FuzzDecodeVariableBlock(f *testing.F) {
	f.Add(uint16(3), cxHex(f, "20 00 00 00 18 00 00 00 00 00 00 00 02 00 00 00 02 00 00 00 05 00 00 00 61 62 63 64 65"))
	f.Add(uint16(3), cxHex(f, "20 03 00 00 00 19 00 00 00 00 00 00 00 02 00 00 00 02 00 00 00 05 00 00 00 61 62 63 64 65"))
	f.Add(uint16(0), cxHex(f, "20 00 00 00 00 0D 00 00 00 00 00 00 00"))
	offs, data := varStrings("ab", "", "cde")
	f.Add(uint16(3), AppendVariableBlock(nil, 64, offs, data))
	f.Fuzz(func(t *testing.T, n16 uint16, src []byte) {
		n := int(n16)
		bits, offs, data, err := decodeVariableBlock(src, n)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if bits != 32 && bits != 64 || len(offs) != n+1 || offs[n] != uint64(len(data)) {
			t.Fatalf("bits=%d offsets %d last=%d data %d", bits, len(offs), offs[n], len(data))
		}
		for i := 1; i < len(offs); i++ {
			if offs[i] < offs[i-1] {
				t.Fatal("offsets decrease")
			}
		}
		blk := AppendVariableBlock(nil, bits, offs, data)
		_, o2, d2, err := decodeVariableBlock(blk, n)
		if err != nil || !bytes.Equal(d2, data[offs[0]:]) || o2[n]-o2[0] != offs[n]-offs[0] {
			t.Fatalf("re-round-trip: %v", err)
		}
	})
}

func FuzzDecodeVariableChunk(f *testing.F) {
	f.Add(false, uint16(3), cxHex(f, "10 00 00 00 12 00 00 00 12 00 00 00 15 00 00 00 61 62 63 64 65 48 48 48"))
	offs, data := varStrings("ab", "", "cde")
	f.Add(true, uint16(3), appendVariableChunk(nil, 64, offs, data))
	f.Add(false, uint16(0), []byte{4, 0, 0, 0})
	f.Fuzz(func(t *testing.T, wide bool, m16 uint16, src []byte) {
		bits := 32
		if wide {
			bits = 64
		}
		m := int(m16)
		offs, data, err := DecodeVariableChunk(src, bits, m)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("unexpected error kind: %v", err)
			}
			return
		}
		if len(offs) != m+1 || offs[0] != 0 || offs[m] != uint64(len(data)) {
			t.Fatalf("offsets %v data %d", offs, len(data))
		}
		ch := appendVariableChunk(nil, bits, offs, data)
		o2, d2, err := DecodeVariableChunk(ch, bits, m)
		if err != nil || !slices.Equal(o2, offs) || !bytes.Equal(d2, data) {
			t.Fatalf("re-round-trip: %v", err)
		}
	})
}

// TestDeltaOffsets32: a variable chunk whose offsets are 32-bit deltas
// out-of-line bit packed (the writer's form for strings) decodes, through
// the summing fast path, to the values written, and its corruptions (a
// base off 0, a value buffer of another size, differences that overflow
// 32 bits, a truncated payload) are ErrCorrupt as on the general path.
func TestDeltaOffsets32(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 3))
	for iter := range 200 {
		n := 1 + r.IntN(3000)
		b := Block{N: n, Offsets: []uint64{0}}
		for range n {
			b.Data = append(b.Data, bytes.Repeat([]byte{byte('a' + iter%26)}, r.IntN(1+iter%40))...)
			b.Offsets = append(b.Offsets, uint64(len(b.Data)))
		}
		w := 1
		for i := range n {
			w = max(w, bits.Len64(b.Offsets[i+1]-b.Offsets[i]))
		}
		c := VariableCodec{OffBits: 32, Offsets: DeltaCodec{Bits: 32, Deltas: OutOfLineCodec{Bits: 32, Width: w}}}
		if w >= 32 {
			continue
		}
		bufs, err := c.AppendChunk(nil, b)
		if err != nil {
			t.Fatal(err)
		}
		v := c.Encoding().GetVariable()
		got, err := decodeVariableChunk(v, bufs, n)
		if err != nil || !bytes.Equal(got.Data, b.Data) || !slices.Equal(got.Offsets, b.Offsets) {
			t.Fatalf("iter %d (%d values, width %d): decoded %v, %v", iter, n, w, err, got.Offsets[:min(5, len(got.Offsets))])
		}
		if iter%10 != 1 || len(b.Data) == 0 {
			continue
		}
		corrupt := map[string]func() ([]byte, []byte, *enc21pb.Variable){
			"base off 0": func() ([]byte, []byte, *enc21pb.Variable) {
				bad := proto.Clone(v).(*enc21pb.Variable)
				bad.Offsets.GetDelta().Base = 1
				return bufs[0], bufs[1], bad
			},
			"value bytes short": func() ([]byte, []byte, *enc21pb.Variable) { return bufs[0], bufs[1][:len(bufs[1])/2], v },
			"payload truncated": func() ([]byte, []byte, *enc21pb.Variable) { return bufs[0][:len(bufs[0])/2], bufs[1], v },
			"overflow": func() ([]byte, []byte, *enc21pb.Variable) {
				bad := proto.Clone(v).(*enc21pb.Variable)
				bad.Offsets.GetDelta().Base = 0
				payload := slices.Clone(bufs[0])
				for i := range payload {
					payload[i] = 0xFF
				}
				return payload, bufs[1], bad
			},
		}
		for name, make := range corrupt {
			p, d, enc := make()
			if _, err := decodeVariableChunk(enc, [][]byte{p, d}, n); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("iter %d, %s: err %v, want ErrCorrupt", iter, name, err)
			}
		}
	}
}
