package interop

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/writer"
)

// BenchmarkClassSizes prints, for every class of corpus.PerfClasses (issue
// 12's size goal), the bytes of planar's 2.3 file under the cost and the
// lance policy, of pylance 14's 2.3 file and of arrow-go pqarrow's
// Zstd-compressed Parquet file of the same data, and the cost policy's
// ratios to the last two. Slow (pylance writes every class once; the
// embedding classes are 200 MB):
//
//	go test ./interop -run '^$' -bench ClassSizes -benchtime 1x
func BenchmarkClassSizes(b *testing.B) {
	py := python(b)
	mem := memory.NewGoAllocator()
	dir := b.TempDir()
	classes := corpus.PerfClasses(1)
	var datasets []dataset
	recs := make([]arrow.RecordBatch, len(classes))
	for i, pc := range classes {
		recs[i] = pc.Record(mem, 1)
		defer recs[i].Release()
		ds := dataset{Arrow: filepath.Join(dir, pc.Name+".arrow")}
		writeIPC(b, ds.Arrow, []arrow.RecordBatch{recs[i]})
		ds.Pylance = []pylanceSpec{{File: filepath.Join(dir, pc.Name+".pylance.lance"), Version: "2.3"}}
		datasets = append(datasets, ds)
	}
	res := runCheck(b, py, dir, datasets)
	var table strings.Builder
	fmt.Fprintf(&table, "\n%-22s %12s %12s %12s %12s %8s %8s\n", "class", "cost", "lance", "pylance", "pq-zstd", "cost/py", "cost/pq")
	for i, pc := range classes {
		rec := recs[i]
		size := func(pol selector.Policy) int {
			var buf bytes.Buffer
			w, err := writer.New(&buf, rec.Schema(), writer.WithFormat(writer.Format2_3), writer.WithPolicy(pol))
			if err != nil {
				b.Fatal(err)
			}
			if err := w.WriteBatch(rec); err != nil {
				b.Fatal(err)
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			return buf.Len()
		}
		cost, lance := size(selector.PolicyCost), size(selector.PolicyLance)
		py := -1
		for _, w := range res.Writes {
			if filepath.Base(w.File) != pc.Name+".pylance.lance" {
				continue
			}
			if !w.OK && w.Error != nil {
				fmt.Printf("%s: pylance could not write it: %s\n", pc.Name, *w.Error)
			}
			if st, err := os.Stat(w.File); err == nil && w.OK {
				py = int(st.Size())
			}
		}
		pq := -1 // pqarrow cannot write null fixed-size-list rows
		var buf bytes.Buffer
		props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd))
		if pw, err := pqarrow.NewFileWriter(rec.Schema(), &buf, props, pqarrow.DefaultWriterProps()); err == nil {
			if pw.Write(rec) == nil && pw.Close() == nil {
				pq = buf.Len()
			}
		}
		ratio := func(a, d int) string {
			if d <= 0 {
				return "-"
			}
			return fmt.Sprintf("%.3f", float64(a)/float64(d))
		}
		fmt.Fprintf(&table, "%-22s %12d %12d %12d %12d %8s %8s\n", pc.Name, cost, lance, py, pq, ratio(cost, py), ratio(cost, pq))
	}
	fmt.Print(table.String()) // (b.Log truncates benchmark output)
	for range b.N {
	}
}
