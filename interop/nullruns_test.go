package interop

import (
	"context"
	"encoding/json"
	"math/rand"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	lds "github.com/planarlance/planar/dataset"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/writer"
)

// TestNullRunPages22 writes mostly-null vector columns in storage 2.2, whose
// null runs planar cuts into all-null pages (selector.MinNullRun), as a
// lone file and as a dataset, and has both real Lances read them back:
// pylance 14.0.2 (file and dataset) and LanceDB 0.40.0 with its Lance
// 13.0.0 (dataset, plus a vector search that must find a valid row).
func TestNullRunPages22(t *testing.T) {
	py := python(t)
	const dim = 768
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "emb", Type: arrow.FixedSizeListOf(dim, arrow.PrimitiveTypes.Float32), Nullable: true},
	}, nil)
	for _, c := range []struct {
		name  string
		rows  int
		valid func(rng *rand.Rand, i int) bool
	}{
		{"1pct-random", 6000, func(rng *rand.Rand, i int) bool { return rng.Intn(100) == 0 }},
		{"50pct-random", 3000, func(rng *rand.Rand, i int) bool { return rng.Intn(2) == 0 }},
		{"block", 6000, func(rng *rand.Rand, i int) bool { return i >= 2000 && i < 3200 }},
		{"all-null-but-one", 9000, func(rng *rand.Rand, i int) bool { return i == 4321 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			rng := rand.New(rand.NewSource(int64(len(c.name))))
			var recs []arrow.RecordBatch
			for off := 0; off < c.rows; {
				n := min(c.rows-off, 500+rng.Intn(2500))
				ib := array.NewInt64Builder(memory.DefaultAllocator)
				fb := array.NewFixedSizeListBuilder(memory.DefaultAllocator, dim, arrow.PrimitiveTypes.Float32)
				vb := fb.ValueBuilder().(*array.Float32Builder)
				for i := off; i < off+n; i++ {
					ib.Append(int64(i))
					if c.valid(rng, i) {
						fb.Append(true)
						for k := 0; k < dim; k++ {
							vb.Append(rng.Float32())
						}
					} else {
						fb.AppendNull()
					}
				}
				ia, fa := ib.NewArray(), fb.NewArray()
				recs = append(recs, array.NewRecordBatch(schema, []arrow.Array{ia, fa}, int64(n)))
				ia.Release()
				fa.Release()
				off += n
			}
			arrowPath := filepath.Join(dir, "in.arrow")
			writeIPC(t, arrowPath, recs)
			file := filepath.Join(dir, "out.lance")
			writePlanar(t, file, recs, writer.WithFormat(writer.Format2_2))
			rf, err := reader.OpenPath(file)
			if err != nil {
				t.Fatal(err)
			}
			nullPages := 0
			for _, p := range rf.Pages(1) {
				if p.Cell == "dense x none" {
					nullPages++
				}
			}
			rf.Close()
			if nullPages == 0 {
				t.Fatalf("no all-null page: the null runs were not cut")
			}
			ctx := context.Background()
			dw, err := lds.Create(ctx, filepath.Join(dir, "t.lance"), schema, lds.WithStorageVersion(lds.StorageVersion2_2))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				if err := dw.Write(r); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := dw.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(py, "nullruns_check.py", arrowPath, file, dir, "t").CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", c.name, err, out)
			}
			var res map[string]any
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("%s: %s", err, out)
			}
			t.Logf("%d all-null pages; %s", nullPages, out)
		})
	}
}
