package writer

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/selector"
)

// stringColumn builds n string-like values of type typ (no bytes under
// null slots), a share null of them, value i from gen.
func stringColumn(r *rand.Rand, typ arrow.DataType, n int, null float64, gen func(i int) string) arrow.Array {
	b := array.NewBuilder(memory.NewGoAllocator(), typ)
	defer b.Release()
	for i := range n {
		if r.Float64() < null {
			b.AppendNull()
			continue
		}
		switch b := b.(type) {
		case *array.StringBuilder:
			b.Append(gen(i))
		case *array.LargeStringBuilder:
			b.Append(gen(i))
		case *array.BinaryBuilder:
			b.Append([]byte(gen(i)))
		}
	}
	return b.NewArray()
}

// TestStringPartsSameBytes writes string columns in several batches, so
// that pages of a MiB or more span several arrays, with their values left
// in the arrays' buffers (FSST coding, the stats pass, the samples and the
// page dictionary read them there) and with them gathered first: the files
// must be byte for byte the same, under both formats and policies,
// whether the page is coded with FSST, takes a page dictionary, holds
// nulls, is masked by null parents, or cannot be left in parts (bytes
// under null slots, too many batches).
func TestStringPartsSameBytes(t *testing.T) {
	var taken atomic.Int64
	testHookParts = func() { taken.Add(1) }
	defer func() { testHookParts = nil }()
	words := []string{"alpha", "bravo", "charlie", "delta"}
	url := func(r *rand.Rand) func(int) string {
		return func(i int) string {
			return fmt.Sprintf("https://www.example.com/catalog/%s/item-%d?ref=%s", words[r.IntN(4)], r.IntN(100000), words[i%3])
		}
	}
	letters := func(r *rand.Rand) func(int) string {
		return func(int) string {
			v := make([]byte, 12+r.IntN(9))
			for k := range v {
				v[k] = byte('a' + r.IntN(26))
			}
			return string(v)
		}
	}
	lowcard := func(r *rand.Rand) func(int) string {
		return func(int) string { return words[r.IntN(4)] + "-" + words[r.IntN(3)] }
	}
	type tc struct {
		name      string
		typ       arrow.DataType
		rows      int
		null      float64
		gen       func(*rand.Rand) func(int) string
		batches   int
		junk      bool // sparseStrings: bytes under some null slots
		masked    bool // under a struct with null rows over valid values
		wantParts bool
	}
	cases := []tc{
		{"urls", arrow.BinaryTypes.String, 60000, 0, url, 5, false, false, true},
		{"urls with nulls", arrow.BinaryTypes.LargeString, 60000, 0.3, url, 7, false, false, true},
		{"letters", arrow.BinaryTypes.Binary, 150000, 0.05, letters, 6, false, false, true},
		{"low cardinality", arrow.BinaryTypes.String, 150000, 0.1, lowcard, 4, false, false, true},
		{"masked by null parents", arrow.BinaryTypes.String, 60000, 0, url, 5, false, true, true},
		{"bytes under nulls", arrow.BinaryTypes.String, 120000, 0.2, nil, 5, true, false, false},
		{"too many batches", arrow.BinaryTypes.String, 30000, 0, url, 100, false, false, false},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(i), 36))
			var col arrow.Array
			if c.junk {
				col = sparseStrings(r, c.typ, c.rows, c.null, 10, 40, 0)
			} else {
				col = stringColumn(r, c.typ, c.rows, c.null, c.gen(r))
			}
			defer col.Release()
			field := arrow.Field{Name: "s", Type: c.typ, Nullable: true}
			if c.masked {
				valid := make([]byte, bitutil.BytesForBits(int64(c.rows)))
				nulls := 0
				for k := range c.rows {
					if r.IntN(5) == 0 {
						nulls++
					} else {
						bitutil.SetBit(valid, k)
					}
				}
				st, err := array.NewStructArrayWithNulls([]arrow.Array{col}, []string{"s"}, memory.NewBufferBytes(valid), nulls, 0)
				if err != nil {
					t.Fatal(err)
				}
				col.Release()
				col = st
				field = arrow.Field{Name: "st", Type: st.DataType(), Nullable: true}
			}
			rec := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{field}, nil), []arrow.Array{col}, int64(c.rows))
			defer rec.Release()
			cuts := make([]int64, c.batches+1)
			for k := range cuts {
				cuts[k] = int64(k * c.rows / c.batches)
			}
			for _, f := range []Format{Format2_2, Format2_3} {
				for _, p := range []selector.Policy{selector.PolicyCost, selector.PolicyLance} {
					got, want, rep, _ := writeToggled(t, &stringParts, &taken, c.wantParts, func() ([]byte, []PageReport) {
						return writeCut(t, rec, cuts, WithFormat(f), WithPolicy(p))
					})
					if !bytes.Equal(got, want) {
						t.Fatalf("%v %v: pages in parts (first: %s, %s) wrote %d bytes, gathered %d, and they differ", f, p, rep[0].Cell, rep[0].Encoding, len(got), len(want))
					}
				}
			}
		})
	}
}

// TestStringPartsRandomCases writes the random corpus cases (nested
// schemas, sliced batches, nulls at every level, both formats, policies
// and page budgets) with every string page of several segments left in
// parts, whatever its size, and gathered: the same bytes.
func TestStringPartsRandomCases(t *testing.T) {
	var taken atomic.Int64
	testHookParts = func() { taken.Add(1) }
	defer func() { testHookParts = nil }()
	defer func(prev int) { minPartsBytes = prev }(minPartsBytes)
	minPartsBytes = 0
	mem := memory.NewGoAllocator()
	cases, inParts := 0, int64(0)
	for seed := uint64(0); seed < 120; seed++ {
		rc := corpus.RandomCase(mem, seed)
		opts := []Option{WithPolicy(selector.PolicyCost)}
		if rc.Policy == "lance" {
			opts[0] = WithPolicy(selector.PolicyLance)
		}
		if rc.Format == "2.2" {
			opts = append(opts, WithFormat(Format2_2))
		}
		if rc.PageBytes > 0 {
			opts = append(opts, WithMaxPageBytes(rc.PageBytes))
		}
		write := func(parts bool) ([]byte, error) {
			stringParts = parts
			defer func() { stringParts = true }()
			var buf bytes.Buffer
			w, err := New(&buf, rc.Schema, opts...)
			if err != nil {
				return nil, err
			}
			for _, b := range rc.Batches {
				if err := w.WriteBatch(b); err != nil {
					return nil, err
				}
			}
			return buf.Bytes(), w.Close()
		}
		taken.Store(0)
		got, err := write(true)
		n := taken.Load()
		want, wantErr := write(false)
		rc.Release()
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%s: with parts %v, gathered %v", rc, err, wantErr)
		}
		if err != nil {
			continue
		}
		cases++
		inParts += n
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: %d pages in parts, and the file differs from the gathered one", rc, n)
		}
	}
	if inParts == 0 {
		t.Fatalf("%d cases written, no page left in parts", cases)
	}
	t.Logf("%d cases, %d pages left in parts", cases, inParts)
}
