package interop

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	lds "github.com/planarlance/planar/dataset"
)

// TestMixedVersions: a 2.3 column added to a 2.2 table is refused unless
// mixing is asked for; then the commit carries Lance's mixed data-file
// versions flag (bit 8, both words) and pylance 14 reads the table right,
// validates it, and appends to it.
func TestMixedVersions(t *testing.T) {
	py := python(t)
	ctx := context.Background()
	uri := filepath.Join(t.TempDir(), "t.lance")
	w, err := lds.Create(ctx, uri, dsSchema, lds.WithMaxRowsPerFile(300))
	if err != nil {
		t.Fatal(err)
	}
	rec := dsBatch(0, 1000)
	defer rec.Release()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	s := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.FixedSizeListOf(16, arrow.PrimitiveTypes.Float32), Nullable: true}}, nil)
	column := func() array.RecordReader {
		b := array.NewFixedSizeListBuilder(memory.DefaultAllocator, 16, arrow.PrimitiveTypes.Float32)
		vb := b.ValueBuilder().(*array.Float32Builder)
		for i := 0; i < 1000; i++ {
			if i%50 == 0 {
				b.Append(true)
				for k := 0; k < 16; k++ {
					vb.Append(float32(i*16 + k))
				}
			} else {
				b.AppendNull()
			}
		}
		a := b.NewArray()
		r, _ := array.NewRecordReader(s, []arrow.RecordBatch{array.NewRecordBatch(s, []arrow.Array{a}, 1000)})
		return r
	}
	if _, err := lds.AddColumns(ctx, uri, column(), lds.WithStorageVersion(lds.StorageVersion2_3)); !errors.Is(err, lds.ErrVersionMismatch) {
		t.Fatalf("2.3 column into a 2.2 table without WithMixedVersions: %v", err)
	}
	d, err := lds.AddColumns(ctx, uri, column(), lds.WithStorageVersion(lds.StorageVersion2_3), lds.WithMixedVersions())
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.ReadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	if got.NumRows() != 1000 || got.Column(5).NullN() != 980 {
		t.Fatalf("planar reads %d rows, %d null vectors", got.NumRows(), got.Column(5).NullN())
	}
	script := `
import sys, lance, pyarrow as pa
ds = lance.dataset(sys.argv[1])
ds.validate()
m = ds.latest_version
t = ds.to_table()
v = t.column("v")
assert t.num_rows == 1000 and v.null_count == 980, (t.num_rows, v.null_count)
for i in range(0, 1000, 50):
    assert v[i].values.to_pylist() == [float(i * 16 + k) for k in range(16)], i
assert t.column("id").to_pylist() == list(range(1000))
versions = sorted({f"{df.file_major_version}.{df.file_minor_version}" for f in ds.get_fragments() for df in f.metadata.files})
lance.write_dataset(t.slice(0, 10), sys.argv[1], mode="append")
assert lance.dataset(sys.argv[1]).count_rows() == 1010
print("ok", versions)
`
	out, err := exec.Command(py, "-c", script, uri).CombinedOutput()
	if err != nil {
		t.Fatalf("pylance on the mixed table: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "'2.2', '2.3'") {
		t.Errorf("data file versions: %s", out)
	}
	t.Logf("%s", out)
}
