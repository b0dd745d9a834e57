package reader

import (
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestConcatFixed joins slices (offsets at odd bit positions, nulls at
// every depth) with concatFixed and with arrow's Concatenate: the arrays
// are equal, and the result's null counts are exact.
func TestConcatFixed(t *testing.T) {
	cases := []struct {
		dt   arrow.DataType
		json string
	}{
		{arrow.PrimitiveTypes.Int32, `[1, null, 3, 4, null, 6, 7, 8, 9, null, 11]`},
		{arrow.FixedWidthTypes.Boolean, `[true, null, false, true, true, null, false, false, true, true, null]`},
		{&arrow.FixedSizeBinaryType{ByteWidth: 3}, `["AAAA", null, "AQID", "BAUG", "BwgJ", null, "CgsM", "DQ4P", "EBES", "ExQV", null]`},
		{arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Int16), `[[1,2,3], null, [4,null,6], [7,8,9], [null,null,null], [1,1,1], null, [2,2,2], [3,null,3], [4,4,4], [5,5,5]]`},
		{arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int8, Nullable: true}, arrow.Field{Name: "b", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), Nullable: true}),
			`[{"a":1,"b":[1,2]}, null, {"a":null,"b":[3,4]}, {"a":4,"b":null}, {"a":5,"b":[5,null]}, {"a":6,"b":[6,6]}, null, {"a":8,"b":[8,8]}, {"a":9,"b":[9,9]}, {"a":10,"b":[1,0]}, {"a":11,"b":[1,1]}]`},
	}
	for _, tc := range cases {
		t.Run(tc.dt.String(), func(t *testing.T) {
			whole := fromJSON(t, tc.dt, tc.json)
			defer whole.Release()
			for _, cuts := range [][]int{{0, 11}, {1, 4, 11}, {3, 3, 5, 10}, {2, 7, 9}} {
				parts := sliceAt(whole, cuts)
				got, ok := concatFixed(parts)
				if !ok {
					t.Fatalf("%s: not handled", tc.dt)
				}
				want, err := array.Concatenate(parts, memory.DefaultAllocator)
				if err != nil {
					t.Fatal(err)
				}
				if !array.Equal(got, want) {
					t.Errorf("cuts %v: got %v, want %v", cuts, got, want)
				}
				if got.Data().NullN() != want.NullN() {
					t.Errorf("cuts %v: %d nulls recorded, want %d", cuts, got.Data().NullN(), want.NullN())
				}
				got.Release()
				want.Release()
				for _, p := range parts {
					p.Release()
				}
			}
		})
	}
	if _, ok := concatFixed([]arrow.Array{array.NewStringBuilder(memory.DefaultAllocator).NewArray()}); ok {
		t.Error("strings handled as fixed width")
	}
}

// TestConcatFixedLarge joins large slices of uneven lengths (one of a
// single value, one spanning several pieces of the output) and an all-null
// array without a values buffer, on more cores than the machine may have:
// the values equal arrow's Concatenate's, and the null array's are zeros.
func TestConcatFixedLarge(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(5))
	mem := memory.DefaultAllocator
	r := rand.New(rand.NewPCG(21, 22))
	b := array.NewInt64Builder(mem)
	for range 300_000 {
		if r.IntN(7) == 0 {
			b.AppendNull()
		} else {
			b.Append(int64(r.Uint64()))
		}
	}
	whole := b.NewArray()
	defer whole.Release()
	var parts []arrow.Array
	for _, c := range [][2]int64{{0, 1}, {1, 70_000}, {70_000, 70_001}, {70_001, 250_000}, {250_000, 300_000}} {
		parts = append(parts, array.NewSlice(whole, c[0], c[1]))
	}
	want, err := array.Concatenate(parts, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer want.Release()
	got, ok := concatFixed(parts)
	if !ok || !array.Equal(got, want) {
		t.Fatalf("joined slices differ (handled %v)", ok)
	}
	got.Release()
	// An all-null array with no values buffer, between two slices.
	vb := memory.NewBufferBytes(make([]byte, 2))
	null := array.MakeFromData(array.NewData(arrow.PrimitiveTypes.Int64, 9, []*memory.Buffer{vb, nil}, nil, 9, 0))
	defer null.Release()
	got, ok = concatFixed([]arrow.Array{parts[1], null, parts[3]})
	if !ok {
		t.Fatal("not handled")
	}
	defer got.Release()
	vals := got.(*array.Int64).Int64Values()
	at := parts[1].Len()
	for i := at; i < at+9; i++ {
		if !got.IsNull(i) || vals[i] != 0 {
			t.Fatalf("slot %d of the null array: null %v, value %d", i, got.IsNull(i), vals[i])
		}
	}
	for i, v := range parts[3].(*array.Int64).Int64Values() {
		if parts[3].IsValid(i) && vals[at+9+i] != v {
			t.Fatalf("slot %d after the null array: %d, want %d", at+9+i, vals[at+9+i], v)
		}
	}
	for _, p := range parts {
		p.Release()
	}
}

// TestConcatList joins slices of list and large list arrays (nulls, empty
// lists, null lists, children of fixed width, strings, lists and structs,
// an empty slice among them) with concatList and with arrow's Concatenate:
// the arrays are equal and the null counts exact; maps and single arrays
// are left to Concatenate.
func TestConcatList(t *testing.T) {
	cases := []struct {
		dt   arrow.DataType
		json string
	}{
		{arrow.ListOf(arrow.PrimitiveTypes.Int32), `[[1,2], null, [], [3,null,4], [5], null, [6,7,8], [], [9], [10,11], null]`},
		{arrow.LargeListOf(arrow.BinaryTypes.String), `[["a","bc"], null, [], ["d",null], ["e"], null, ["fgh","i",""], [], ["j"], ["k","l"], null]`},
		{arrow.ListOf(arrow.ListOf(arrow.PrimitiveTypes.Int64)), `[[[1],[2,3]], null, [], [[],null,[4]], [[5]], null, [[6],[7],[8]], [], [[9]], [[10,11]], null]`},
		{arrow.ListOf(arrow.StructOf(arrow.Field{Name: "a", Type: arrow.BinaryTypes.String, Nullable: true})), `[[{"a":"x"}], null, [], [{"a":null},null], [{"a":"y"}], null, [{"a":"z"}], [], [{"a":""}], [{"a":"w"},{"a":"v"}], null]`},
	}
	for _, tc := range cases {
		t.Run(tc.dt.String(), func(t *testing.T) {
			whole := fromJSON(t, tc.dt, tc.json)
			defer whole.Release()
			for _, cuts := range [][]int{{0, 11}, {1, 4, 11}, {3, 3, 5, 10}, {2, 7, 9}, {0, 5, 5, 11}} {
				parts := sliceAt(whole, cuts)
				want, err := array.Concatenate(parts, memory.DefaultAllocator)
				if err != nil {
					t.Fatal(err)
				}
				got, ok := concatList(parts)
				nonEmpty := 0
				for _, p := range parts {
					if p.Len() > 0 {
						nonEmpty++
					}
				}
				switch {
				case ok != (nonEmpty >= 2):
					t.Errorf("cuts %v: handled %v with %d non-empty parts", cuts, ok, nonEmpty)
				case ok && !array.Equal(got, want):
					t.Errorf("cuts %v: got %v, want %v", cuts, got, want)
				case ok && got.Data().NullN() != want.NullN():
					t.Errorf("cuts %v: %d nulls recorded, want %d", cuts, got.Data().NullN(), want.NullN())
				}
				if ok {
					got.Release()
				}
				want.Release()
				for _, p := range parts {
					p.Release()
				}
			}
		})
	}
	m, _, err := array.FromJSON(memory.DefaultAllocator, arrow.MapOf(arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32), strings.NewReader(`[[{"key":"a","value":1}], null]`))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release()
	if _, ok := concatList([]arrow.Array{m, m}); ok {
		t.Error("maps handled as lists")
	}
}

// fromJSON is the array of type dt that json describes.
func fromJSON(t *testing.T, dt arrow.DataType, json string) arrow.Array {
	t.Helper()
	a, _, err := array.FromJSON(memory.DefaultAllocator, dt, strings.NewReader(json))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// sliceAt cuts whole into slices [cuts[k], cuts[k+1]).
func sliceAt(whole arrow.Array, cuts []int) []arrow.Array {
	var parts []arrow.Array
	for k := 0; k+1 < len(cuts); k++ {
		parts = append(parts, array.NewSlice(whole, int64(cuts[k]), int64(cuts[k+1])))
	}
	return parts
}
