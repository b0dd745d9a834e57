package reader_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/reader"
)

// The files under testdata/sparse were written by pylance 14.0.2 with
// testdata/sparse/make.py; every value is a function of the row number, so
// the expected content is rebuilt here with the same formulas.

// sparseGolden is one pylance-written single-column file with its expected
// page cell.
type sparseGolden struct {
	file string
	cell string
	rows int
	want func(mem memory.Allocator) arrow.Array
}

var sparseGoldens = []sparseGolden{
	{"fsl768_null99.lance", "sparse x zipped", 20000, goldenFSL},
	{"str400_null99.lance", "sparse x zipped", 20000, goldenStrings},
	{"list_int32_100k.lance", "sparse x chunked", 100000, goldenLists},
	{"lowcard1k_null90.lance", "sparse x indexed", 20000, goldenLowCard},
	{"struct_str_null99.lance", "sparse x zipped", 20000, goldenStructStrings},
	{"list_fsl64_100k.lance", "sparse x zipped", 100000, goldenListVectors},
}

// mix is splitmix64 of x, as in make.py.
func mix(x uint64) uint64 {
	z := x + 0x9E3779B97F4A7C15
	z = (z ^ z>>30) * 0xBF58476D1CE4E5B9
	z = (z ^ z>>27) * 0x94D049BB133111EB
	return z ^ z>>31
}

const goldenAlpha = "abcdefghijklmnopqrstuvwxyz0123456789"

// goldenText is n characters drawn by the hash chain of seed.
func goldenText(seed uint64, n int) string {
	b := make([]byte, n)
	h := seed
	for i := range b {
		h = mix(h)
		b[i] = goldenAlpha[h%uint64(len(goldenAlpha))]
	}
	return string(b)
}

func goldenFSL(mem memory.Allocator) arrow.Array {
	const dim = 768
	bld := array.NewFixedSizeListBuilder(mem, dim, arrow.PrimitiveTypes.Float32)
	defer bld.Release()
	vb := bld.ValueBuilder().(*array.Float32Builder)
	for i := uint64(0); i < 20000; i++ {
		if mix(i)%100 != 0 {
			bld.AppendNull()
			continue
		}
		bld.Append(true)
		base := float64(i % 4096)
		for j := 0; j < dim; j++ {
			vb.Append(float32(base + float64(j)/1024))
		}
	}
	return bld.NewArray()
}

func goldenStrings(mem memory.Allocator) arrow.Array {
	bld := array.NewStringBuilder(mem)
	defer bld.Release()
	for i := uint64(0); i < 20000; i++ {
		h := mix(i)
		if h%100 != 0 {
			bld.AppendNull()
			continue
		}
		bld.Append(goldenText(i, 350+int(h>>8%100)))
	}
	return bld.NewArray()
}

func goldenLists(mem memory.Allocator) arrow.Array {
	bld := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int32)
	defer bld.Release()
	vb := bld.ValueBuilder().(*array.Int32Builder)
	for i := uint64(0); i < 100000; i++ {
		h := mix(i)
		switch r := h % 200; {
		case r < 2:
			bld.Append(true)
			for k := uint64(0); k < 1+h>>8%5; k++ {
				vb.Append(int32(i + k))
			}
		case r < 101:
			bld.AppendNull()
		default:
			bld.Append(true)
		}
	}
	return bld.NewArray()
}

func goldenLowCard(mem memory.Allocator) arrow.Array {
	pool := make([]string, 100)
	for v := range pool {
		pool[v] = goldenText(1_000_000+uint64(v), 1024)
	}
	bld := array.NewStringBuilder(mem)
	defer bld.Release()
	for i := uint64(0); i < 20000; i++ {
		if h := mix(i); h%10 == 0 {
			bld.Append(pool[h>>8%100])
		} else {
			bld.AppendNull()
		}
	}
	return bld.NewArray()
}

func goldenStructStrings(mem memory.Allocator) arrow.Array {
	bld := array.NewStructBuilder(mem, arrow.StructOf(
		arrow.Field{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64, Nullable: true}))
	defer bld.Release()
	sb := bld.FieldBuilder(0).(*array.StringBuilder)
	xb := bld.FieldBuilder(1).(*array.Int64Builder)
	for i := uint64(0); i < 20000; i++ {
		h := mix(i)
		switch r := h % 100; {
		case r == 0:
			bld.Append(true)
			sb.Append(goldenText(i, 300+int(h>>8%50)))
			xb.Append(int64(i))
		case r == 1:
			bld.Append(true)
			sb.AppendNull()
			xb.Append(int64(i))
		case r < 50:
			bld.AppendNull()
		default:
			bld.Append(true)
			sb.AppendNull()
			xb.AppendNull()
		}
	}
	return bld.NewArray()
}

func goldenListVectors(mem memory.Allocator) arrow.Array {
	const dim = 64
	bld := array.NewListBuilder(mem, arrow.FixedSizeListOf(dim, arrow.PrimitiveTypes.Float32))
	defer bld.Release()
	fb := bld.ValueBuilder().(*array.FixedSizeListBuilder)
	vb := fb.ValueBuilder().(*array.Float32Builder)
	for i := uint64(0); i < 100000; i++ {
		h := mix(i)
		switch r := h % 200; {
		case r < 1:
			bld.Append(true)
			for k := uint64(0); k < 1+h>>8%3; k++ {
				if h>>(k+3)%4 == 0 {
					fb.AppendNull()
					continue
				}
				fb.Append(true)
				for j := uint64(0); j < dim; j++ {
					vb.Append(float32(i + k + j))
				}
			}
		case r < 101:
			bld.AppendNull()
		default:
			bld.Append(true)
		}
	}
	return bld.NewArray()
}

func readGolden(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "sparse", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// leafRows lists the top-level rows of a column that hold a leaf value
// (valid, and for lists non-empty) and the null rows.
func leafRows(a arrow.Array) (valid, null []int64) {
	for i := 0; i < a.Len(); i++ {
		if a.IsNull(i) {
			null = append(null, int64(i))
			continue
		}
		if l, ok := a.(*array.List); ok {
			if s, e := l.ValueOffsets(i); s == e {
				continue
			}
		}
		valid = append(valid, int64(i))
	}
	return valid, null
}

// TestSparseGolden: the pylance-written files have the expected sparse
// cells and read back to the content make.py wrote, whole and by ranges.
func TestSparseGolden(t *testing.T) {
	mem := memory.NewGoAllocator()
	for _, g := range sparseGoldens {
		t.Run(g.file, func(t *testing.T) {
			f := open(t, readGolden(t, g.file))
			if p := f.Pages(0); len(p) != 1 || p[0].Cell != g.cell {
				t.Fatalf("pages %+v, want one %s page", p, g.cell)
			}
			want := g.want(mem)
			defer want.Release()
			all, err := f.ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			defer all.Release()
			if !array.Equal(all.Column(0), want) {
				t.Fatalf("ReadAll differs from the written content")
			}
		})
	}
}

// TestSparseWindowsRandom: random row ranges and random takes of the
// sparse pages equal the same rows of the written content.
func TestSparseWindowsRandom(t *testing.T) {
	mem := memory.NewGoAllocator()
	rng := rand.New(rand.NewPCG(7, 11))
	for _, g := range sparseGoldens {
		t.Run(g.file, func(t *testing.T) {
			f := open(t, readGolden(t, g.file))
			want := g.want(mem)
			defer want.Release()
			n := int64(g.rows)
			for it := 0; it < 60; it++ {
				var start, k int64
				switch it % 3 {
				case 0: // short
					start = rng.Int64N(n)
					k = rng.Int64N(min(n-start, 5) + 1)
				case 1: // medium
					start = rng.Int64N(n)
					k = rng.Int64N(min(n-start, 3000) + 1)
				default: // anywhere
					start = rng.Int64N(n + 1)
					k = rng.Int64N(n - start + 1)
				}
				rec, err := f.ReadRange(start, k)
				if err != nil {
					t.Fatalf("ReadRange(%d, %d): %v", start, k, err)
				}
				exp := array.NewSlice(want, start, start+k)
				if !array.Equal(rec.Column(0), exp) {
					t.Fatalf("ReadRange(%d, %d) differs", start, k)
				}
				exp.Release()
				rec.Release()
			}
			for it := 0; it < 80; it++ {
				idx := make([]int64, 1+rng.IntN(50))
				for i := range idx {
					idx[i] = rng.Int64N(n)
					if i > 0 && rng.IntN(4) == 0 {
						idx[i] = min(idx[i-1]+1, n-1) // runs of consecutive rows
					}
				}
				if it%2 == 0 {
					// Sorted: many runs of one page, decoded together
					// (and, with the join off, one by one).
					slices.Sort(idx)
				}
				prev := f.SetSparseJoin(it%4 != 0)
				rec, err := f.Take(idx)
				f.SetSparseJoin(prev)
				if err != nil {
					t.Fatalf("Take(%v): %v", idx, err)
				}
				for i, r := range idx {
					got := array.NewSlice(rec.Column(0), int64(i), int64(i)+1)
					exp := array.NewSlice(want, r, r+1)
					if !array.Equal(got, exp) {
						t.Fatalf("Take row %d (index %d) differs", r, i)
					}
					got.Release()
					exp.Release()
				}
				rec.Release()
			}
		})
	}
}

// openCounting opens a golden file with fresh IO counters.
func openCounting(t testing.TB, name string) *reader.File {
	f := open(t, readGolden(t, name))
	f.ResetIOStats()
	return f
}
