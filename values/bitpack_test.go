package values

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

var testWidths = []int{8, 16, 32, 64}

// putValues encodes vals as little-endian words of bits width.
func putValues(bits int, vals []uint64) []byte {
	bpw := bits / 8
	b := make([]byte, len(vals)*bpw)
	for i, v := range vals {
		var tmp [8]byte
		binary.LittleEndian.PutUint64(tmp[:], v)
		copy(b[i*bpw:], tmp[:bpw])
	}
	return b
}

// getValues decodes little-endian words of bits width.
func getValues(bits int, b []byte) []uint64 {
	bpw := bits / 8
	vals := make([]uint64, len(b)/bpw)
	for i := range vals {
		var tmp [8]byte
		copy(tmp[:], b[i*bpw:(i+1)*bpw])
		vals[i] = binary.LittleEndian.Uint64(tmp[:])
	}
	return vals
}

func maskOf(w int) uint64 {
	if w >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(w) - 1
}

// refPack is a bit-at-a-time transcription of the FastLanes layout used to
// cross-check the kernel: it returns the packed words (each holding bits
// bits) for exactly 1024 values.
func refPack(bits, w int, vals []uint64) []uint64 {
	order := [8]int{0, 4, 2, 6, 1, 5, 3, 7}
	lanes := 1024 / bits
	out := make([]uint64, 1024*w/bits)
	for l := 0; l < lanes; l++ {
		for r := 0; r < bits; r++ {
			x := vals[16*order[r/8]+128*(r%8)+l] & maskOf(w)
			for b := 0; b < w; b++ {
				if x>>uint(b)&1 != 0 {
					pos := r*w + b
					out[(pos/bits)*lanes+l] |= 1 << uint(pos%bits)
				}
			}
		}
	}
	return out
}

// kernelPack runs the generic kernel on 1024 values given as LE bytes and
// returns the packed bytes.
func kernelPack(t *testing.T, bits, w int, src []byte) []byte {
	t.Helper()
	switch bits {
	case 8:
		return kernelPackT[uint8](w, src)
	case 16:
		return kernelPackT[uint16](w, src)
	case 32:
		return kernelPackT[uint32](w, src)
	case 64:
		return kernelPackT[uint64](w, src)
	}
	t.Fatalf("bad bits %d", bits)
	return nil
}

func kernelPackT[T flWord](w int, src []byte) []byte {
	bits := flWordBits[T]()
	var in, out [flBlock]T
	flLoadLE(in[:], src)
	flPack(&in, out[:], w)
	wpc := flPackedWords(bits, w)
	b := make([]byte, wpc*bits/8)
	flStoreLE(b, out[:wpc])
	return b
}

func kernelUnpack(bits, w int, packed []byte) []byte {
	switch bits {
	case 8:
		return kernelUnpackT[uint8](w, packed)
	case 16:
		return kernelUnpackT[uint16](w, packed)
	case 32:
		return kernelUnpackT[uint32](w, packed)
	default:
		return kernelUnpackT[uint64](w, packed)
	}
}

func kernelUnpackT[T flWord](w int, packed []byte) []byte {
	bits := flWordBits[T]()
	var in, out [flBlock]T
	wpc := flPackedWords(bits, w)
	flLoadLE(in[:wpc], packed)
	flUnpack(in[:wpc], &out, w)
	b := make([]byte, flBlock*bits/8)
	flStoreLE(b, out[:])
	return b
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFastLanesIndexPermutation(t *testing.T) {
	order := [8]int{0, 4, 2, 6, 1, 5, 3, 7}
	for _, bits := range testWidths {
		seen := make([]bool, 1024)
		for r := 0; r < bits; r++ {
			for l := 0; l < 1024/bits; l++ {
				s := 16*order[r/8] + 128*(r%8) + l
				if seen[s] {
					t.Fatalf("T=%d: index %d repeated", bits, s)
				}
				seen[s] = true
			}
		}
	}
}

func TestFastLanesExampleT8W3(t *testing.T) {
	vals := make([]uint64, 1024)
	for i := range vals {
		vals[i] = uint64(i % 8)
	}
	packed := kernelPack(t, 8, 3, putValues(8, vals))
	if len(packed) != 384 {
		t.Fatalf("packed length %d, want 384", len(packed))
	}
	want := [3][]byte{
		mustHex(t, "004992DB246DB6FF"),
		mustHex(t, "009224B649DB6DFF"),
		mustHex(t, "0024496D92B6DBFF"),
	}
	for k := 0; k < 3; k++ {
		if got := packed[128*k : 128*k+8]; !bytes.Equal(got, want[k]) {
			t.Errorf("bytes %d..%d = % X, want % X", 128*k, 128*k+8, got, want[k])
		}
		for l := 0; l < 128; l++ {
			if got, w := packed[128*k+l], want[k][l%8]; got != w {
				t.Fatalf("byte %d = %02X, want %02X", 128*k+l, got, w)
			}
		}
	}
	if got := kernelUnpack(8, 3, packed); !bytes.Equal(got, putValues(8, vals)) {
		t.Fatal("unpack does not invert pack")
	}
}

func TestFastLanesExampleT32W5(t *testing.T) {
	vals := make([]uint64, 1024)
	for i := range vals {
		vals[i] = uint64(i >> 5)
	}
	packed := kernelPack(t, 32, 5, putValues(32, vals))
	if len(packed) != 640 {
		t.Fatalf("packed length %d, want 640", len(packed))
	}
	if got := binary.LittleEndian.Uint32(packed); got != 0x29062080 {
		t.Fatalf("word 0 = %#08x, want 0x29062080", got)
	}
	if got := kernelUnpack(32, 5, packed); !bytes.Equal(got, putValues(32, vals)) {
		t.Fatal("unpack does not invert pack")
	}
}

// TestFastLanesAgainstReference checks the kernel against the bit-at-a-time
// reference for every word width and bit width on random data.
func TestFastLanesAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, bits := range testWidths {
		for w := 0; w <= bits; w++ {
			vals := make([]uint64, 1024)
			for i := range vals {
				vals[i] = rng.Uint64() & maskOf(bits) // wider than w: kernel must mask
			}
			src := putValues(bits, vals)
			got := kernelPack(t, bits, w, src)
			want := putValues(bits, refPack(bits, w, vals))
			if !bytes.Equal(got, want) {
				t.Fatalf("T=%d W=%d: kernel differs from reference", bits, w)
			}
			un := getValues(bits, kernelUnpack(bits, w, got))
			for i, v := range un {
				if v != vals[i]&maskOf(w) {
					t.Fatalf("T=%d W=%d: value %d = %#x, want %#x", bits, w, i, v, vals[i]&maskOf(w))
				}
			}
			if w == bits {
				// Full width is a pure transposition.
				lanes := 1024 / bits
				order := [8]int{0, 4, 2, 6, 1, 5, 3, 7}
				pw := getValues(bits, got)
				for r := 0; r < bits; r++ {
					for l := 0; l < lanes; l++ {
						if pw[r*lanes+l] != vals[16*order[r/8]+128*(r%8)+l] {
							t.Fatalf("T=%d full width: word %d not a transposition", bits, r*lanes+l)
						}
					}
				}
			}
		}
	}
}

// TestPortableByteOrder reruns the bit-exactness and round-trip tests with
// the native little-endian fast path disabled, covering the code big-endian
// hosts use.
func TestPortableByteOrder(t *testing.T) {
	saved := flNativeLE
	flNativeLE = false
	defer func() { flNativeLE = saved }()
	TestFastLanesExampleT8W3(t)
	TestFastLanesExampleT32W5(t)
	TestFastLanesAgainstReference(t)
	TestInlineExample(t)
	TestOutOfLineExample(t)
	TestInlineRoundTrip(t)
	TestOutOfLineRoundTrip(t)
}

func TestInlineExample(t *testing.T) {
	src := putValues(32, []uint64{5, 3, 7})
	got, err := AppendInlineBitpacked(nil, 32, src, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 388)
	want[0] = 3
	binary.LittleEndian.PutUint32(want[4:], 5)
	binary.LittleEndian.PutUint32(want[8:], 3)
	binary.LittleEndian.PutUint32(want[12:], 7)
	if !bytes.Equal(got, want) {
		t.Fatalf("got % X\nwant % X", got, want)
	}
	all, err := appendInlineBitpackedAll(nil, 32, src, 3)
	if err != nil || !bytes.Equal(all, want) {
		t.Fatalf("appendInlineBitpackedAll differs: %v", err)
	}
	dec, err := decodeInlineBitpacked([]byte{0xAA}, 32, got, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dec, append([]byte{0xAA}, src...)) {
		t.Fatalf("decoded % X", dec)
	}
}

func TestOutOfLineExample(t *testing.T) {
	vals := make([]uint64, 1030)
	for i := range vals {
		vals[i] = uint64(i % 8)
	}
	src := putValues(16, vals)
	got, err := AppendOutOfLineBitpacked(nil, 16, 3, src, 1030)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 396 {
		t.Fatalf("length %d, want 396", len(got))
	}
	if head := mustHex(t, "000049929224DBB6"); !bytes.Equal(got[:8], head) {
		t.Fatalf("head % X, want % X", got[:8], head)
	}
	if tail := mustHex(t, "000001000200030004000500"); !bytes.Equal(got[len(got)-12:], tail) {
		t.Fatalf("tail % X, want % X", got[len(got)-12:], tail)
	}
	dec, err := decodeOutOfLineBitpacked(nil, 16, 3, got, 1030)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(dec, src) {
		t.Fatal("round trip mismatch")
	}
}

var roundTripCounts = []int{0, 1, 2, 100, 1023, 1024, 1025, 2048, 3000}

// randomValues returns n values of exactly bit length w (when n > 0 and
// w > 0) drawn from rng.
func randomValues(rng *rand.Rand, n, w int) []uint64 {
	vals := make([]uint64, n)
	for i := range vals {
		vals[i] = rng.Uint64() & maskOf(w)
	}
	if n > 0 && w > 0 {
		vals[rng.IntN(n)] |= 1 << uint(w-1)
	}
	return vals
}

func inlineSize(bits int, vals []uint64) int {
	size := 0
	for off := 0; off < len(vals); off += 1024 {
		end := min(off+1024, len(vals))
		var or uint64
		for _, v := range vals[off:end] {
			or |= v
		}
		w := 0
		for or>>uint(w) != 0 && w < 64 {
			w++
		}
		size += (1 + 1024*w/bits) * bits / 8
	}
	return size
}

func TestInlineRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, bits := range testWidths {
		for w := 0; w <= bits; w++ {
			for _, n := range roundTripCounts {
				vals := randomValues(rng, n, w)
				if n > 2000 {
					// Give later chunks different widths.
					for i := 1024; i < 2048; i++ {
						vals[i] >>= uint(w / 2)
					}
				}
				src := putValues(bits, vals)
				enc, err := appendInlineBitpackedAll([]byte("pre"), bits, src, n)
				if err != nil {
					t.Fatalf("T=%d W=%d n=%d: %v", bits, w, n, err)
				}
				if string(enc[:3]) != "pre" {
					t.Fatal("prefix clobbered")
				}
				enc = enc[3:]
				if want := inlineSize(bits, vals); len(enc) != want {
					t.Fatalf("T=%d W=%d n=%d: size %d, want %d", bits, w, n, len(enc), want)
				}
				if n > 0 && n <= 1024 {
					one, err := AppendInlineBitpacked(nil, bits, src, n)
					if err != nil || !bytes.Equal(one, enc) {
						t.Fatalf("T=%d W=%d n=%d: single chunk differs (%v)", bits, w, n, err)
					}
					if got := int(bpReadWord(bits, enc)); got != w {
						t.Fatalf("T=%d W=%d n=%d: width word %d", bits, w, n, got)
					}
				}
				dec, err := decodeInlineBitpacked(nil, bits, enc, n)
				if err != nil {
					t.Fatalf("T=%d W=%d n=%d: decode: %v", bits, w, n, err)
				}
				if !bytes.Equal(dec, src) {
					t.Fatalf("T=%d W=%d n=%d: round trip mismatch", bits, w, n)
				}
			}
		}
	}
}

func TestOutOfLineRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, bits := range testWidths {
		for w := 0; w <= bits; w++ {
			for _, n := range append(roundTripCounts, 1024+1024*w/bits, 1024+1024*w/bits+1) {
				vals := randomValues(rng, n, w)
				src := putValues(bits, vals)
				enc, err := AppendOutOfLineBitpacked([]byte{1, 2}, bits, w, src, n)
				if err != nil {
					t.Fatalf("T=%d W=%d n=%d: %v", bits, w, n, err)
				}
				enc = enc[2:]
				wpc, full, r := 1024*w/bits, n/1024, n%1024
				words := full * wpc
				if r > 0 {
					if w*(1024-r) < (bits-w)*r {
						words += wpc
					} else {
						words += r
					}
				}
				if len(enc) != words*bits/8 {
					t.Fatalf("T=%d W=%d n=%d: size %d, want %d", bits, w, n, len(enc), words*bits/8)
				}
				dec, err := decodeOutOfLineBitpacked([]byte{9}, bits, w, enc, n)
				if err != nil {
					t.Fatalf("T=%d W=%d n=%d: decode: %v", bits, w, n, err)
				}
				if !bytes.Equal(dec[1:], src) || dec[0] != 9 {
					t.Fatalf("T=%d W=%d n=%d: round trip mismatch", bits, w, n)
				}
				// Packed groups must be bit-identical to the kernel.
				if full > 0 {
					if want := putValues(bits, refPack(bits, w, vals[:1024])); !bytes.Equal(enc[:len(want)], want) {
						t.Fatalf("T=%d W=%d n=%d: first group differs from reference", bits, w, n)
					}
				}
				if w < bits && n > 0 {
					vals[n-1] = 1 << uint(w)
					if _, err := AppendOutOfLineBitpacked(nil, bits, w, putValues(bits, vals), n); !errors.Is(err, ErrNotApplicable) {
						t.Fatalf("T=%d W=%d n=%d: too-wide value: err %v", bits, w, n, err)
					}
				}
			}
		}
	}
}

func TestInlineDecodeErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, bits := range testWidths {
		bpw := bits / 8
		w := bits / 2
		n := 1500
		src := putValues(bits, randomValues(rng, n, w))
		enc, err := appendInlineBitpackedAll(nil, bits, src, n)
		if err != nil {
			t.Fatal(err)
		}
		check := func(name string, data []byte, n int) {
			t.Helper()
			dst := []byte("keep")
			out, err := decodeInlineBitpacked(dst, bits, data, n)
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("T=%d %s: err = %v, want ErrCorrupt", bits, name, err)
			}
			if string(out) != "keep" {
				t.Errorf("T=%d %s: dst modified", bits, name)
			}
		}
		for _, cut := range []int{1, bpw, 100, len(enc) / 2, len(enc) - 1} {
			check(fmt.Sprintf("truncated to %d", cut), enc[:cut], n)
		}
		check("empty", nil, n)
		check("one extra byte", append(bytes.Clone(enc), 0), n)
		check("extra chunk", append(bytes.Clone(enc), make([]byte, bpw)...), n)
		check("too few values", enc, 1024)
		check("too many values", enc, 2049)
		check("negative count", enc, -1)
		check("huge count", enc, 1<<60)
		check("zero count with bytes", enc, 0)
		for _, bad := range []uint64{uint64(bits) + 1, 255, 1 << 40} {
			if bits < 64 && bad > maskOf(bits) {
				continue
			}
			data := bytes.Clone(enc)
			copy(data, putValues(bits, []uint64{bad}))
			check(fmt.Sprintf("width %d", bad), data, n)
		}
		// Width word raised by one: body now too short.
		data := bytes.Clone(enc)
		copy(data, putValues(bits, []uint64{uint64(w + 1)}))
		check("width mismatch", data, n)
		if _, err := decodeInlineBitpacked(nil, 24, enc, n); !errors.Is(err, ErrUnsupported) {
			t.Errorf("bits=24: err = %v, want ErrUnsupported", err)
		}
	}
}

func TestOutOfLineDecodeErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, bits := range testWidths {
		bpw := bits / 8
		w := bits / 2
		for _, n := range []int{1024, 1030, 2000} {
			src := putValues(bits, randomValues(rng, n, w))
			enc, err := AppendOutOfLineBitpacked(nil, bits, w, src, n)
			if err != nil {
				t.Fatal(err)
			}
			check := func(name string, data []byte, w, n int) {
				t.Helper()
				out, err := decodeOutOfLineBitpacked([]byte("keep"), bits, w, data, n)
				if !errors.Is(err, ErrCorrupt) {
					t.Errorf("T=%d n=%d %s: err = %v, want ErrCorrupt", bits, n, name, err)
				}
				if string(out) != "keep" {
					t.Errorf("T=%d n=%d %s: dst modified", bits, n, name)
				}
			}
			check("truncated word", enc[:len(enc)-bpw], w, n)
			check("empty", nil, w, n)
			check("extra word", append(bytes.Clone(enc), make([]byte, bpw)...), w, n)
			check("width above T", enc, bits+1, n)
			check("negative width", enc, -1, n)
			check("negative count", enc, w, -1)
			check("wrong width", enc, w+1, n)
			if bpw > 1 {
				check("partial word", enc[:len(enc)-1], w, n)
			}
		}
		if _, err := decodeOutOfLineBitpacked(nil, 12, 3, nil, 0); !errors.Is(err, ErrUnsupported) {
			t.Errorf("bits=12: err = %v, want ErrUnsupported", err)
		}
	}
}

func TestEncoderArgErrors(t *testing.T) {
	src := putValues(32, []uint64{1, 2, 3})
	if _, err := AppendInlineBitpacked(nil, 32, src, 4); !errors.Is(err, ErrCorrupt) {
		t.Errorf("short src: %v", err)
	}
	if _, err := AppendInlineBitpacked(nil, 32, make([]byte, 4*1025), 1025); err == nil {
		t.Error("single chunk of 1025 accepted")
	}
	if _, err := appendInlineBitpackedAll(nil, 7, src, 3); !errors.Is(err, ErrUnsupported) {
		t.Errorf("bits=7: %v", err)
	}
	if _, err := AppendOutOfLineBitpacked(nil, 32, 33, src, 3); !errors.Is(err, ErrNotApplicable) {
		t.Errorf("w=33: %v", err)
	}
	if _, err := AppendOutOfLineBitpacked(nil, 32, 0, src, 3); !errors.Is(err, ErrNotApplicable) {
		t.Errorf("w=0 with nonzero values: %v", err)
	}
	if out, err := AppendOutOfLineBitpacked(nil, 32, 0, make([]byte, 12), 3); err != nil || len(out) != 0 {
		t.Errorf("w=0 zeros: %d bytes, %v", len(out), err)
	}
	if out, err := decodeOutOfLineBitpacked(nil, 32, 0, nil, 3); err != nil || !bytes.Equal(out, make([]byte, 12)) {
		t.Errorf("w=0 decode: % X, %v", out, err)
	}
	// W=0 with exactly r bytes of words: the length rule says raw tail.
	if out, err := decodeOutOfLineBitpacked(nil, 8, 0, []byte{0x30}, 1); err != nil || !bytes.Equal(out, []byte{0x30}) {
		t.Errorf("w=0 raw tail decode: % X, %v", out, err)
	}
	if out, err := decodeOutOfLineBitpacked(nil, 16, 0, []byte{1, 0, 2, 0}, 1026); err != nil ||
		!bytes.Equal(out, append(make([]byte, 2048), 1, 0, 2, 0)) {
		t.Errorf("w=0 group + raw tail decode: %d bytes, %v", len(out), err)
	}
	if out, err := AppendInlineBitpacked(nil, 16, nil, 0); err != nil || !bytes.Equal(out, []byte{0, 0}) {
		t.Errorf("empty single chunk: % X, %v", out, err)
	}
	if out, err := appendInlineBitpackedAll(nil, 16, nil, 0); err != nil || len(out) != 0 {
		t.Errorf("empty all: % X, %v", out, err)
	}
}

func TestBitLength(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, bits := range testWidths {
		for w := 0; w <= bits; w++ {
			for _, n := range []int{1, 3, 5, 7, 9, 33, 1000} {
				vals := randomValues(rng, n, w)
				src := putValues(bits, vals)
				if got := bitLength(bits, src, n); got != w {
					t.Fatalf("T=%d W=%d n=%d: bitLength = %d", bits, w, n, got)
				}
				// Bytes beyond n must be ignored.
				src = append(src, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF)
				if got := bitLength(bits, src, n); got != w {
					t.Fatalf("T=%d W=%d n=%d: bitLength with trailing bytes = %d", bits, w, n, got)
				}
			}
		}
	}
	if bitLength(8, nil, 0) != 0 || bitLength(12, []byte{1, 2}, 1) != 0 || bitLength(32, []byte{1}, 5) != 0 {
		t.Error("degenerate bitLength")
	}
}

func fuzzBits(sel uint8) int { return testWidths[sel%4] }

func FuzzDecodeInlineBitpacked(f *testing.F) {
	enc, _ := appendInlineBitpackedAll(nil, 32, putValues(32, []uint64{5, 3, 7}), 3)
	f.Add(enc, uint8(2), uint16(3))
	vals := make([]uint64, 1500)
	for i := range vals {
		vals[i] = uint64(i * 7 % 200)
	}
	for sel := uint8(0); sel < 4; sel++ {
		bits := fuzzBits(sel)
		enc, _ := appendInlineBitpackedAll(nil, bits, putValues(bits, vals), len(vals))
		f.Add(enc, sel, uint16(len(vals)))
	}
	f.Add([]byte{0}, uint8(0), uint16(1024))
	f.Add([]byte{9, 1, 2}, uint8(0), uint16(1))
	f.Add([]byte{}, uint8(1), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, sel uint8, n uint16) {
		bits := fuzzBits(sel)
		out, err := decodeInlineBitpacked(nil, bits, data, int(n))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("unexpected error class: %v", err)
			}
			return
		}
		if len(out) != int(n)*bits/8 {
			t.Fatalf("decoded %d bytes for %d values", len(out), n)
		}
		re, err := appendInlineBitpackedAll(nil, bits, out, int(n))
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeInlineBitpacked(nil, bits, re, int(n))
		if err != nil || !bytes.Equal(back, out) {
			t.Fatalf("re-encode round trip failed: %v", err)
		}
	})
}

func FuzzDecodeOutOfLineBitpacked(f *testing.F) {
	vals := make([]uint64, 1030)
	for i := range vals {
		vals[i] = uint64(i % 8)
	}
	for sel := uint8(0); sel < 4; sel++ {
		bits := fuzzBits(sel)
		enc, _ := AppendOutOfLineBitpacked(nil, bits, 3, putValues(bits, vals), len(vals))
		f.Add(enc, sel, uint8(3), uint16(len(vals)))
		enc, _ = AppendOutOfLineBitpacked(nil, bits, 3, putValues(bits, vals[:1500%len(vals)]), 1500%len(vals))
		f.Add(enc, sel, uint8(3), uint16(1500%len(vals)))
	}
	f.Add([]byte{}, uint8(0), uint8(0), uint16(100))
	f.Add([]byte{1, 2, 3}, uint8(1), uint8(70), uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, sel, w uint8, n uint16) {
		bits := fuzzBits(sel)
		out, err := decodeOutOfLineBitpacked(nil, bits, int(w), data, int(n))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("unexpected error class: %v", err)
			}
			return
		}
		if len(out) != int(n)*bits/8 {
			t.Fatalf("decoded %d bytes for %d values", len(out), n)
		}
		if bitLength(bits, out, int(n)) <= int(w) {
			// In-range data re-encodes to equivalent bytes.
			re, err := AppendOutOfLineBitpacked(nil, bits, int(w), out, int(n))
			if err != nil {
				t.Fatal(err)
			}
			// Full groups are bijective so must match byte for byte. The
			// tail may differ: the decoder accepts a raw tail wherever the
			// length says so while the encoder picks the smaller form, and
			// padding lanes of a packed tail may hold junk in data.
			full := int(n) / 1024 * 128 * int(w)
			if !bytes.Equal(re[:full], data[:full]) {
				t.Fatal("re-encoded full groups differ")
			}
			back, err := decodeOutOfLineBitpacked(nil, bits, int(w), re, int(n))
			if err != nil || !bytes.Equal(back, out) {
				t.Fatalf("re-encode round trip failed: %v", err)
			}
		}
	})
}

func FuzzInlineRoundTrip(f *testing.F) {
	f.Add([]byte{5, 0, 0, 0, 3, 0, 0, 0, 7, 0, 0, 0}, uint8(2), uint16(1))
	f.Add(bytes.Repeat([]byte{0x81, 0x7F, 0}, 1400), uint8(0), uint16(0))
	f.Add(bytes.Repeat([]byte{0xFF}, 8*1100), uint8(3), uint16(3))
	f.Fuzz(func(t *testing.T, data []byte, sel uint8, rep uint16) {
		bits := fuzzBits(sel)
		// Optionally stretch the input so multi-chunk inputs are reachable.
		if r := int(rep % 4); r > 0 && len(data) > 0 {
			data = bytes.Repeat(data, 1+r*(2048/len(data)+1)/2)
		}
		n := len(data) / (bits / 8)
		src := data[:n*bits/8]
		enc, err := appendInlineBitpackedAll(nil, bits, src, n)
		if err != nil {
			t.Fatal(err)
		}
		dec, err := decodeInlineBitpacked(nil, bits, enc, n)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dec, src) {
			t.Fatal("inline round trip mismatch")
		}
		w := bitLength(bits, src, n)
		enc, err = AppendOutOfLineBitpacked(nil, bits, w, src, n)
		if err != nil {
			t.Fatal(err)
		}
		dec, err = decodeOutOfLineBitpacked(nil, bits, w, enc, n)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dec, src) {
			t.Fatal("out-of-line round trip mismatch")
		}
	})
}

func benchValues(bits, w, n int) []byte {
	rng := rand.New(rand.NewPCG(13, 14))
	return putValues(bits, randomValues(rng, n, w))
}

func BenchmarkInlineBitpack(b *testing.B) {
	const bits, w, n = 32, 7, 64 * 1024
	src := benchValues(bits, w, n)
	var dst []byte
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		dst, err = appendInlineBitpackedAll(dst[:0], bits, src, n)
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInlineUnpack(b *testing.B) {
	const bits, w, n = 32, 7, 64 * 1024
	src := benchValues(bits, w, n)
	enc, err := appendInlineBitpackedAll(nil, bits, src, n)
	if err != nil {
		b.Fatal(err)
	}
	var dst []byte
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		dst, err = decodeInlineBitpacked(dst[:0], bits, enc, n)
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOutOfLineUnpack(b *testing.B) {
	const bits, w, n = 32, 7, 64 * 1024
	src := benchValues(bits, w, n)
	enc, err := AppendOutOfLineBitpacked(nil, bits, w, src, n)
	if err != nil {
		b.Fatal(err)
	}
	var dst []byte
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		dst, err = decodeOutOfLineBitpacked(dst[:0], bits, w, enc, n)
		if err != nil {
			b.Fatal(err)
		}
	}
}
