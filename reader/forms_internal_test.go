package reader

import (
	"bytes"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/planarlance/planar/values"
)

// fslInt16Dict is a page dictionary of two fixed-size lists [2]int16 with
// item validity: item 0 = [1, null], item 1 = [null, 4].
func fslInt16Dict() *values.Block {
	return &values.Block{N: 2, Bits: 32, Dims: []int{2}, Data: []byte{1, 0, 2, 0, 3, 0, 4, 0}, ItemValid: [][]byte{{0b1001}}}
}

// TestExpandDictItemValidity: expanding dictionary indices copies each
// item's validity along with its data; a null slot whose index is out of
// range gets null items.
func TestExpandDictItemValidity(t *testing.T) {
	idx := values.Block{N: 4, Bits: 8, Data: []byte{1, 0, 9, 1}}
	out, err := expandDict(idx, fslInt16Dict(), []bool{true, true, false, true})
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{3, 0, 4, 0, 1, 0, 2, 0, 1, 0, 2, 0, 3, 0, 4, 0}; !bytes.Equal(out.Data, want) {
		t.Errorf("data %v", out.Data)
	}
	// Bits per slot: [0 1] [1 0] [1 0] (slot 2 copies item 0) [0 1].
	if want := []byte{0b10010110}; !bytes.Equal(out.ItemValid[0], want) {
		t.Errorf("item validity %08b, want %08b", out.ItemValid[0], want)
	}
	if _, err := expandDict(idx, fslInt16Dict(), nil); err == nil {
		t.Errorf("index 9 of 2 items on a valid slot: no error")
	}
	bad := fslInt16Dict()
	bad.Dims = nil
	if _, err := expandDict(idx, bad, []bool{true, true, false, true}); err == nil {
		t.Errorf("item validity without dimensions: no error")
	}
}

// TestScatterItemValidity: sparse zipped fixed-size lists spread over their
// slots with their item validity; slots not stored hold null items.
func TestScatterItemValidity(t *testing.T) {
	in := values.Block{N: 2, Bits: 32, Dims: []int{2}, Data: []byte{1, 0, 2, 0, 3, 0, 4, 0}, ItemValid: [][]byte{{0b0110}}}
	out, err := scatter(in, []bool{false, true, false, true})
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4, 0}; !bytes.Equal(out.Data, want) {
		t.Errorf("data %v", out.Data)
	}
	if want := []byte{0b01001000}; !bytes.Equal(out.ItemValid[0], want) {
		t.Errorf("item validity %08b, want %08b", out.ItemValid[0], want)
	}
	// Lists whose items are all null (not stored) stay so.
	nullItems := values.Block{N: 1, Dims: []int{3}, NullItems: true, ItemValid: [][]byte{{0}}}
	out, err = scatter(nullItems, []bool{false, true})
	if err != nil || !out.NullItems || out.Variable() || len(out.ItemValid[0]) != 1 {
		t.Fatalf("null items: %+v, %v", out, err)
	}
}

// TestFSLLeafNullItems: fixed-size lists whose items are not stored build
// arrays of the column's type with null items, also when the stored layers
// stop above the type's innermost list.
func TestFSLLeafNullItems(t *testing.T) {
	inner := arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Int16)
	outer := arrow.FixedSizeListOf(3, inner)
	for _, c := range []struct {
		name string
		vals values.Block
	}{
		{"both layers stored", values.Block{N: 2, Dims: []int{3, 2}, NullItems: true, ItemValid: [][]byte{nil, {0, 0}}}},
		{"outer layer stored", values.Block{N: 2, Dims: []int{3}, NullItems: true, ItemValid: [][]byte{{0b101000}}}},
	} {
		d, err := leafArray(outer, &pageData{numVisible: 2, vals: c.vals}, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		a := array.MakeFromData(d).(*array.FixedSizeList)
		if a.Len() != 2 || a.NullN() != 0 {
			t.Fatalf("%s: %d rows, %d null", c.name, a.Len(), a.NullN())
		}
		lists := a.ListValues().(*array.FixedSizeList)
		items := lists.ListValues()
		if items.Len() != 12 || items.NullN() != 12 {
			t.Errorf("%s: %d items, %d null", c.name, items.Len(), items.NullN())
		}
		a.Release()
		d.Release()
	}
	// The stored layers must be the type's.
	wrong := values.Block{N: 1, Dims: []int{4}, NullItems: true, ItemValid: [][]byte{{0}}}
	if _, err := leafArray(outer, &pageData{numVisible: 1, vals: wrong}, nil); err == nil {
		t.Errorf("dimension 4 for a [3] list: no error")
	}
	stored := values.Block{N: 1, Bits: 96, Dims: []int{3}, Data: make([]byte, 12)}
	if _, err := leafArray(outer, &pageData{numVisible: 1, vals: stored}, nil); err == nil {
		t.Errorf("items stored for one layer of two: no error")
	}
}
