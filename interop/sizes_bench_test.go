package interop

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/writer"
)

// BenchmarkSizes compares file sizes with pylance's for representative
// columns: bytes per row of planar's and pylance's 2.2 files of the same
// data, and their ratio. It times planar's write.
//
//	go test ./interop -run '^$' -bench Sizes -benchtime 1x
func BenchmarkSizes(b *testing.B) {
	py := python(b)
	mem := memory.NewGoAllocator()
	type col struct {
		name string
		rec  arrow.RecordBatch
	}
	var cols []col
	for _, fc := range []corpus.Case{
		{Type: arrow.PrimitiveTypes.Int64, Nulls: corpus.NoNulls, Shape: corpus.Random, Rows: 100000},
		{Type: arrow.PrimitiveTypes.Int32, Nulls: corpus.SomeNulls, Shape: corpus.Small, Rows: 100000},
		{Type: arrow.PrimitiveTypes.Int64, Nulls: corpus.NoNulls, Shape: corpus.Sorted, Rows: 100000},
		{Type: arrow.PrimitiveTypes.Int64, Nulls: corpus.SomeNulls, Shape: corpus.Runs, Rows: 100000},
		{Type: arrow.PrimitiveTypes.Float64, Nulls: corpus.NoNulls, Shape: corpus.Random, Rows: 100000},
	} {
		cols = append(cols, col{fc.Name(), corpus.Record(mem, []corpus.Case{fc}, 1)})
	}
	for _, n := range []string{"string", "string_urls", "large_string", "list_struct", "fsl_f32_768", "list_i32", "map_str_i32", "dict_str", "bool"} {
		nc := corpus.NestedCase{TypeCase: corpus.TypeByName(n), Nulls: corpus.SomeNulls, Rows: 20000}
		if n == "fsl_f32_768" {
			nc.Rows = 2000
		}
		cols = append(cols, col{nc.Name(), corpus.NestedRecord(mem, []corpus.NestedCase{nc}, 1)})
	}
	dir := b.TempDir()
	var manifest struct {
		Datasets []dataset `json:"datasets"`
	}
	for _, c := range cols {
		ds := dataset{Arrow: filepath.Join(dir, c.name+".arrow")}
		writeIPC(b, ds.Arrow, []arrow.RecordBatch{c.rec})
		ds.Pylance = []pylanceSpec{{File: filepath.Join(dir, c.name+".pylance.lance"), Version: "2.2"}}
		manifest.Datasets = append(manifest.Datasets, ds)
	}
	runCheck(b, py, dir, manifest.Datasets)
	for _, c := range cols {
		b.Run(c.name, func(b *testing.B) {
			p := filepath.Join(dir, c.name+".planar.lance")
			for b.Loop() {
				writePlanar(b, p, []arrow.RecordBatch{c.rec}, writer.WithFormat(writer.Format2_2))
			}
			ps, _ := os.Stat(p)
			ls, err := os.Stat(filepath.Join(dir, c.name+".pylance.lance"))
			if err != nil {
				b.Fatal(err)
			}
			rows := float64(c.rec.NumRows())
			b.ReportMetric(float64(ps.Size())/rows, "planar-B/row")
			b.ReportMetric(float64(ls.Size())/rows, "pylance-B/row")
			b.ReportMetric(float64(ps.Size())/float64(ls.Size()), "size-ratio")
		})
	}
}
