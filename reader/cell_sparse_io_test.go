package reader_test

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/reader"
)

// goldenIO describes the buffers of a golden sparse page: how many value
// buffers come first, and which of them the reader loads with the structure
// (addressing data: offset index, chunk words, indices and item offsets).
var goldenIO = map[string]struct {
	valueBufs int
	initBufs  []int
}{
	"fsl768_null99.lance":    {1, nil},
	"str400_null99.lance":    {2, []int{1}},
	"list_int32_100k.lance":  {2, []int{0}},
	"lowcard1k_null90.lance": {3, []int{0, 2}},
}

func take(t testing.TB, f *reader.File, idx ...int64) {
	t.Helper()
	rec, err := f.Take(idx)
	if err != nil {
		t.Fatal(err)
	}
	rec.Release()
}

// ioOf runs fn and returns the IO it made.
func ioOf(f *reader.File, fn func()) reader.IOStats {
	before := f.IOStats()
	fn()
	return f.IOStats().Sub(before)
}

// TestSparseStructureLoadedOnce: the first read of a sparse page reads its
// structural buffers and the value codec's addressing buffers once (and no
// other value bytes than the row's); later reads of the page read only
// value bytes.
func TestSparseStructureLoadedOnce(t *testing.T) {
	mem := memory.NewGoAllocator()
	for _, g := range sparseGoldens {
		if _, ok := goldenIO[g.file]; !ok {
			continue // several columns
		}
		t.Run(g.file, func(t *testing.T) {
			want := g.want(mem)
			defer want.Release()
			valid, _ := leafRows(want)
			f := openCounting(t, g.file)
			bufs := f.Pages(0)[0].Buffers
			gi := goldenIO[g.file]
			var meta reader.IOStats
			for i := gi.valueBufs; i < len(bufs); i++ {
				meta.Requests++
				meta.Bytes += int64(bufs[i].Size)
			}
			for _, i := range gi.initBufs {
				meta.Requests++
				meta.Bytes += int64(bufs[i].Size)
			}
			row := valid[len(valid)/2]
			cold := ioOf(f, func() { take(t, f, row) })
			warm := ioOf(f, func() { take(t, f, row) })
			if warm.Requests != 1 {
				t.Errorf("warm take of one valid row: %d requests, want 1", warm.Requests)
			}
			if got := cold.Sub(warm); got != meta {
				t.Errorf("cold minus warm take: %+v, want the structure and addressing buffers %+v", got, meta)
			}
			if again := ioOf(f, func() { take(t, f, row) }); again != warm {
				t.Errorf("third take %+v, second %+v", again, warm)
			}
			t.Logf("cold take %+v, warm take %+v", cold, warm)
		})
	}
}

// TestSparseNullTakeReadsNothing: once the structure is loaded, a take of
// rows holding no leaf value (nulls, empty lists) makes no request.
func TestSparseNullTakeReadsNothing(t *testing.T) {
	mem := memory.NewGoAllocator()
	for _, g := range sparseGoldens {
		if _, ok := goldenIO[g.file]; !ok {
			continue // several columns
		}
		t.Run(g.file, func(t *testing.T) {
			want := g.want(mem)
			defer want.Release()
			valid, null := leafRows(want)
			f := openCounting(t, g.file)
			take(t, f, valid[0])
			idx := []int64{null[0], null[len(null)/3], null[len(null)/2], null[len(null)-1]}
			if l, ok := want.(*array.List); ok {
				// Empty lists too.
				for i := 0; i < l.Len(); i++ {
					if s, e := l.ValueOffsets(i); l.IsValid(i) && s == e {
						idx = append(idx, int64(i))
						break
					}
				}
			}
			if got := ioOf(f, func() { take(t, f, idx...) }); got.Requests != 0 || got.Bytes != 0 {
				t.Errorf("take of rows %v without values: %+v", idx, got)
			}
			// A range of nulls only, too.
			if got := ioOf(f, func() {
				rec, err := f.ReadRange(null[0], 1)
				if err != nil {
					t.Fatal(err)
				}
				rec.Release()
			}); got.Requests != 0 {
				t.Errorf("range of one null row: %+v", got)
			}
		})
	}
}

// TestSparseOneValueRange: a warm take of one valid row reads exactly one
// value range: the row's w bytes for fixed-width zipped values, its record
// (from the offset index) for variable-width ones, the one chunk holding its
// leaf slots for chunked values, and one item for indexed values.
func TestSparseOneValueRange(t *testing.T) {
	mem := memory.NewGoAllocator()
	for _, g := range sparseGoldens {
		if _, ok := goldenIO[g.file]; !ok {
			continue // several columns
		}
		t.Run(g.file, func(t *testing.T) {
			want := g.want(mem)
			defer want.Release()
			valid, _ := leafRows(want)
			f := openCounting(t, g.file)
			bufs := f.Pages(0)[0].Buffers
			read := func(i int) []byte {
				b, err := f.ReadBuffer(bufs[i])
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			rng := rand.New(rand.NewPCG(3, uint64(len(g.file))))
			// Expected bytes for the k-th valid row.
			var expect func(k int, row int64) int64
			switch g.file {
			case "fsl768_null99.lance":
				expect = func(int, int64) int64 { return 768 * 4 }
			case "str400_null99.lance":
				idx := read(1)
				expect = func(k int, _ int64) int64 {
					return int64(binary.LittleEndian.Uint32(idx[4*k+4:]) - binary.LittleEndian.Uint32(idx[4*k:]))
				}
			case "list_int32_100k.lance":
				words := read(0)
				l := want.(*array.List)
				expect = func(_ int, row int64) int64 {
					s, e := l.ValueOffsets(int(row))
					first, size := int64(0), int64(-1)
					for c := 0; c < len(words)/4; c++ {
						w := binary.LittleEndian.Uint32(words[4*c:])
						n := int64(1) << (w & 0xF)
						if s >= first && s < first+n || c == len(words)/4-1 {
							size = int64(w>>4+1) * 8
							if e > first+n && c < len(words)/4-1 {
								size = -1 // spans two chunks: not checked
							}
							break
						}
						first += n
					}
					return size
				}
			case "lowcard1k_null90.lance":
				expect = func(int, int64) int64 { return -1 }
			}
			ordinal := map[int64]int{}
			for k, r := range valid {
				ordinal[r] = k
			}
			take(t, f, valid[0])
			for it := 0; it < 20; it++ {
				row := valid[rng.IntN(len(valid))]
				got := ioOf(f, func() { take(t, f, row) })
				if got.Requests != 1 {
					t.Fatalf("take of valid row %d: %d requests, want 1", row, got.Requests)
				}
				if w := expect(ordinal[row], row); w >= 0 && got.Bytes != w {
					t.Fatalf("take of valid row %d: %d bytes, want %d", row, got.Bytes, w)
				}
				if got.Bytes > 1<<14 {
					t.Fatalf("take of valid row %d: %d bytes", row, got.Bytes)
				}
			}
		})
	}
}

// TestSparseScanReadsOnce: a full read of a cold file reads every page
// buffer once (indexed items: at most once, only the items the rows name);
// a second full read reads only the value bytes.
func TestSparseScanReadsOnce(t *testing.T) {
	for _, g := range sparseGoldens {
		if _, ok := goldenIO[g.file]; !ok {
			continue // several columns
		}
		t.Run(g.file, func(t *testing.T) {
			f := openCounting(t, g.file)
			bufs := f.Pages(0)[0].Buffers
			var total, values int64
			gi := goldenIO[g.file]
			init := map[int]bool{}
			for _, i := range gi.initBufs {
				init[i] = true
			}
			for i, b := range bufs {
				total += int64(b.Size)
				if i < gi.valueBufs && !init[i] {
					values += int64(b.Size)
				}
			}
			scan := func() reader.IOStats {
				return ioOf(f, func() {
					rec, err := f.ReadAll()
					if err != nil {
						t.Fatal(err)
					}
					rec.Release()
				})
			}
			cold := scan()
			if cold.Requests != int64(len(bufs)) {
				t.Errorf("cold scan: %d requests for %d buffers", cold.Requests, len(bufs))
			}
			warm := scan()
			if warm.Requests != 1 {
				t.Errorf("warm scan: %d requests, want 1", warm.Requests)
			}
			if g.cell == "sparse x indexed" {
				// Items no valid row names (the empty item of the nulls)
				// are not read.
				if cold.Bytes > total || cold.Bytes < total-64 {
					t.Errorf("cold scan read %d bytes of %d", cold.Bytes, total)
				}
				if warm.Bytes > values || warm.Bytes < values-64 {
					t.Errorf("warm scan read %d bytes of %d value bytes", warm.Bytes, values)
				}
				return
			}
			if cold.Bytes != total {
				t.Errorf("cold scan read %d bytes, page holds %d", cold.Bytes, total)
			}
			if warm.Bytes != values {
				t.Errorf("warm scan read %d bytes, value buffers hold %d", warm.Bytes, values)
			}
			t.Logf("cold scan %+v, warm scan %+v (page %d bytes)", cold, warm, total)
		})
	}
}

// TestSparseScatteredTake: a warm take of k scattered rows reads at most
// one value range per row holding a value, each its values and the nearby
// values between them.
func TestSparseScatteredTake(t *testing.T) {
	mem := memory.NewGoAllocator()
	for _, g := range sparseGoldens {
		if _, ok := goldenIO[g.file]; !ok {
			continue // several columns
		}
		t.Run(g.file, func(t *testing.T) {
			want := g.want(mem)
			defer want.Release()
			valid, null := leafRows(want)
			f := openCounting(t, g.file)
			take(t, f, 0)
			var pageBytes int64
			for _, b := range f.Pages(0)[0].Buffers {
				pageBytes += int64(b.Size)
			}
			rng := rand.New(rand.NewPCG(5, 8))
			for _, k := range []int{1, 10, 100} {
				idx := make([]int64, 0, k)
				withValue := 0
				for len(idx) < k {
					// Half rows with a value, half without, in random order.
					if rng.IntN(2) == 0 {
						idx = append(idx, valid[rng.IntN(len(valid))])
						withValue++
					} else {
						idx = append(idx, null[rng.IntN(len(null))])
					}
				}
				got := ioOf(f, func() { take(t, f, idx...) })
				if got.Requests > int64(withValue) {
					t.Errorf("take of %d rows (%d with a value): %d requests", k, withValue, got.Requests)
				}
				// Each request reads its values and gaps of less than
				// coalesceGap between them.
				if limit := int64(withValue) * (reader.CoalesceGap + maxValueBytes(t, want)); got.Bytes > min(limit, pageBytes) {
					t.Errorf("take of %d rows (%d with a value) read %d bytes (a %d-byte page, at most %d)", k, withValue, got.Bytes, pageBytes, limit)
				}
				t.Logf("take %d (%d with a value): %+v", k, withValue, got)
			}
		})
	}
}

// TestSparseConcurrentReads: goroutines reading one File share the cached
// structure (loaded once) and get the same rows (run with -race).
func TestSparseConcurrentReads(t *testing.T) {
	mem := memory.NewGoAllocator()
	g := sparseGoldens[1]
	want := g.want(mem)
	defer want.Release()
	f := openCounting(t, g.file)
	bufs := f.Pages(0)[0].Buffers
	done := make(chan error)
	for w := 0; w < 4; w++ {
		go func(seed uint64) {
			r := rand.New(rand.NewPCG(seed, 1))
			for it := 0; it < 20; it++ {
				row := r.Int64N(int64(g.rows))
				rec, err := f.Take([]int64{row})
				if err != nil {
					done <- err
					return
				}
				exp := array.NewSlice(want, row, row+1)
				ok := array.Equal(rec.Column(0), exp)
				exp.Release()
				rec.Release()
				if !ok {
					done <- fmt.Errorf("row %d differs", row)
					return
				}
			}
			done <- nil
		}(uint64(w))
	}
	for w := 0; w < 4; w++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	// The offset index and the validity positions were read once: every
	// other request is one value record.
	var structure int64
	for _, b := range bufs[1:] {
		structure += int64(b.Size)
	}
	if s := f.IOStats(); s.Requests > int64(len(bufs)-1)+80 || s.Bytes < structure {
		t.Errorf("IO %+v for 80 takes (structure %d bytes)", s, structure)
	}
}

// TestSparseTakeCoalesces: a take fetches the values of a sparse zipped
// page once per run of adjacent value ordinals, whatever null rows lie
// between the rows and in whatever order they are asked.
func TestSparseTakeCoalesces(t *testing.T) {
	mem := memory.NewGoAllocator()
	g := sparseGoldens[0] // fixed-width zipped, 3072-byte values
	want := g.want(mem)
	defer want.Release()
	valid, null := leafRows(want)
	f := openCounting(t, g.file)
	take(t, f, null[0])
	cases := []struct {
		name     string
		idx      []int64
		requests int64
		bytes    int64
	}{
		{"neighbours in value order", []int64{valid[3], valid[4]}, 1, 2 * 3072},
		{"neighbours asked in reverse, nulls between", []int64{valid[9], null[5], valid[8], valid[7]}, 1, 3 * 3072},
		{"the same row twice", []int64{valid[5], null[1], valid[5]}, 1, 3072},
		{"two apart", []int64{valid[3], valid[10]}, 2, 2 * 3072},
	}
	for _, c := range cases {
		got := ioOf(f, func() { take(t, f, c.idx...) })
		if got.Requests != c.requests || got.Bytes != c.bytes {
			t.Errorf("%s: %+v, want %d requests of %d bytes", c.name, got, c.requests, c.bytes)
		}
	}
}

// maxValueBytes bounds the stored bytes of one value of a (the largest
// value plus a 64-bit length prefix).
func maxValueBytes(t *testing.T, a arrow.Array) int64 {
	t.Helper()
	var n int64
	switch x := a.(type) {
	case *array.String:
		for i := 0; i < x.Len(); i++ {
			n = max(n, int64(len(x.Value(i))))
		}
	case *array.List:
		longest := int64(0)
		for i := 0; i < x.Len(); i++ {
			s, e := x.ValueOffsets(i)
			longest = max(longest, e-s)
		}
		return maxValueBytes(t, x.ListValues())*longest + 8
	case *array.FixedSizeList:
		fw, ok := x.DataType().(*arrow.FixedSizeListType).Elem().(arrow.FixedWidthDataType)
		if !ok {
			t.Fatalf("fixed-size list of %v", x.DataType())
		}
		n = int64(x.DataType().(*arrow.FixedSizeListType).Len()) * int64(fw.BitWidth()/8)
	default:
		fw, ok := a.DataType().(arrow.FixedWidthDataType)
		if !ok {
			t.Fatalf("values of %v", a.DataType())
		}
		n = int64(fw.BitWidth() / 8)
	}
	return n + 8
}
