package dataset

import (
	"errors"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/planarlance/planar/proto/tablepb"
)

// TestPlanFragment checks how a fragment's data files serve the schema's
// columns, by field id, in the cases other clients' edits make.
func TestPlanFragment(t *testing.T) {
	i64 := arrow.PrimitiveTypes.Int64
	st := arrow.StructOf(arrow.Field{Name: "a", Type: i64}, arrow.Field{Name: "b", Type: i64})
	tops := []topField{
		{field: arrow.Field{Name: "id", Type: i64}, leaves: []int32{0}},
		{field: arrow.Field{Name: "st", Type: st}, leaves: []int32{2, 3}},
		{field: arrow.Field{Name: "x", Type: i64}, leaves: []int32{5}},
	}
	file := func(path string, fields, cols []int32, minor uint32) *tablepb.DataFile {
		return &tablepb.DataFile{Path: path, Fields: fields, ColumnIndices: cols, FileMajorVersion: 2, FileMinorVersion: minor}
	}
	type want struct {
		files map[string][]int // path -> projected positions
		first map[string][]int
		nulls []int
		err   error
	}
	for _, c := range []struct {
		name  string
		files []*tablepb.DataFile
		want  want
	}{
		{"one file", []*tablepb.DataFile{file("a", []int32{0, 2, 3, 5}, []int32{0, 1, 2, 3}, 2)},
			want{files: map[string][]int{"a": {0, 1, 2}}, first: map[string][]int{"a": {0, 1, 3}}}},
		{"dropped column stays in the file", []*tablepb.DataFile{file("a", []int32{0, 1, 2, 3, 5}, []int32{0, 1, 2, 3, 4}, 2)},
			want{files: map[string][]int{"a": {0, 1, 2}}, first: map[string][]int{"a": {0, 2, 4}}}},
		{"added column in a second file", []*tablepb.DataFile{file("a", []int32{0, 2, 3}, []int32{0, 1, 2}, 3), file("b", []int32{5}, []int32{0}, 3)},
			want{files: map[string][]int{"a": {0, 1}, "b": {2}}, first: map[string][]int{"a": {0, 1}, "b": {0}}}},
		{"schema-only column reads as nulls", []*tablepb.DataFile{file("a", []int32{0, 2, 3}, []int32{0, 1, 2}, 2)},
			want{files: map[string][]int{"a": {0, 1}}, first: map[string][]int{"a": {0, 1}}, nulls: []int{2}}},
		{"tombstoned column index", []*tablepb.DataFile{file("a", []int32{0, 2, 3, 5}, []int32{0, 1, 2, -1}, 2)},
			want{files: map[string][]int{"a": {0, 1}}, first: map[string][]int{"a": {0, 1}}, nulls: []int{2}}},
		{"struct split over files", []*tablepb.DataFile{file("a", []int32{0, 2, 5}, []int32{0, 1, 2}, 2), file("b", []int32{3}, []int32{0}, 2)},
			want{err: ErrUnsupported}},
		{"field twice", []*tablepb.DataFile{file("a", []int32{0, 2, 3, 5}, []int32{0, 1, 2, 3}, 2), file("b", []int32{5}, []int32{0}, 2)},
			want{err: ErrCorrupt}},
		{"storage 2.0", []*tablepb.DataFile{file("a", []int32{0, 2, 3, 5}, []int32{0, 1, 2, 3}, 0)},
			want{err: ErrUnsupported}},
		{"fewer column indices than fields", []*tablepb.DataFile{file("a", []int32{0, 2, 3, 5}, []int32{0, 1, 2}, 2)},
			want{err: ErrCorrupt}},
		{"unsafe path", []*tablepb.DataFile{file("../a", []int32{0, 2, 3, 5}, []int32{0, 1, 2, 3}, 2)},
			want{err: ErrCorrupt}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := planFragment(&tablepb.DataFragment{Id: 7, Files: c.files, PhysicalRows: 10}, tops)
			if c.want.err != nil {
				if !errors.Is(err, c.want.err) {
					t.Fatalf("err %v, want %v", err, c.want.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(p.files) != len(c.want.files) {
				t.Fatalf("%d files planned, want %d", len(p.files), len(c.want.files))
			}
			for _, pf := range p.files {
				if !slices.Equal(pf.pos, c.want.files[pf.path]) || !slices.Equal(pf.first, c.want.first[pf.path]) {
					t.Errorf("file %s serves %v at %v, want %v at %v", pf.path, pf.pos, pf.first, c.want.files[pf.path], c.want.first[pf.path])
				}
			}
			if !slices.Equal(p.nulls, c.want.nulls) {
				t.Errorf("nulls %v, want %v", p.nulls, c.want.nulls)
			}
		})
	}
}

func TestSameShape(t *testing.T) {
	i32, i64 := arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64
	for _, c := range []struct {
		a, b arrow.DataType
		same bool
	}{
		{i64, i64, true},
		{i64, i32, false},
		{arrow.StructOf(arrow.Field{Name: "a", Type: i64}), arrow.StructOf(arrow.Field{Name: "renamed", Type: i64, Nullable: true}), true},
		{arrow.StructOf(arrow.Field{Name: "a", Type: i64}), arrow.StructOf(arrow.Field{Name: "a", Type: i32}), false},
		{arrow.ListOf(i64), arrow.ListOfField(arrow.Field{Name: "element", Type: i64}), true},
		{arrow.FixedSizeListOf(4, i64), arrow.FixedSizeListOf(8, i64), false},
		{arrow.ListOf(i64), arrow.LargeListOf(i64), false},
	} {
		if got := sameShape(c.a, c.b); got != c.same {
			t.Errorf("sameShape(%s, %s) = %v", c.a, c.b, got)
		}
	}
}
