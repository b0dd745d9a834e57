package bulk

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"unsafe"
)

func TestAppendCopy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, Piece - 1, Piece, Piece + 1, 3*Piece + 17} {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		for _, pre := range []int{0, 5} {
			dst := bytes.Repeat([]byte{9}, pre)
			got := Append(dst, src)
			if !bytes.Equal(got[:pre], dst[:pre]) || !bytes.Equal(got[pre:], src) {
				t.Errorf("Append(%d bytes after %d) differs", n, pre)
			}
		}
		out := make([]byte, n+3)
		if k := Copy(out, src); k != n || !bytes.Equal(out[:n], src) {
			t.Errorf("Copy of %d bytes: %d copied or bytes differ", n, k)
		}
		short := make([]byte, n/2)
		if k := Copy(short, src); k != n/2 || !bytes.Equal(short, src[:n/2]) {
			t.Errorf("Copy into %d of %d bytes: %d copied", n/2, n, k)
		}
	}
	z := bytes.Repeat([]byte{7}, 2*Piece+3)
	Clear(z[1:])
	if z[0] != 7 || !bytes.Equal(z[1:], make([]byte, 2*Piece+2)) {
		t.Error("Clear left bytes or cleared outside")
	}
	var c Counter
	for range 3 * Piece / 1000 {
		c.Add(1000)
	}
	if c.n >= Piece {
		t.Errorf("counter at %d, past a piece", c.n)
	}
}

func TestMake(t *testing.T) {
	for _, n := range []int{-1, 0, 1, 7, 4096, 1 << 20, 3<<20 + 5} {
		b := Make(n)
		if len(b) != 0 || cap(b) < max(n, 0) || (n <= 0) != (b == nil) {
			t.Fatalf("Make(%d): len %d cap %d nil %v", n, len(b), cap(b), b == nil)
		}
		// Its memory is the caller's whole: written and read back, and
		// not shared with a second one.
		n = max(n, 0)
		b = b[:n:n]
		other := Make(n)[:n]
		for i := range b {
			b[i] = byte(i * 7)
		}
		for i := range other {
			other[i] = 0xFF
		}
		for i := range b {
			if b[i] != byte(i*7) {
				t.Fatalf("Make(%d): byte %d is %d after writing %d", n, i, b[i], byte(i*7))
			}
		}
	}
}

func TestGrow(t *testing.T) {
	var s []uint64
	for round := range 5 {
		n := []int{0, 3, 1 << 10, 1 << 18, 5}[round]
		before := slices.Clone(s)
		s = Grow(s, n)
		if cap(s)-len(s) < n || !slices.Equal(s, before) {
			t.Fatalf("round %d: Grow(%d): len %d cap %d, kept %v", round, n, len(s), cap(s), slices.Equal(s, before))
		}
		for i := range n {
			s = append(s, uint64(round)<<32|uint64(i))
		}
	}
	if g := Grow(s, 1); &g[:1][0] != &s[:1][0] && cap(s)-len(s) >= 1 {
		t.Fatal("Grow with room moved the slice")
	}
	var b []bool
	if b = Grow(b, 0); b != nil {
		t.Fatal("Grow(nil, 0) allocated")
	}
}

func TestTable(t *testing.T) {
	for _, n := range []int{0, 1, 1000, 1 << 16} {
		s := Table[uint64](n)
		if len(s) != n || slices.ContainsFunc(s, func(v uint64) bool { return v != 0 }) {
			t.Fatalf("Table(%d): len %d, not all zero", n, len(s))
		}
	}
	b := []byte{1, 2, 3}
	FaultIn(b) // under 64 KiB: left alone (new memory is zero anyway)
	big := make([]byte, 64<<10)
	FaultIn(big)
	if !slices.Equal(b, []byte{1, 2, 3}) || slices.ContainsFunc(big, func(v byte) bool { return v != 0 }) {
		t.Fatal("FaultIn changed what it should not")
	}
}

// TestZeroed: buffers from Zeroed are zero wherever they start and end
// (sizes around the lazy threshold and page multiples), also when the
// heap hands back memory just dirtied; writes into them stay.
func TestZeroed(t *testing.T) {
	for _, n := range []int{0, 1, 4095, lazyZeroMin - 1, lazyZeroMin, lazyZeroMin + 1, lazyZeroMin + 4096*3 + 17, 8 << 20} {
		for round := range 3 {
			// Dirty memory the next allocations may reuse.
			junk := Make(n + 4096)[:n+4096]
			for i := range junk {
				junk[i] = 0xA5
			}
			junk = nil
			runtime.GC()
			b := Zeroed(n)
			if len(b) != n {
				t.Fatalf("Zeroed(%d): %d bytes", n, len(b))
			}
			for i, v := range b {
				if v != 0 {
					t.Fatalf("Zeroed(%d), round %d: byte %d is %#x, not zero", n, round, i, v)
				}
			}
			for i := 0; i < n; i += 5000 {
				b[i] = byte(i) | 1
			}
			for i := 0; i < n; i++ {
				want := byte(0)
				if i%5000 == 0 {
					want = byte(i) | 1
				}
				if b[i] != want {
					t.Fatalf("Zeroed(%d), round %d: byte %d holds %d after the writes, want %d", n, round, i, b[i], want)
				}
			}
		}
	}
}

// TestZeroedFor: buffers for few writes (a page in eight at most) and for
// many are zero, and take the writes.
func TestZeroedFor(t *testing.T) {
	for _, tc := range []struct{ n, writes, each int }{
		{8 << 20, 10, 3072}, {8 << 20, 2000, 4}, {8 << 20, 2000, 3072}, {100, 5, 4},
	} {
		b := ZeroedFor(tc.n, tc.writes, tc.each)
		for i, v := range b {
			if v != 0 {
				t.Fatalf("%+v: byte %d is %#x", tc, i, v)
			}
		}
		if len(b) != tc.n {
			t.Fatalf("%+v: %d bytes", tc, len(b))
		}
		for k := range tc.writes {
			at := k * (tc.n / tc.writes)
			copy(b[at:at+tc.each], bytes.Repeat([]byte{7}, tc.each))
		}
	}
}

// TestCompact: parts appended into regions of a buffer join back to back,
// in place (the buffer's own memory) when every part lies at its region's
// start, and into a new buffer when one was moved by an append; empty parts
// and a single part too.
func TestCompact(t *testing.T) {
	starts := []int{0, 10, 20, 30}
	fill := func(buf []byte, j int, s string) []byte {
		return append(buf[starts[j]:starts[j]:starts[j+1]], s...)
	}
	buf := Make(30)
	parts := [][]byte{fill(buf, 0, "abc"), fill(buf, 1, ""), fill(buf, 2, "defghij")}
	out := Compact(buf, starts, parts)
	if string(out) != "abcdefghij" || unsafe.SliceData(out) != unsafe.SliceData(buf[:1]) {
		t.Fatalf("in place: %q (own memory: %v)", out, unsafe.SliceData(out) == unsafe.SliceData(buf[:1]))
	}
	buf = Make(30)
	parts = [][]byte{fill(buf, 0, "abc"), fill(buf, 1, "0123456789XY"), fill(buf, 2, "de")}
	out = Compact(buf, starts, parts)
	if string(out) != "abc0123456789XYde" || unsafe.SliceData(out) == unsafe.SliceData(buf[:1]) {
		t.Fatalf("one part outgrown: %q", out)
	}
	one := []byte("only")
	if out := Compact(Make(30), starts[:2], [][]byte{one}); unsafe.SliceData(out) != unsafe.SliceData(one) {
		t.Fatal("a single part is not returned as it is")
	}
}
