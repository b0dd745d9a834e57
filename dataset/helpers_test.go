package dataset

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// testSchema has flat, nested and vector columns.
var testSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "tags", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
	{Name: "st", Type: arrow.StructOf(
		arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
	), Nullable: true},
	{Name: "emb", Type: arrow.FixedSizeListOf(8, arrow.PrimitiveTypes.Float32), Nullable: true},
}, nil)

// testBatch builds n rows whose ids start at first; every value is a
// function of the id, so any row can be checked on its own.
func testBatch(first, n int64) arrow.RecordBatch {
	b := array.NewRecordBuilder(memory.DefaultAllocator, testSchema)
	defer b.Release()
	id := b.Field(0).(*array.Int64Builder)
	name := b.Field(1).(*array.StringBuilder)
	tags := b.Field(2).(*array.ListBuilder)
	tv := tags.ValueBuilder().(*array.Int32Builder)
	st := b.Field(3).(*array.StructBuilder)
	sa := st.FieldBuilder(0).(*array.Int32Builder)
	sb := st.FieldBuilder(1).(*array.StringBuilder)
	emb := b.Field(4).(*array.FixedSizeListBuilder)
	ev := emb.ValueBuilder().(*array.Float32Builder)
	for i := first; i < first+n; i++ {
		id.Append(i)
		if i%7 == 3 {
			name.AppendNull()
		} else {
			name.Append(fmt.Sprintf("row-%d", i))
		}
		if i%5 == 0 {
			tags.AppendNull()
		} else {
			tags.Append(true)
			for k := int64(0); k < i%4; k++ {
				tv.Append(int32(i + k))
			}
		}
		if i%11 == 0 {
			st.AppendNull() // the builder appends a null to each child
		} else {
			st.Append(true)
			sa.Append(int32(i * 3))
			sb.Append(fmt.Sprintf("s%d", i%13))
		}
		if i%3 == 1 {
			emb.AppendNull() // the builder pads the child with 8 values
		} else {
			emb.Append(true)
			for k := 0; k < 8; k++ {
				ev.Append(float32(i) + float32(k)/8)
			}
		}
	}
	return b.NewRecordBatch()
}
