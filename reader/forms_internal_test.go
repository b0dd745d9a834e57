package reader

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/par"
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

// TestConcatenateEmptyDictionaryChunks: chunks with different dictionaries
// concatenate, also when some have no values (directly or as the items of
// lists), which arrow-go's own Concatenate cannot do.
func TestConcatenateEmptyDictionaryChunks(t *testing.T) {
	mem := memory.NewGoAllocator()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint16, ValueType: arrow.PrimitiveTypes.Int32}
	mk := func(dict []int32, keys []uint16) arrow.Array {
		db := array.NewInt32Builder(mem)
		db.AppendValues(dict, nil)
		d := db.NewArray()
		kb := array.NewUint16Builder(mem)
		kb.AppendValues(keys, nil)
		k := kb.NewArray()
		defer d.Release()
		defer k.Release()
		return array.NewDictionaryArray(dt, k, d)
	}
	full := mk([]int32{10, 20, 30}, []uint16{2, 0, 1})
	empty := mk(nil, nil)
	other := mk([]int32{30, 40}, []uint16{1, 0})
	list := func(items arrow.Array, offs []int32) arrow.Array {
		var ob []byte
		for _, o := range offs {
			ob = binary.LittleEndian.AppendUint32(ob, uint32(o))
		}
		d := array.NewData(arrow.ListOf(dt), len(offs)-1, []*memory.Buffer{nil, memory.NewBufferBytes(ob)}, []arrow.ArrayData{items.Data()}, 0, 0)
		defer d.Release()
		return array.MakeFromData(d)
	}
	for _, c := range []struct {
		name   string
		chunks []arrow.Array
		want   string
	}{
		{"empty last", []arrow.Array{full, empty}, "[30 10 20]"},
		{"empty first", []arrow.Array{empty, full, other}, "[30 10 20 40 30]"},
		{"lists of empty items", []arrow.Array{list(full, []int32{0, 3}), list(empty, []int32{0, 0, 0}), list(other, []int32{0, 1, 2})}, "[[30 10 20] [] [] [40] [30]]"},
	} {
		if _, err := array.Concatenate(c.chunks, mem); err == nil {
			t.Logf("%s: arrow-go concatenates these itself now", c.name)
		}
		got, err := concatenate(c.chunks)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if s := valuesString(got); s != c.want {
			t.Errorf("%s: %s, want %s", c.name, s, c.want)
		}
		got.Release()
	}
}

// valuesString prints an array with dictionary values resolved.
func valuesString(a arrow.Array) string {
	switch x := a.(type) {
	case *array.Dictionary:
		s := "["
		for i := 0; i < x.Len(); i++ {
			if i > 0 {
				s += " "
			}
			s += x.Dictionary().ValueStr(x.GetValueIndex(i))
		}
		return s + "]"
	case *array.List:
		s := "["
		for i := 0; i < x.Len(); i++ {
			if i > 0 {
				s += " "
			}
			b, e := x.ValueOffsets(i)
			sl := array.NewSlice(x.ListValues(), b, e)
			s += valuesString(sl)
			sl.Release()
		}
		return s + "]"
	}
	return a.String()
}

// TestNullItemsBounded: items not stored, or values of an all-null page,
// are materialized as zeros; a type far wider than the bytes stored is
// refused instead of allocated.
func TestNullItemsBounded(t *testing.T) {
	wide := arrow.FixedSizeListOf(1, arrow.FixedSizeListOf(1<<30, arrow.PrimitiveTypes.Int64))
	vals := values.Block{N: 1, Dims: []int{1}, NullItems: true, ItemValid: [][]byte{{0}}}
	if _, err := leafArray(wide, &pageData{numVisible: 1, vals: vals}, nil); !errors.Is(err, ErrUnsupported) {
		t.Errorf("null items of a 8 GiB row: %v", err)
	}
	if _, err := repeatScalar(arrow.FixedSizeListOf(1<<20, arrow.FixedWidthTypes.Boolean), nil, false, 1<<20); !errors.Is(err, ErrUnsupported) {
		t.Errorf("2^40 null booleans: %v", err)
	}
	huge := arrow.FixedSizeListOf(1<<30, arrow.FixedSizeListOf(1<<30, arrow.FixedSizeListOf(1<<30, arrow.PrimitiveTypes.Int8)))
	if _, err := leafArray(huge, &pageData{numVisible: 1, vals: values.Block{N: 1, Bits: 8, Data: []byte{0}}}, nil); err == nil {
		t.Errorf("2^90 items: no error")
	}
}

// TestDictStrings: the direct string path gives what expanding the
// dictionary gives, on one piece and on several (side by side), with null
// slots naming any index; a valid slot naming no item and damaged
// dictionary offsets are ErrCorrupt.
func TestDictStrings(t *testing.T) {
	dict := &values.Block{N: 3, Offsets: []uint64{0, 3, 3, 8}, Data: []byte("abcdefgh")}
	for _, n := range []int{1, 7, 3*par.MinValues + 5} {
		idx := values.Block{N: n, Bits: 32, Data: make([]byte, 4*n)}
		valid := make([]bool, n)
		for i := range n {
			k := uint32(i % 3)
			valid[i] = i%5 != 0
			if !valid[i] {
				k = 1000 + uint32(i) // anything under a null
			}
			binary.LittleEndian.PutUint32(idx.Data[4*i:], k)
		}
		vb, nulls := bitmapFrom(valid)
		got, err := dictStrings(arrow.BinaryTypes.String, idx, dict, valid, vb, nulls)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		want, err := expandDict(idx, dict, valid)
		if err != nil {
			t.Fatal(err)
		}
		ga := array.NewStringData(got)
		for i := range n {
			w := string(want.Data[want.Offsets[i]:want.Offsets[i+1]])
			if ga.IsValid(i) != valid[i] || ga.Value(i) != w {
				t.Fatalf("n=%d slot %d: %q valid %v, want %q valid %v", n, i, ga.Value(i), ga.IsValid(i), w, valid[i])
			}
		}
		ga.Release()
		got.Release()
	}
	idx := values.Block{N: 2, Bits: 32, Data: []byte{0, 0, 0, 0, 3, 0, 0, 0}}
	if _, err := dictStrings(arrow.BinaryTypes.String, idx, dict, nil, nil, 0); !errors.Is(err, ErrCorrupt) {
		t.Errorf("valid slot naming item 3 of 3: %v, want ErrCorrupt", err)
	}
	bad := &values.Block{N: 2, Offsets: []uint64{0, 5, 2}, Data: []byte("abcde")}
	if _, err := dictStrings(arrow.BinaryTypes.String, values.Block{N: 1, Bits: 32, Data: make([]byte, 4)}, bad, nil, nil, 0); !errors.Is(err, ErrCorrupt) {
		t.Errorf("offsets going back: %v, want ErrCorrupt", err)
	}
	short := &values.Block{N: 1, Offsets: []uint64{0, 9}, Data: []byte("abc")}
	if _, err := dictStrings(arrow.BinaryTypes.String, values.Block{N: 1, Bits: 32, Data: make([]byte, 4)}, short, nil, nil, 0); !errors.Is(err, ErrCorrupt) {
		t.Errorf("items past the data: %v, want ErrCorrupt", err)
	}
}

// TestExpandFixed: fixed-width items under u32 indices expand, in pieces on
// large pages, to each slot's item (item 0 under a null naming anything); a
// valid slot naming no item is ErrCorrupt.
func TestExpandFixed(t *testing.T) {
	for _, w := range []int{3, 4, 8} {
		items := 5
		dict := &values.Block{N: items, Bits: 8 * w, Data: make([]byte, items*w)}
		for i := range dict.Data {
			dict.Data[i] = byte(i*7 + 1)
		}
		for _, n := range []int{1, 9, 3*par.MinValues + 5} {
			idx := values.Block{N: n, Bits: 32, Data: make([]byte, 4*n)}
			valid := make([]bool, n)
			for i := range n {
				k := uint32(i % items)
				valid[i] = i%4 != 0
				if !valid[i] {
					k = 100 + uint32(i)
				}
				binary.LittleEndian.PutUint32(idx.Data[4*i:], k)
			}
			got, err := expandDict(idx, dict, valid)
			if err != nil || got.N != n || len(got.Data) != n*w {
				t.Fatalf("w=%d n=%d: %d values in %d bytes (%v)", w, n, got.N, len(got.Data), err)
			}
			for i := range n {
				k := i % items
				if !valid[i] {
					k = 0
				}
				if !bytes.Equal(got.Data[i*w:(i+1)*w], dict.Data[k*w:(k+1)*w]) {
					t.Fatalf("w=%d n=%d slot %d: % x, want item %d", w, n, i, got.Data[i*w:(i+1)*w], k)
				}
			}
			binary.LittleEndian.PutUint32(idx.Data[4*(n-1):], uint32(items))
			valid[n-1] = true
			if _, err := expandDict(idx, dict, valid); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("w=%d n=%d: a valid slot naming item %d of %d: %v", w, n, items, items, err)
			}
		}
	}
}
