package reader

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/writer"
)

// TestWindowFsstStaysCoded: chunks of FSST-coded strings under Zstd (the
// string windows, General{Zstd, Fsst{Variable}}) are decompressed but left
// FSST-coded when a take reads them, as plain FSST chunks are: only the
// values a take returns are expanded. Takes and reads equal the input.
func TestWindowFsstStaysCoded(t *testing.T) {
	mem := memory.NewGoAllocator()
	r := rand.New(rand.NewPCG(3, 4))
	words := []string{"red", "green", "blue", "cyan"}
	const rows = 60_000
	b := array.NewStringBuilder(mem)
	defer b.Release()
	for i := range rows {
		if i%50 == 7 {
			b.AppendNull()
			continue
		}
		b.Append(fmt.Sprintf("https://www.example.com/catalog/%s/item-%d?ref=%s", words[r.IntN(4)], r.IntN(100000), words[i%3]))
	}
	col := b.NewStringArray()
	defer col.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "u", Type: col.DataType(), Nullable: true}}, nil)
	rec := array.NewRecordBatch(schema, []arrow.Array{col}, rows)
	defer rec.Release()
	for _, fv := range []writer.Format{writer.Format2_2, writer.Format2_3} {
		var buf bytes.Buffer
		w, err := writer.New(&buf, schema, writer.WithFormat(fv),
			writer.WithColumnOptions("u", map[string]string{selector.KeyStringWindows: "on"}))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteBatch(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		f, err := Open(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		windows := 0
		for pi, p := range f.columns[0] {
			if !strings.HasPrefix(p.encoding(), "values=general(zstd,fsst(") {
				continue
			}
			windows++
			m, err := f.denseMetaFor(p)
			if err != nil {
				t.Fatal(err)
			}
			if m.fsst == nil {
				t.Fatalf("%v page %d: no FSST table for %s", fv, pi, p.encoding())
			}
			dc, err := f.chunk(p, m, 0, pageCache{})
			if err != nil {
				t.Fatal(err)
			}
			raw, err := m.fsst.DecodeBlock(dc.vals)
			if err != nil {
				t.Fatal(err)
			}
			if len(dc.vals.Data) >= len(raw.Data) {
				t.Errorf("%v page %d: a take's chunk holds %d bytes, its values expanded %d: not FSST-coded", fv, pi, len(dc.vals.Data), len(raw.Data))
			}
		}
		if windows == 0 {
			t.Fatalf("%v: no page in windows of FSST-coded strings: %+v", fv, f.Pages(0))
		}
		for _, n := range []int{1, 20, 100, 5000} {
			idx := make([]int64, 0, n)
			for k := range n {
				idx = append(idx, int64(k)*rows/int64(n)+int64(r.IntN(rows/n)))
			}
			got, err := f.Take(idx)
			if err != nil {
				t.Fatal(err)
			}
			gc := got.Column(0)
			for k, i := range idx {
				if !array.SliceEqual(gc, int64(k), int64(k+1), col, i, i+1) {
					t.Fatalf("%v take of %d rows: row %d (file row %d) differs", fv, n, k, i)
				}
			}
			got.Release()
		}
		all, err := f.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if !array.Equal(all.Column(0), col) {
			t.Fatalf("%v: ReadAll differs", fv)
		}
		all.Release()
	}
}
