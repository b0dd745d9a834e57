package writer

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/structural"
)

// sparseStrings builds a string-like array of n slots (typ: utf8,
// large_utf8 or binary), a share null of them, from buffers so that some
// null slots span bytes (Arrow allows it; they store none). distinct > 0
// draws the values from that many; lo and hi bound their lengths.
func sparseStrings(r *rand.Rand, typ arrow.DataType, n int, null float64, lo, hi, distinct int) arrow.Array {
	pool := make([][]byte, max(distinct, 1))
	word := func() []byte {
		v := make([]byte, lo+r.IntN(hi-lo+1))
		for i := range v {
			v[i] = "abcdefghijklmnopqrstuvwxyz/._-0123456789"[r.IntN(40)]
		}
		return v
	}
	for i := range pool {
		pool[i] = word()
	}
	valid := make([]byte, (n+7)/8)
	var data []byte
	ends := make([]int64, 1, n+1)
	for i := 0; i < n; i++ {
		v := word()
		if distinct > 0 {
			v = pool[r.IntN(distinct)]
		}
		if r.Float64() >= null {
			bitutil.SetBit(valid, i)
			data = append(data, v...)
		} else if r.IntN(8) == 0 {
			data = append(data, "junk"...) // bytes under a null slot
		}
		ends = append(ends, int64(len(data)))
	}
	offs := corpus.OffsetsBuffer(ends, typ.ID() == arrow.LARGE_STRING || typ.ID() == arrow.LARGE_BINARY)
	d := array.NewData(typ, n, []*memory.Buffer{memory.NewBufferBytes(valid), memory.NewBufferBytes(offs), memory.NewBufferBytes(data)}, nil, array.UnknownNullCount, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// TestGatherVariableValid checks the valid-only gather of strings against
// the gather of every slot with the null slots left out: sliced arrays,
// null slots spanning bytes, several segments, 32- and 64-bit offsets.
func TestGatherVariableValid(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	for _, typ := range []arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.LargeString, arrow.BinaryTypes.Binary} {
		for _, null := range []float64{0, 0.5, 0.99, 1} {
			t.Run(fmt.Sprintf("%s/%v", typ, null), func(t *testing.T) {
				var segs []structural.Segment
				for k := 0; k < 4; k++ {
					a := sparseStrings(r, typ, 300+r.IntN(300), null, 0, 9, 0)
					defer a.Release()
					s := array.NewSlice(a, int64(r.IntN(50)), int64(a.Len()-r.IntN(50)))
					defer s.Release()
					lo := r.IntN(40)
					segs = append(segs, structural.Segment{Arr: s, Start: lo, End: s.Len() - r.IntN(40)})
				}
				allOffs, allData := gatherVariable([]uint64{0}, nil, segs)
				var nulls []bool
				for _, s := range segs {
					for i := s.Start; i < s.End; i++ {
						nulls = append(nulls, s.Arr.IsNull(i))
					}
				}
				wantOffs, wantData := []uint64{0}, []byte{}
				for i, null := range nulls {
					if !null {
						wantData = append(wantData, allData[allOffs[i]:allOffs[i+1]]...)
						wantOffs = append(wantOffs, uint64(len(wantData)))
					}
				}
				valid := len(wantOffs) - 1
				offs, data := gatherVariableValid([]uint64{0}, nil, segs, valid)
				if !slices.Equal(offs, wantOffs) || !bytes.Equal(data, wantData) {
					t.Fatalf("valid-only gather: %d offsets, %d bytes; want %d offsets, %d bytes", len(offs), len(data), len(wantOffs), len(wantData))
				}
			})
		}
	}
}

// TestBorrowVariable: a page of one segment of strings is read from the
// array's own buffer, with the gather's offsets and bytes, unless a null
// slot spans bytes (then it is gathered) or the page has several segments;
// a page of any segments is read from their buffers (borrowParts), parts
// that joined are the gathered bytes, unless a null slot spans bytes.
func TestBorrowVariable(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 1))
	for _, typ := range []arrow.DataType{arrow.BinaryTypes.String, arrow.BinaryTypes.LargeBinary} {
		for _, null := range []float64{0, 0.3, 1} {
			a := sparseStrings(r, typ, 500, null, 0, 12, 0)
			defer a.Release()
			// (a has bytes under some null slots; noJunk the same values
			// without.)
			b := array.NewBuilder(memory.NewGoAllocator(), typ)
			for i := 0; i < a.Len(); i++ {
				if a.IsNull(i) {
					b.AppendNull()
				} else {
					b.AppendValueFromString(a.ValueStr(i))
				}
			}
			noJunk := b.NewArray()
			defer noJunk.Release()
			for _, tc := range []struct {
				name string
				segs []structural.Segment
				want bool
			}{
				{"no junk", []structural.Segment{{Arr: noJunk, Start: 17, End: 480}}, true},
				{"junk under nulls", []structural.Segment{{Arr: a, Start: 0, End: 500}}, null == 0},
				{"two segments", []structural.Segment{{Arr: noJunk, Start: 0, End: 100}, {Arr: noJunk, Start: 200, End: 300}}, false},
				{"three segments, one with junk", []structural.Segment{{Arr: noJunk, Start: 0, End: 100}, {Arr: a, Start: 3, End: 400}, {Arr: noJunk, Start: 250, End: 250}}, false},
			} {
				wantOffs, wantData := gatherVariable([]uint64{0}, nil, tc.segs)
				offs, parts, firsts, ok := borrowParts([]uint64{0}, tc.segs)
				if want := !slices.ContainsFunc(tc.segs, func(s structural.Segment) bool { return s.Arr == a }) || null == 0; ok != want {
					t.Fatalf("%s/%v/%s: borrowed parts %v, want %v", typ, null, tc.name, ok, want)
				}
				if ok {
					first := 0
					for k, sg := range tc.segs {
						if firsts[k] != first {
							t.Fatalf("%s/%v/%s: part %d from value %d, want %d", typ, null, tc.name, k, firsts[k], first)
						}
						first += sg.End - sg.Start
					}
					if !slices.Equal(offs, wantOffs) || !bytes.Equal(bytes.Join(parts, nil), wantData) {
						t.Fatalf("%s/%v/%s: borrowed parts differ from the gathered values", typ, null, tc.name)
					}
				}
				offs, data, ok := borrowVariable([]uint64{0}, tc.segs)
				if ok != tc.want {
					t.Fatalf("%s/%v/%s: borrowed %v, want %v", typ, null, tc.name, ok, tc.want)
				}
				if !ok {
					continue
				}
				if !slices.Equal(offs, wantOffs) || !bytes.Equal(data, wantData) {
					t.Fatalf("%s/%v/%s: borrowed values differ from the gathered ones", typ, null, tc.name)
				}
				if cap(data) != len(data) {
					t.Fatalf("%s/%v/%s: borrowed buffer not capped", typ, null, tc.name)
				}
			}
		}
	}
}

// TestCompactStringsSameBytes writes flat string columns whose pages the
// cost policy settles as sparse from their counts, with the valid-only
// gather and without it: the files must be byte for byte the same (the
// stats, the trial sample, the FSST training sample and the sparse zipped
// values are the page's either way), whatever the lengths, cardinality
// (a page dictionary sends the page back to a gather of every slot),
// offsets width, batch splits and page budgets.
func TestCompactStringsSameBytes(t *testing.T) {
	var taken atomic.Int64
	testHookCompact = func() { taken.Add(1) }
	defer func() { testHookCompact = nil }()
	type tc struct {
		name          string
		typ           arrow.DataType
		rows          int
		null          float64
		lo, hi, dist  int
		batches       int
		pageBytes     int64
		wantCompacted bool
	}
	cases := []tc{
		{"short 99%", arrow.BinaryTypes.String, 50000, 0.99, 12, 20, 0, 1, 0, true},
		{"empty and short 99%", arrow.BinaryTypes.String, 50000, 0.99, 0, 3, 0, 3, 0, true},
		{"long fsst 99%", arrow.BinaryTypes.String, 80000, 0.99, 60, 200, 0, 2, 0, true},
		{"wide 99.5%", arrow.BinaryTypes.LargeString, 40000, 0.995, 300, 600, 0, 1, 0, true},
		{"binary 99.9%", arrow.BinaryTypes.Binary, 100000, 0.999, 5, 40, 0, 4, 0, true},
		{"few valid", arrow.BinaryTypes.String, 10000, 0.9995, 5, 40, 0, 1, 0, true},
		// (Gathered valid-only, then again, every slot, for the page
		// dictionary the ladder tries.)
		{"low cardinality 99%", arrow.BinaryTypes.String, 200000, 0.99, 8, 30, 5, 1, 0, true},
		// (Zipped when sparse, so only the page dictionary, which the
		// ladder must see, sends it back to every slot.)
		{"wide repeated 99%", arrow.BinaryTypes.String, 300000, 0.99, 300, 600, 100, 1, 0, true},
		{"small pages 99%", arrow.BinaryTypes.String, 300000, 0.99, 10, 80, 0, 5, 64 << 10, true},
		{"at the threshold", arrow.BinaryTypes.String, 4096, 0.99, 10, 20, 0, 1, 0, true},
		{"not settled 90%", arrow.BinaryTypes.String, 50000, 0.9, 10, 20, 0, 1, 0, false},
		{"too few rows", arrow.BinaryTypes.String, 4000, 0.999, 10, 20, 0, 1, 0, false},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 11))
			a := sparseStrings(r, c.typ, c.rows, c.null, c.lo, c.hi, c.dist)
			defer a.Release()
			schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: c.typ, Nullable: true}}, nil)
			rec := array.NewRecordBatch(schema, []arrow.Array{a}, int64(c.rows))
			defer rec.Release()
			cuts := make([]int64, c.batches+1)
			for k := range cuts {
				cuts[k] = int64(k * c.rows / c.batches)
			}
			opts := []Option{WithFormat(Format2_3), WithPolicy(selector.PolicyCost)}
			if c.pageBytes > 0 {
				opts = append(opts, WithMaxPageBytes(c.pageBytes))
			}
			got, want, rep, wantRep := writeToggled(t, &compactStrings, &taken, c.wantCompacted, func() ([]byte, []PageReport) {
				return writeCut(t, rec, cuts, opts...)
			})
			if !bytes.Equal(got, want) {
				for k := range rep {
					if k < len(wantRep) && (rep[k].Encoding != wantRep[k].Encoding || rep[k].Bytes != wantRep[k].Bytes) {
						t.Logf("page %d: %s %q %d B; every slot: %s %q %d B", k, rep[k].Cell, rep[k].Encoding, rep[k].Bytes, wantRep[k].Cell, wantRep[k].Encoding, wantRep[k].Bytes)
					}
				}
				t.Fatalf("valid-only gather wrote %d bytes, every slot %d, and they differ", len(got), len(want))
			}
			t.Logf("%d pages, %d gathered valid-only; first: %s, %s", len(rep), taken.Load(), rep[0].Cell, rep[0].Encoding)
		})
	}
}

// writeToggled writes a file with a path of the writer enabled (on) and
// again with it disabled, taken counting the pages that take it (its test
// hook adds to it), and returns both files and reports. It fails t when
// the path runs while disabled, or runs (on some page) or not against
// wantTaken.
func writeToggled(t *testing.T, on *bool, taken *atomic.Int64, wantTaken bool, write func() ([]byte, []PageReport)) (with, without []byte, withRep, withoutRep []PageReport) {
	t.Helper()
	defer func() { *on = true }()
	*on = true
	taken.Store(0)
	with, withRep = write()
	n := taken.Load()
	*on = false
	without, withoutRep = write()
	if taken.Load() != n {
		t.Fatal("the path ran with it disabled")
	}
	if (n > 0) != wantTaken {
		t.Fatalf("%d pages took the path, want some: %v", n, wantTaken)
	}
	return with, without, withRep, withoutRep
}

// writeCut writes rec as the batches between consecutive cuts (row
// numbers, from 0 to its row count) and returns the file and the writer's
// report.
func writeCut(t *testing.T, rec arrow.RecordBatch, cuts []int64, opts ...Option) ([]byte, []PageReport) {
	t.Helper()
	var buf bytes.Buffer
	w, err := New(&buf, rec.Schema(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k+1 < len(cuts); k++ {
		part := rec.NewSlice(cuts[k], cuts[k+1])
		err := w.WriteBatch(part)
		part.Release()
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), w.Report()
}
