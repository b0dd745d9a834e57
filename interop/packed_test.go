package interop

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestNestedPackedStructs: packed structs below a list and inside a struct
// are one column each; pylance reads planar's file exactly, planar reads
// pylance's, and both store those columns as PackedStruct.
func TestNestedPackedStructs(t *testing.T) {
	py := python(t)
	mem := memory.NewGoAllocator()
	md := arrow.NewMetadata([]string{"lance-encoding:packed"}, []string{"true"})
	st := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32}, arrow.Field{Name: "b", Type: arrow.PrimitiveTypes.Int64})
	lt := arrow.ListOfField(arrow.Field{Name: "item", Type: st, Nullable: true, Metadata: md})
	outer := arrow.StructOf(arrow.Field{Name: "p", Type: st, Nullable: true, Metadata: md}, arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32})
	schema := arrow.NewSchema([]arrow.Field{{Name: "l", Type: lt, Nullable: true}, {Name: "o", Type: outer, Nullable: true}}, nil)
	b := array.NewRecordBuilder(mem, schema)
	lb := b.Field(0).(*array.ListBuilder)
	ob := b.Field(1).(*array.StructBuilder)
	for i := 0; i < 3000; i++ {
		if i%11 == 0 {
			lb.AppendNull()
		} else {
			lb.Append(true)
			sb := lb.ValueBuilder().(*array.StructBuilder)
			for k := 0; k < i%4; k++ {
				sb.Append(true)
				sb.FieldBuilder(0).(*array.Int32Builder).Append(int32(i + k))
				sb.FieldBuilder(1).(*array.Int64Builder).Append(int64(i * k))
			}
		}
		ob.Append(true)
		ps := ob.FieldBuilder(0).(*array.StructBuilder)
		ps.Append(true)
		ps.FieldBuilder(0).(*array.Int32Builder).Append(int32(i))
		ps.FieldBuilder(1).(*array.Int64Builder).Append(int64(-i))
		ob.FieldBuilder(1).(*array.Int32Builder).Append(int32(i % 7))
	}
	rec := b.NewRecordBatch()
	dir := t.TempDir()
	ds := dataset{Arrow: filepath.Join(dir, "a.arrow")}
	writeIPC(t, ds.Arrow, []arrow.RecordBatch{rec})
	p := filepath.Join(dir, "p.lance")
	writePlanar(t, p, []arrow.RecordBatch{rec})
	ds.Planar = []fileSpec{{File: p}}
	ds.Pylance = []pylanceSpec{{File: filepath.Join(dir, "y.lance"), Version: "2.3"}}
	res := runCheck(t, py, dir, []dataset{ds})
	if r := res.Reads[0]; !r.OK {
		t.Fatalf("pylance read of planar's file: %v %v", r.Diffs, r.Error)
	}
	checkPlanarRead(t, p, rec)
	if !res.Writes[0].OK {
		t.Fatalf("pylance write: %v", *res.Writes[0].Error)
	}
	checkPlanarRead(t, res.Writes[0].File, rec)
	for _, f := range []string{p, res.Writes[0].File} {
		e, _ := pageEncodings(t, f)
		packed := 0
		for _, pe := range e {
			if strings.Contains(pe, "packed-struct[32 64]") {
				packed++
			}
		}
		if len(e) != 3 || packed != 2 {
			t.Errorf("%s: pages %v, want 3 columns, 2 of them packed", filepath.Base(f), e)
		}
	}
}
