package writer_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/writer"
)

// TestPackedStructs: a struct marked packed is written as one column (fixed
// children: PackedStruct chunks; variable children: VariablePackedStruct
// records) and reads back equal; packed children that are null in a valid
// row are refused before anything is written; children Lance cannot pack
// are refused at New.
func TestPackedStructs(t *testing.T) {
	mem := memory.NewGoAllocator()
	for _, name := range []string{"packed_struct", "packed_varstruct"} {
		c := corpus.CodecCase{Column: corpus.CodecColumnByName(name), Force: corpus.CodecForce{Name: "packed", Metadata: map[string]string{"lance-encoding:packed": "true"}}, Rows: 3000}
		rec := c.Record(mem)
		b := writeAll(t, rec.Schema(), []arrow.RecordBatch{rec})
		f := open(t, b)
		if f.NumColumns() != 1 {
			t.Fatalf("%s: %d columns, want 1", name, f.NumColumns())
		}
		want := "packed-struct"
		if name == "packed_varstruct" {
			want = "variable-packed-struct"
		}
		if enc := f.Pages(0)[0].Encoding; !strings.Contains(enc, want) {
			t.Errorf("%s: encoding %q, want %s", name, enc, want)
		}
		got, err := f.ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !array.RecordEqual(got, rec) {
			t.Errorf("%s: read back differs", name)
		}
	}

	// A null child in a valid row.
	st := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true})
	md := arrow.NewMetadata([]string{"lance-encoding:packed"}, []string{"true"})
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: st, Nullable: true, Metadata: md}}, nil)
	sb := array.NewStructBuilder(mem, st)
	sb.Append(true)
	sb.FieldBuilder(0).(*array.Int32Builder).AppendNull()
	arr := sb.NewArray()
	rec := array.NewRecordBatch(schema, []arrow.Array{arr}, 1)
	var buf bytes.Buffer
	w, err := writer.New(&buf, schema)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteBatch(rec); !errors.Is(err, writer.ErrInvalidBatch) {
		t.Fatalf("null packed child: %v, want ErrInvalidBatch", err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close after a refused batch: %v", err)
	}

	// A child that cannot be packed.
	bad := arrow.StructOf(arrow.Field{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32)})
	_, err = writer.New(&bytes.Buffer{}, arrow.NewSchema([]arrow.Field{{Name: "s", Type: bad, Metadata: md}}, nil))
	if !errors.Is(err, writer.ErrUnsupportedType) || !strings.Contains(err.Error(), `"s"`) {
		t.Fatalf("packed struct of a list: %v", err)
	}
}
