package reader_test

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/reader"
)

// BenchmarkSparse reads the pylance sparse golden files and the same data
// written by planar (dense pages today): a full scan, a take of one random
// row, of one random row holding a value, and of 100 random rows. The file
// is open and warm (the sparse structure is cached after the first read);
// req/op and B-read/op are the IO of one operation.
//
// Run with: go test ./reader -run '^$' -bench Sparse -benchtime 20x
func BenchmarkSparse(b *testing.B) {
	mem := memory.NewGoAllocator()
	for _, g := range sparseGoldens[:4] {
		sparse := readGolden(b, g.file)
		want := g.want(mem)
		valid, _ := leafRows(want)
		schema := open(b, sparse).Schema()
		rec := array.NewRecordBatch(schema, []arrow.Array{want}, int64(want.Len()))
		dense := writeFile(b, rec)
		rec.Release()
		want.Release()
		for _, v := range []struct {
			name string
			data []byte
		}{{"sparse", sparse}, {"planar", dense}} {
			f := open(b, v.data)
			cell := strings.ReplaceAll(f.Pages(0)[0].Cell, " ", "")
			prefix := strings.TrimSuffix(g.file, ".lance") + "/" + v.name + "=" + cell + "/"
			rows := f.NumRows()
			run := func(name string, op func(r *rand.Rand) error) {
				b.Run(prefix+name, func(b *testing.B) {
					r := rand.New(rand.NewPCG(1, 2))
					if err := op(r); err != nil { // warm-up
						b.Fatal(err)
					}
					before := f.IOStats()
					for b.Loop() {
						if err := op(r); err != nil {
							b.Fatal(err)
						}
					}
					io := f.IOStats().Sub(before)
					b.ReportMetric(float64(io.Requests)/float64(b.N), "req/op")
					b.ReportMetric(float64(io.Bytes)/float64(b.N), "B-read/op")
				})
			}
			release := func(rec arrow.RecordBatch, err error) error {
				if err == nil {
					rec.Release()
				}
				return err
			}
			run("ReadAll", func(*rand.Rand) error { return release(f.ReadAll()) })
			run("Take1", func(r *rand.Rand) error { return release(f.Take([]int64{r.Int64N(rows)})) })
			run("Take1valid", func(r *rand.Rand) error { return release(f.Take([]int64{valid[r.IntN(len(valid))]})) })
			idx := make([]int64, 100)
			run("Take100", func(r *rand.Rand) error {
				for i := range idx {
					idx[i] = r.Int64N(rows)
				}
				return release(f.Take(idx))
			})
			b.Run(prefix+"OpenTake1valid", func(b *testing.B) {
				// Cold: open, then read one row holding a value.
				r := rand.New(rand.NewPCG(3, 4))
				var io reader.IOStats
				for b.Loop() {
					f, err := reader.Open(bytes.NewReader(v.data), int64(len(v.data)))
					if err != nil {
						b.Fatal(err)
					}
					if err := release(f.Take([]int64{valid[r.IntN(len(valid))]})); err != nil {
						b.Fatal(err)
					}
					s := f.IOStats()
					io.Requests += s.Requests
					io.Bytes += s.Bytes
				}
				b.ReportMetric(float64(io.Requests)/float64(b.N), "req/op")
				b.ReportMetric(float64(io.Bytes)/float64(b.N), "B-read/op")
			})
		}
	}
}
