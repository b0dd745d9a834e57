package reader

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/planarlance/planar/values"
)

// TestDictLeafWithoutPageDictionary: a dictionary-typed page stored without
// a page dictionary (plain values) gets one key per distinct value when its
// values outnumber the keys of the index type.
func TestDictLeafWithoutPageDictionary(t *testing.T) {
	const n = 300
	vals := values.Block{N: n, Offsets: []uint64{0}}
	for i := 0; i < n; i++ {
		vals.Data = fmt.Appendf(vals.Data, "v%d", i%3)
		vals.Offsets = append(vals.Offsets, uint64(len(vals.Data)))
	}
	for _, idx := range []arrow.DataType{arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int32} {
		dt := &arrow.DictionaryType{IndexType: idx, ValueType: arrow.BinaryTypes.String}
		d, err := dictLeaf(dt, &pageData{numVisible: n, vals: vals}, nil, nil, 0)
		if err != nil {
			t.Fatalf("%s: %v", idx, err)
		}
		a := array.MakeFromData(d).(*array.Dictionary)
		for i := 0; i < n; i++ {
			if got, want := a.Dictionary().ValueStr(a.GetValueIndex(i)), fmt.Sprintf("v%d", i%3); got != want {
				t.Fatalf("%s row %d: %s, want %s", idx, i, got, want)
			}
		}
		a.Release()
		d.Release()
	}
	// Too many distinct values for the key type.
	many := values.Block{N: n, Offsets: []uint64{0}}
	for i := 0; i < n; i++ {
		many.Data = fmt.Appendf(many.Data, "v%d", i)
		many.Offsets = append(many.Offsets, uint64(len(many.Data)))
	}
	if _, err := dictLeaf(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint8, ValueType: arrow.BinaryTypes.String}, &pageData{numVisible: n, vals: many}, nil, nil, 0); err == nil {
		t.Errorf("300 distinct values under uint8 keys: no error")
	}
}

// TestExpandFixedNoItems: u32 indices into a dictionary of no items give
// zeros when every slot is null and ErrCorrupt when one is valid (there is
// no item to copy), not a read past the items; with items, every slot is
// written (the output is not cleared first), a null slot's index naming
// anything.
func TestExpandFixedNoItems(t *testing.T) {
	idx := values.Block{Bits: 32, N: 3, Data: []byte{0, 0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0}}
	empty := &values.Block{Bits: 64, N: 0}
	got, err := expandFixed(idx, empty, []bool{false, false, false}, values.Block{Bits: 64, N: 3}, 8)
	if err != nil || !bytes.Equal(got.Data, make([]byte, 24)) {
		t.Fatalf("all null: %v, %v", got.Data, err)
	}
	for _, valid := range [][]bool{{false, true, false}, nil} {
		if _, err := expandFixed(idx, empty, valid, values.Block{Bits: 64, N: 3}, 8); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("valid %v: err %v, want ErrCorrupt", valid, err)
		}
	}
	items := &values.Block{Bits: 64, N: 2, Data: []byte{1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2}}
	got, err = expandFixed(idx, items, []bool{true, false, true}, values.Block{Bits: 64, N: 3}, 8)
	want := append(append(bytes.Repeat([]byte{1}, 8), bytes.Repeat([]byte{1}, 8)...), bytes.Repeat([]byte{2}, 8)...)
	if err != nil || !bytes.Equal(got.Data, want) {
		t.Fatalf("with items: %v, %v; want %v", got.Data, err, want)
	}
}
