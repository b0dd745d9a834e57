package interop

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/writer"
)

// dict32 matches a page encoding with a dictionary of 32-bit items.
var dict32 = regexp.MustCompile(`dict=(general\([a-z0-9]+,)?flat32\)?\[`)

// TestInt32Dictionaries: 32-bit values that the cost policy gives a page
// dictionary (Lance's writer gives them none) are read back equal by
// pylance 14 (2.2 and 2.3) and by Lance 13 (2.2): a nullable int32 column
// of 1,000 wide values, a list<int32> of values in ±500, a float32 column
// of 300 values. The test checks that 32-bit dictionary pages were written.
func TestInt32Dictionaries(t *testing.T) {
	py, py13 := python(t), python13(t)
	dir := t.TempDir()
	mem := memory.NewGoAllocator()
	r := rand.New(rand.NewPCG(5, 6))
	const rows = 200_000
	wide := make([]int32, 1000)
	for i := range wide {
		wide[i] = int32(r.Uint32())
	}
	ib := array.NewInt32Builder(mem)
	lb := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int32)
	lv := lb.ValueBuilder().(*array.Int32Builder)
	fb := array.NewFloat32Builder(mem)
	for i := range rows {
		if i%7 == 3 {
			ib.AppendNull()
		} else {
			ib.Append(wide[r.IntN(len(wide))])
		}
		switch {
		case i%11 == 5:
			lb.AppendNull()
		default:
			lb.Append(true)
			for range r.IntN(3) {
				lv.Append(int32(r.IntN(1000) - 500))
			}
		}
		fb.Append(float32(r.IntN(300)) * 0.37)
	}
	cols := []arrow.Array{ib.NewArray(), lb.NewArray(), fb.NewArray()}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "wide", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "list", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32},
	}, nil)
	rec := array.NewRecordBatch(schema, cols, rows)
	defer rec.Release()
	ds := dataset{Arrow: filepath.Join(dir, "dict32.arrow")}
	writeIPC(t, ds.Arrow, []arrow.RecordBatch{rec})
	ds13 := dataset{Arrow: ds.Arrow}
	dicts := map[string]bool{}
	for _, f := range []writer.Format{writer.Format2_2, writer.Format2_3} {
		p := filepath.Join(dir, fmt.Sprintf("dict32-%s.lance", f))
		writePlanar(t, p, []arrow.RecordBatch{rec}, writer.WithFormat(f))
		checkPlanarRead(t, p, rec)
		ds.Planar = append(ds.Planar, fileSpec{File: p, Format: f.String()})
		if f == writer.Format2_2 {
			ds13.Planar = append(ds13.Planar, fileSpec{File: p, Format: f.String()})
		}
		for _, fp := range filePages(t, p) {
			if dict32.MatchString(fp.encoding) {
				dicts[fmt.Sprintf("%v %s", f, strings.SplitN(fp.column, ".", 2)[0])] = true
			}
		}
	}
	for _, want := range []string{"2.2 wide", "2.2 f32", "2.3 wide", "2.3 list", "2.3 f32"} {
		if !dicts[want] {
			t.Errorf("%s: no 32-bit dictionary page written (%v)", want, dicts)
		}
	}
	for _, run := range []struct {
		py string
		ds dataset
	}{{py, ds}, {py13, ds13}} {
		res := runCheck(t, run.py, dir, []dataset{run.ds})
		if len(res.Reads) != len(run.ds.Planar) {
			t.Fatalf("pylance %s: %d read results, want %d", res.Pylance, len(res.Reads), len(run.ds.Planar))
		}
		for _, rd := range res.Reads {
			if !rd.OK {
				msg := strings.Join(rd.Diffs, "; ")
				if rd.Error != nil {
					msg = *rd.Error
				}
				t.Errorf("pylance %s, %s: %s", res.Pylance, filepath.Base(rd.File), msg)
				continue
			}
			t.Logf("pylance %s, %s: equal (%v)", res.Pylance, filepath.Base(rd.File), rd.Encodings)
		}
	}
}
