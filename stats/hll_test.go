package stats

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestHLLAccuracy(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var h HLL
	var buf [24]byte
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		kinds := []struct {
			name string
			add  func(i int)
		}{
			{"sequential u64", func(i int) { h.Add64(uint64(i)) }},
			{"strided u64", func(i int) { h.Add64(uint64(i) << 20) }},
			{"random u64", func(int) { h.Add64(r.Uint64()) }},
			{"decimal strings", func(i int) { h.AddBytes(strconv.AppendInt(buf[:0], int64(i), 10)) }},
			{"long strings", func(i int) {
				b := append(buf[:0], "customer-000000"...)
				h.AddBytes(binary.LittleEndian.AppendUint64(b, uint64(i)))
			}},
		}
		for _, k := range kinds {
			h.Reset()
			for i := range n {
				k.add(i)
				if i%3 == 0 { // duplicates must not count
					k.add(i)
				}
			}
			if k.name == "random u64" { // re-adding drew new values: n + n/3 distinct
				n := n + (n+2)/3
				checkRel(t, k.name, h.Estimate(), n)
				continue
			}
			checkRel(t, k.name, h.Estimate(), n)
		}
	}
}

func checkRel(t *testing.T, name string, got uint64, n int) {
	t.Helper()
	e := math.Abs(float64(got)/float64(n) - 1)
	if e >= 0.05 {
		t.Errorf("%s n=%d: estimate %d, relative error %.3f", name, n, got, e)
	} else {
		t.Logf("%s n=%d: estimate %d, relative error %.4f", name, n, got, e)
	}
}

func TestHLLSmall(t *testing.T) {
	var h HLL
	for n := 0; n <= 300; n++ {
		h.Reset()
		for i := range n {
			h.Add64(uint64(i))
			h.Add64(uint64(i))
		}
		got := h.Estimate()
		if n <= 256 && got != uint64(n) {
			t.Fatalf("n=%d: estimate %d, want exact", n, got)
		}
		if d := math.Abs(float64(got) - float64(n)); d > 0.03*float64(n)+3 {
			t.Fatalf("n=%d: estimate %d", n, got)
		}
	}
	// Past the sparse limit the estimate stays near-exact for a while.
	for _, n := range []int{257, 400, 1000} {
		h.Reset()
		for i := range n {
			h.AddBytes([]byte(strconv.Itoa(i)))
		}
		if got := h.Estimate(); math.Abs(float64(got)-float64(n)) > 0.03*float64(n)+3 {
			t.Errorf("strings n=%d: estimate %d", n, got)
		}
	}
}

func TestHLLReset(t *testing.T) {
	var h HLL
	for i := range 5000 {
		h.Add64(uint64(i))
	}
	h.Reset()
	if h != (HLL{}) {
		t.Fatal("Reset left state behind")
	}
	h.Add64(1)
	if h.Estimate() != 1 {
		t.Fatal("estimate after reset")
	}
}

func TestHashBytesDistinguishes(t *testing.T) {
	seen := map[uint64]string{}
	add := func(s string) {
		x := HashBytes([]byte(s))
		if prev, ok := seen[x]; ok && prev != s {
			t.Fatalf("collision %q %q", prev, s)
		}
		seen[x] = s
	}
	add("")
	for n := 1; n <= 40; n++ {
		for pos := range n {
			b := make([]byte, n)
			add(string(b))
			b[pos] = 1
			add(string(b))
		}
	}
}

func BenchmarkHLLEstimate(b *testing.B) {
	var h HLL
	for i := range 100_000 {
		h.Add64(uint64(i))
	}
	var e uint64
	for b.Loop() {
		e = h.Estimate()
	}
	_ = e
}
