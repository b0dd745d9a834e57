package interop

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	lds "github.com/planarlance/planar/dataset"
)

// TestCompactionKeepsNullRunPages: a 2.2 dataset of mostly-null vectors,
// made with dataset.CompactionBinaryCopy in its config, keeps its small
// form through pylance 14's compact_files (the pages are copied, not
// re-encoded), and both clients read it after compaction. LanceDB 0.40's
// optimize() re-encodes whatever the config says: the test logs how much
// it writes and checks only that the rows survive.
func TestCompactionKeepsNullRunPages(t *testing.T) {
	py := python(t)
	const dim, rows, perFile = 768, 40000, 5000
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "emb", Type: arrow.FixedSizeListOf(dim, arrow.PrimitiveTypes.Float32), Nullable: true},
	}, nil)
	dir := t.TempDir()
	ctx := context.Background()
	w, err := lds.Create(ctx, filepath.Join(dir, "t.lance"), schema, lds.WithMaxRowsPerFile(perFile), lds.WithTableConfig(lds.CompactionBinaryCopy))
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off < rows; off += perFile {
		ib := array.NewInt64Builder(memory.DefaultAllocator)
		fb := array.NewFixedSizeListBuilder(memory.DefaultAllocator, dim, arrow.PrimitiveTypes.Float32)
		vb := fb.ValueBuilder().(*array.Float32Builder)
		for i := off; i < off+perFile; i++ {
			ib.Append(int64(i))
			if i%97 == 5 {
				fb.Append(true)
				for k := 0; k < dim; k++ {
					vb.Append(float32(i + k))
				}
			} else {
				fb.AppendNull()
			}
		}
		ia, fa := ib.NewArray(), fb.NewArray()
		rec := array.NewRecordBatch(schema, []arrow.Array{ia, fa}, perFile)
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		ia.Release()
		fa.Release()
	}
	if _, err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, "compaction_check.py", dir, "t").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var res struct {
		Config          map[string]string `json:"config"`
		Before          int64             `json:"before"`
		FragmentsBefore int               `json:"fragments_before"`
		FragmentsAfter  int               `json:"fragments_after"`
		AfterCompact    int64             `json:"after_pylance_compact"`
		PylanceEqual    bool              `json:"pylance_equal"`
		AfterOptimize   int64             `json:"after_lancedb_optimize"`
		LanceDBEqual    bool              `json:"lancedb_equal"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res.Config["lance.compaction.compaction_mode"] != "try_binary_copy" {
		t.Errorf("pylance sees config %v", res.Config)
	}
	if res.FragmentsAfter >= res.FragmentsBefore {
		t.Errorf("compaction left %d of %d fragments", res.FragmentsAfter, res.FragmentsBefore)
	}
	// Copied pages: the compacted files are about as large as the ones
	// they replace (re-encoded, every null vector would take 3 KiB).
	if res.AfterCompact > res.Before*11/10 {
		t.Errorf("pylance compact_files wrote %d bytes for %d: the pages were re-encoded", res.AfterCompact, res.Before)
	}
	if !res.PylanceEqual || !res.LanceDBEqual {
		t.Errorf("rows changed by compaction: pylance %v, LanceDB %v", res.PylanceEqual, res.LanceDBEqual)
	}
	d, err := lds.Open(ctx, filepath.Join(dir, "t.lance"))
	if err != nil {
		t.Fatal(err)
	}
	if d.CountRows() != rows {
		t.Errorf("planar counts %d rows after compaction", d.CountRows())
	}
	t.Logf("data %d B in %d fragments; pylance compact_files (binary copy) wrote %d B; LanceDB optimize wrote %d B (re-encoded)",
		res.Before, res.FragmentsBefore, res.AfterCompact, res.AfterOptimize)
}
