package format

import (
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/planarlance/planar/structural"
)

// TestColumnsPlaced: both schema directions give every leaf column its
// top-level field, its place among that field's columns and its structural
// path, the same way.
func TestColumnsPlaced(t *testing.T) {
	packed := arrow.Field{Name: "p", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32}, arrow.Field{Name: "y", Type: arrow.PrimitiveTypes.Int32}),
		Metadata: arrow.NewMetadata([]string{"packed"}, []string{"true"})}
	s := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "a", Type: arrow.BinaryTypes.String, Nullable: true}, arrow.Field{Name: "b", Type: arrow.ListOf(arrow.PrimitiveTypes.Float32), Nullable: true})},
		{Name: "m", Type: arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32)},
		{Name: "v", Type: arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32)},
		{Name: "fs", Type: arrow.FixedSizeListOf(3, arrow.StructOf(arrow.Field{Name: "q", Type: arrow.PrimitiveTypes.Int8}))},
		packed,
	}, nil)
	want := []struct {
		path          string
		top, leaf, of int
		perRow        int
	}{
		{"id", 0, 0, 1, 1},
		{"s.a", 1, 0, 2, 1},
		{"s.b.item", 1, 1, 2, 1},
		{"m.entries.key", 2, 0, 2, 1},
		{"m.entries.value", 2, 1, 2, 1},
		{"v", 3, 0, 1, 1},
		{"fs.item.q", 4, 0, 1, 3},
		{"p", 5, 0, 1, 1},
	}
	ls, cols, err := SchemaToLance(s)
	if err != nil {
		t.Fatal(err)
	}
	back, bcols, err := SchemaFromLance(ls)
	if err != nil {
		t.Fatal(err)
	}
	for _, side := range []struct {
		name string
		s    *arrow.Schema
		cols []Column
	}{{"to", s, cols}, {"from", back, bcols}} {
		if len(side.cols) != len(want) {
			t.Fatalf("%s: %d columns, want %d", side.name, len(side.cols), len(want))
		}
		for i, w := range want {
			c := side.cols[i]
			paths := structural.LeafPathsField(side.s.Field(w.top))
			if c.Path != w.path || c.Top != w.top || c.Leaf != w.leaf || c.Leaves != w.of || c.ElementsPerRow() != w.perRow ||
				fmt.Sprint(c.Steps) != fmt.Sprint(paths[w.leaf]) {
				t.Errorf("%s column %d: %q top %d leaf %d/%d ×%d steps %v, want %+v steps %v", side.name, i, c.Path, c.Top, c.Leaf, c.Leaves, c.ElementsPerRow(), c.Steps, w, paths[w.leaf])
			}
		}
	}
}
