package reader_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/reader"
)

// takeBenchFiles are one planar file per column type: 1M rows of int64,
// strings (5-40 bytes) and list<int32> (1-8 items), 256Ki rows of
// strings of 200-600 bytes (zipped),, and 64Ki rows of
// fsl<f32,768> (3 KiB a row: 1M rows would be 3 GiB).
var (
	takeBenchOnce  sync.Once
	takeBenchFiles []takeBenchFile
)

type takeBenchFile struct {
	name string
	data []byte
}

func takeBenchData(b testing.TB) []takeBenchFile {
	takeBenchOnce.Do(func() {
		mem := memory.NewGoAllocator()
		r := rand.New(rand.NewPCG(7, 8))
		const n = 1 << 20
		mk := func(name string, dt arrow.DataType, rows int, fill func(array.Builder, int)) {
			bld := array.NewBuilder(mem, dt)
			defer bld.Release()
			for i := 0; i < rows; i++ {
				fill(bld, i)
			}
			col := bld.NewArray()
			defer col.Release()
			schema := arrow.NewSchema([]arrow.Field{{Name: name, Type: dt, Nullable: true}}, nil)
			rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(rows))
			defer rec.Release()
			takeBenchFiles = append(takeBenchFiles, takeBenchFile{name, writeFile(b, rec)})
		}
		mk("int64", arrow.PrimitiveTypes.Int64, n, func(bl array.Builder, _ int) {
			bl.(*array.Int64Builder).Append(r.Int64())
		})
		buf := make([]byte, 40)
		mk("string", arrow.BinaryTypes.String, n, func(bl array.Builder, _ int) {
			k := 5 + r.IntN(36)
			for j := range k {
				buf[j] = byte('a' + r.IntN(26))
			}
			bl.(*array.StringBuilder).Append(string(buf[:k]))
		})
		mk("list_int32", arrow.ListOf(arrow.PrimitiveTypes.Int32), n, func(bl array.Builder, _ int) {
			lb := bl.(*array.ListBuilder)
			lb.Append(true)
			vb := lb.ValueBuilder().(*array.Int32Builder)
			for range 1 + r.IntN(8) {
				vb.Append(r.Int32())
			}
		})
		big := make([]byte, 600)
		mk("bigstring", arrow.BinaryTypes.String, 1<<18, func(bl array.Builder, _ int) {
			k := 200 + r.IntN(400)
			for j := range k {
				big[j] = byte(32 + r.IntN(95))
			}
			bl.(*array.StringBuilder).Append(string(big[:k]))
		})
		mk("fsl_f32_768", arrow.FixedSizeListOf(768, arrow.PrimitiveTypes.Float32), 1<<16, func(bl array.Builder, _ int) {
			lb := bl.(*array.FixedSizeListBuilder)
			lb.Append(true)
			vb := lb.ValueBuilder().(*array.Float32Builder)
			for range 768 {
				vb.Append(r.Float32())
			}
		})
	})
	return takeBenchFiles
}

// BenchmarkTake takes 100 and 10,000 random rows (unsorted, with repeats
// possible) from warm open files; req/op and B-read/op are the IO of one
// take. "whole" decodes every dense page a take touches in full (the
// reader before window reads), "window" only the chunks and records of the
// rows.
//
// Run with: go test ./reader -run '^$' -bench Take -benchtime 20x
func BenchmarkTake(b *testing.B) {
	for _, tf := range takeBenchData(b) {
		f, err := reader.Open(bytes.NewReader(tf.data), int64(len(tf.data)))
		if err != nil {
			b.Fatal(err)
		}
		cell := f.Pages(0)[0].Cell
		for _, mode := range []string{"whole", "window"} {
			for _, k := range []int{100, 10000} {
				b.Run(fmt.Sprintf("%s/%s/%s/take%d", tf.name, cell, mode, k), func(b *testing.B) {
					defer f.SetDenseWindows(f.SetDenseWindows(mode == "window"))
					r := rand.New(rand.NewPCG(1, 2))
					idx := make([]int64, k)
					op := func() {
						for i := range idx {
							idx[i] = r.Int64N(f.NumRows())
						}
						t, err := f.Take(idx)
						if err != nil {
							b.Fatal(err)
						}
						t.Release()
					}
					op() // warm-up: page metadata
					before := f.IOStats()
					for b.Loop() {
						op()
					}
					io := f.IOStats().Sub(before)
					b.ReportMetric(float64(io.Requests)/float64(b.N), "req/op")
					b.ReportMetric(float64(io.Bytes)/float64(b.N), "B-read/op")
				})
			}
		}
	}
}

// TestWriteTakeBenchFiles writes the benchmark files to the directory named
// by PLANAR_TAKE_BENCH_DIR (skipped without it), to time another reader on
// the same bytes (e.g. pylance's LanceFileReader.take_rows).
func TestWriteTakeBenchFiles(t *testing.T) {
	dir := os.Getenv("PLANAR_TAKE_BENCH_DIR")
	if dir == "" {
		t.Skip("PLANAR_TAKE_BENCH_DIR not set")
	}
	for _, tf := range takeBenchData(t) {
		if err := os.WriteFile(filepath.Join(dir, tf.name+".lance"), tf.data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
