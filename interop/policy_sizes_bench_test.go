package interop

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/writer"
)

// BenchmarkPolicySizes compares, per column class, the 2.3 file size of the
// cost policy, of the lance policy and of pylance's own writer for the same
// data (ratios to pylance), and times planar's write under each policy.
//
//	go test ./interop -run '^$' -bench PolicySizes -benchtime 3x
func BenchmarkPolicySizes(b *testing.B) {
	py := python(b)
	mem := memory.NewGoAllocator()
	type class struct {
		name string
		rec  arrow.RecordBatch
	}
	var classes []class
	flat := func(name string, c corpus.Case) {
		c.Rows = 100000
		classes = append(classes, class{name, corpus.Record(mem, []corpus.Case{c}, 1)})
	}
	flat("int-random", corpus.Case{Type: arrow.PrimitiveTypes.Int64, Shape: corpus.Random})
	flat("int-small-nullable", corpus.Case{Type: arrow.PrimitiveTypes.Int32, Nulls: corpus.SomeNulls, Shape: corpus.Small})
	flat("sorted-ids", corpus.Case{Type: arrow.PrimitiveTypes.Int64, Shape: corpus.Sorted})
	flat("runs-nullable", corpus.Case{Type: arrow.PrimitiveTypes.Int64, Nulls: corpus.SomeNulls, Shape: corpus.Runs})
	flat("lowcard-int", corpus.Case{Type: arrow.PrimitiveTypes.Int64, Shape: corpus.LowCard})
	flat("float-random", corpus.Case{Type: arrow.PrimitiveTypes.Float64, Shape: corpus.Random})
	flat("timestamps-trailing-nulls", corpus.Case{Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nulls: corpus.Trailing, Shape: corpus.Sorted})
	for _, cc := range []string{"lowcard_str", "urls", "random_str", "float_random", "repeated"} {
		c := corpus.CodecCase{Column: corpus.CodecColumnByName(cc), Force: corpus.CodecForce{Name: "default"}, Rows: 100000}
		classes = append(classes, class{"codec-" + cc, c.Record(mem)})
	}
	for _, n := range []string{"list_struct", "list_i32", "map_str_i32", "struct_nested", "list_list_i64", "dict_str", "bool", "fsl_f32_768"} {
		nc := corpus.NestedCase{TypeCase: corpus.TypeByName(n), Nulls: corpus.SomeNulls, Rows: 20000}
		if n == "fsl_f32_768" {
			nc.Rows = 2000
		}
		classes = append(classes, class{"nested-" + nc.Name(), corpus.NestedRecord(mem, []corpus.NestedCase{nc}, 1)})
	}
	dir := b.TempDir()
	var datasets []dataset
	for _, c := range classes {
		ds := dataset{Arrow: filepath.Join(dir, c.name+".arrow")}
		writeIPC(b, ds.Arrow, []arrow.RecordBatch{c.rec})
		ds.Pylance = []pylanceSpec{{File: filepath.Join(dir, c.name+".pylance.lance"), Version: "2.3"}}
		datasets = append(datasets, ds)
	}
	runCheck(b, py, dir, datasets)
	for _, c := range classes {
		ls, err := os.Stat(filepath.Join(dir, c.name+".pylance.lance"))
		if err != nil {
			b.Fatal(err)
		}
		in := int64(0)
		for _, col := range c.rec.Columns() {
			in += int64(arrowSize(col.Data()))
		}
		for _, pol := range []selector.Policy{selector.PolicyCost, selector.PolicyLance} {
			b.Run(c.name+"/"+pol.String(), func(b *testing.B) {
				p := filepath.Join(dir, c.name+"."+pol.String()+".lance")
				b.SetBytes(in)
				for b.Loop() {
					writePlanar(b, p, []arrow.RecordBatch{c.rec}, writer.WithPolicy(pol))
				}
				ps, _ := os.Stat(p)
				b.ReportMetric(float64(ps.Size())/float64(c.rec.NumRows()), "B/row")
				b.ReportMetric(float64(ps.Size())/float64(ls.Size()), "x-pylance")
			})
		}
	}
}

func arrowSize(d arrow.ArrayData) int {
	n := 0
	for _, b := range d.Buffers() {
		if b != nil {
			n += b.Len()
		}
	}
	for _, c := range d.Children() {
		n += arrowSize(c)
	}
	return n
}
