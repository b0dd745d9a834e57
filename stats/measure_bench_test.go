package stats

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

const benchN = 1 << 20

func benchValues(kind string, width int) []byte {
	r := rand.New(rand.NewPCG(7, 8))
	vals := make([]uint64, benchN)
	for i := range vals {
		switch kind {
		case "random":
			vals[i] = r.Uint64()
		case "small": // 16 distinct values, no runs to speak of
			vals[i] = uint64(r.IntN(16))
		case "sorted": // timestamp-like: non-decreasing, some repeats
			if i > 0 {
				vals[i] = vals[i-1] + uint64(r.IntN(4))
			}
		}
	}
	return le(width, vals...)
}

var sink FixedStats

func BenchmarkFixed(b *testing.B) {
	for _, width := range []int{32, 64} {
		for _, kind := range []string{"random", "small", "sorted"} {
			data := benchValues(kind, width)
			b.Run(fmt.Sprintf("u%d/%s", width, kind), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					sink = Fixed(data, width, benchN, nil)
				}
			})
		}
	}
	for _, n := range []int{128, 4096} { // per-call overhead on small pages
		data := benchValues("random", 64)[:8*n]
		b.Run(fmt.Sprintf("u64/random-%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				sink = Fixed(data, 64, n, nil)
			}
		})
	}
	data := benchValues("random", 64)
	nulls := make([]bool, benchN)
	for i := range nulls {
		nulls[i] = i%7 == 3
	}
	b.Run("u64/random-nulls", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			sink = Fixed(data, 64, benchN, nulls)
		}
	})
}

// BenchmarkPlainRead is the baseline: read and sum the same 1M little-endian
// u64 values that BenchmarkFixed/u64 measures.
func BenchmarkPlainRead(b *testing.B) {
	for _, kind := range []string{"random", "small"} {
		data := benchValues(kind, 64)
		b.Run("u64/"+kind, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			var sum uint64
			for b.Loop() {
				for p := data; len(p) >= 8; p = p[8:] {
					sum += binary.LittleEndian.Uint64(p)
				}
			}
			sinkSum = sum
		})
	}
	// The same sum over the bytes reinterpreted as []uint64: the fastest
	// possible read, a stricter baseline.
	data := benchValues("random", 64)
	words := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(data))), benchN)
	b.Run("u64-words/random", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		var sum uint64
		for b.Loop() {
			for _, v := range words {
				sum += v
			}
		}
		sinkSum = sum
	})
}

var sinkSum uint64

func BenchmarkVariable(b *testing.B) {
	const n = 1 << 20 // a large page: measured in pieces on several cores
	r := rand.New(rand.NewPCG(9, 10))
	offsets := make([]uint64, n+1)
	var data []byte
	for i := range n {
		l := 3 + r.IntN(14) // 3..16 bytes
		for range l {
			data = append(data, byte('a'+r.IntN(26)))
		}
		offsets[i+1] = uint64(len(data))
	}
	b.SetBytes(int64(len(data) + 8*len(offsets)))
	var s VarStats
	for b.Loop() {
		s = Variable(offsets, data, nil)
	}
	_ = s
}

func BenchmarkLevels(b *testing.B) {
	r := rand.New(rand.NewPCG(11, 12))
	choppy := make([]uint16, benchN) // a change every ~12 levels
	mostlyValid := make([]uint16, benchN)
	for i := range choppy {
		if r.IntN(8) == 0 {
			choppy[i] = uint16(r.IntN(3))
		} else if i > 0 {
			choppy[i] = choppy[i-1]
		}
		mostlyValid[i] = 1
		if r.IntN(1000) == 0 { // a null now and then
			mostlyValid[i] = 0
		}
	}
	for _, c := range []struct {
		name   string
		levels []uint16
	}{{"choppy", choppy}, {"mostly-valid", mostlyValid}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(2 * len(c.levels)))
			var s LevelStats
			for b.Loop() {
				s = Levels(c.levels)
			}
			_ = s
		})
	}
}
