package interop

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/writer"
)

// Tests of what WriteBatch accepts and rejects (issue #9: 5, 6, 7, 8, 16).
// Every file is read back by planar and by pylance.

func fromJSON(t *testing.T, dt arrow.DataType, js string) arrow.Array {
	t.Helper()
	a, _, err := array.FromJSON(memory.NewGoAllocator(), dt, strings.NewReader(js))
	if err != nil {
		t.Fatalf("%s %s: %v", dt, js, err)
	}
	return a
}

func oneCol(f arrow.Field, a arrow.Array) arrow.RecordBatch {
	return array.NewRecordBatch(arrow.NewSchema([]arrow.Field{f}, nil), []arrow.Array{a}, int64(a.Len()))
}

// withData rebuilds a with its data changed by edit (buffers, null count).
func withData(a arrow.Array, edit func(bufs []*memory.Buffer, nulls *int)) arrow.Array {
	d := a.Data()
	bufs := append([]*memory.Buffer(nil), d.Buffers()...)
	nulls := d.NullN()
	edit(bufs, &nulls)
	nd := array.NewData(d.DataType(), d.Len(), bufs, d.Children(), nulls, d.Offset())
	if dict := d.Dictionary(); dict != nil {
		nd.SetDictionary(dict)
	}
	return array.MakeFromData(nd)
}

// rawData is a wrapped with its data changed by edit, for data arrow-go's
// constructors refuse (an Array implementation need not check).
func rawData(a arrow.Array, edit func(bufs []*memory.Buffer, nulls *int)) arrow.Array {
	d := a.Data()
	bufs := append([]*memory.Buffer(nil), d.Buffers()...)
	nulls := d.NullN()
	edit(bufs, &nulls)
	return badData{a, array.NewData(d.DataType(), d.Len(), bufs, d.Children(), nulls, d.Offset())}
}

// noBitmap returns a with its validity bitmap dropped while its null count
// still claims nulls: Arrow reads every slot as valid.
func noBitmap(a arrow.Array, nulls int) arrow.Array {
	return withData(a, func(bufs []*memory.Buffer, n *int) { bufs[0], *n = nil, nulls })
}

// nilColumns is a record batch whose Columns() holds a nil array.
type nilColumns struct{ arrow.RecordBatch }

func (r nilColumns) Columns() []arrow.Array { return []arrow.Array{nil} }
func (r nilColumns) Column(int) arrow.Array { return nil }

// badData is an array whose Data() is not what its constructor checked.
type badData struct {
	arrow.Array
	d arrow.ArrayData
}

func (b badData) Data() arrow.ArrayData { return b.d }

func concatBatches(t *testing.T, recs []arrow.RecordBatch) arrow.RecordBatch {
	t.Helper()
	cols := make([]arrow.Array, recs[0].NumCols())
	n := int64(0)
	for _, r := range recs {
		n += r.NumRows()
	}
	for c := range cols {
		var parts []arrow.Array
		for _, r := range recs {
			parts = append(parts, r.Column(c))
		}
		a, err := array.Concatenate(parts, memory.NewGoAllocator())
		if err != nil {
			t.Fatal(err)
		}
		cols[c] = a
	}
	return array.NewRecordBatch(recs[0].Schema(), cols, n)
}

// verifyFiles checks each written file with planar here and with pylance
// (one check.py run for all of them) against the batches it should hold.
func verifyFiles(t *testing.T, dir string, files map[string][]arrow.RecordBatch) {
	t.Helper()
	py := python(t)
	var dss []dataset
	wants := map[string]arrow.RecordBatch{}
	for p, recs := range files {
		want := concatBatches(t, recs)
		wants[p] = want
		checkPlanarRead(t, p, want)
		ds := dataset{Arrow: p + ".arrow", Planar: []fileSpec{{File: p}}}
		writeIPC(t, ds.Arrow, []arrow.RecordBatch{want})
		dss = append(dss, ds)
	}
	res := runCheck(t, py, dir, dss)
	if len(res.Reads) != len(files) {
		t.Fatalf("%d pylance reads for %d files", len(res.Reads), len(files))
	}
	for _, r := range res.Reads {
		if !r.OK {
			msg := strings.Join(r.Diffs, "; ")
			if r.Error != nil {
				msg = *r.Error
			}
			t.Errorf("%s: pylance: %s", filepath.Base(r.File), msg)
		}
	}
}

type rejectCase struct {
	name string
	good []arrow.RecordBatch // written before and after the bad batch
	bad  arrow.RecordBatch
	path string // the column path the error names
}

// lanceView is what a file holding recs reads back as: Lance keeps no
// nullability for the items of a fixed-size list of primitives (its items
// are part of the leaf), so pylance and planar read them as nullable.
func lanceView(recs []arrow.RecordBatch) []arrow.RecordBatch {
	out := make([]arrow.RecordBatch, len(recs))
	for i, r := range recs {
		fs := r.Schema().Fields()
		cols := make([]arrow.Array, len(fs))
		for c, f := range fs {
			cols[c] = r.Column(c)
			if ft, ok := f.Type.(*arrow.FixedSizeListType); ok && !ft.ElemField().Nullable {
				ef := ft.ElemField()
				ef.Nullable = true
				f.Type = arrow.FixedSizeListOfField(ft.Len(), ef)
				cols[c] = withType(cols[c], f.Type)
			}
			fs[c] = f
		}
		out[i] = array.NewRecordBatch(arrow.NewSchema(fs, nil), cols, r.NumRows())
	}
	return out
}

// TestRejectedBatchesWriteNothing: each bad batch fails WriteBatch with
// ErrInvalidBatch naming the column; the writer stays usable, and the file
// holds exactly the good batches, for planar and for pylance.
func TestRejectedBatchesWriteNothing(t *testing.T) {
	i32 := arrow.PrimitiveTypes.Int32
	str := arrow.BinaryTypes.String
	var cases []rejectCase
	add := func(name string, f arrow.Field, good1, good2 string, bad arrow.Array, path string) {
		cases = append(cases, rejectCase{
			name: name,
			good: []arrow.RecordBatch{oneCol(f, fromJSON(t, f.Type, good1)), oneCol(f, fromJSON(t, f.Type, good2))},
			bad:  oneCol(f, bad),
			path: path,
		})
	}
	jsonBad := func(f arrow.Field, js string) arrow.Array { return fromJSON(t, f.Type, js) }

	// 5: visible nulls in non-nullable fields.
	f := arrow.Field{Name: "a", Type: i32}
	add("nonnull_top", f, `[1, 2]`, `[3]`, jsonBad(f, `[1, null, 3]`), `"a"`)
	st := arrow.StructOf(arrow.Field{Name: "x", Type: i32})
	f = arrow.Field{Name: "s", Type: st, Nullable: true}
	add("nonnull_struct_child", f, `[{"x": 1}, null]`, `[{"x": 2}]`, jsonBad(f, `[{"x": 1}, {"x": null}]`), `"s.x"`)
	inner := arrow.StructOf(arrow.Field{Name: "y", Type: i32, Nullable: true})
	f = arrow.Field{Name: "o", Type: arrow.StructOf(arrow.Field{Name: "i", Type: inner}), Nullable: true}
	add("nonnull_inner_struct", f, `[{"i": {"y": 1}}, null, {"i": {"y": 2}}]`, `[{"i": {"y": null}}, {"i": {"y": 4}}]`, jsonBad(f, `[{"i": {"y": 1}}, {"i": null}]`), `"o.i"`)
	lt := arrow.ListOfField(arrow.Field{Name: "item", Type: i32})
	f = arrow.Field{Name: "l", Type: lt, Nullable: true}
	add("nonnull_list_item", f, `[[1, 2], null, []]`, `[[3]]`, jsonBad(f, `[[1], [2, null]]`), `"l.item"`)
	ft := arrow.FixedSizeListOfField(2, arrow.Field{Name: "item", Type: i32})
	f = arrow.Field{Name: "v", Type: ft, Nullable: true}
	add("nonnull_fsl_item", f, `[[1, 2], null]`, `[[3, 4]]`, jsonBad(f, `[[1, 2], [null, 4]]`), `"v.item"`)
	mt := arrow.MapOf(str, i32)
	f = arrow.Field{Name: "m", Type: mt, Nullable: true}
	{
		// A null map key (keys are never nullable).
		good := fromJSON(t, mt, `[[{"key": "a", "value": 1}], [{"key": "b", "value": 2}]]`)
		kd := good.(*array.Map).Keys()
		keys := withData(kd, func(bufs []*memory.Buffer, n *int) {
			bufs[0] = memory.NewBufferBytes([]byte{0b01})
			*n = 1
		})
		md := good.Data()
		ent := md.Children()[0]
		ed := array.NewData(ent.DataType(), ent.Len(), ent.Buffers(), []arrow.ArrayData{keys.Data(), ent.Children()[1]}, ent.NullN(), ent.Offset())
		// arrow-go refuses to make such a map; another Array implementation
		// might not.
		bad := badData{good, array.NewData(mt, md.Len(), md.Buffers(), []arrow.ArrayData{ed}, md.NullN(), md.Offset())}
		add("nonnull_map_key", f, `[[{"key": "a", "value": 1}], null, [{"key": "c", "value": 3}]]`, `[[], [{"key": "d", "value": 4}]]`, bad, `"m.entries.key"`)
	}
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: str}
	f = arrow.Field{Name: "d", Type: dt}
	{
		// A valid key pointing at a null dictionary value is a null.
		dict := fromJSON(t, str, `["p", null]`)
		bad := array.NewDictionaryArray(dt, fromJSON(t, arrow.PrimitiveTypes.Int8, `[0, 1]`), dict)
		add("nonnull_dict_value", f, `["p", "q"]`, `["r"]`, bad, `"d"`)
	}

	// 7: dictionary keys outside the dictionary.
	f = arrow.Field{Name: "d", Type: dt, Nullable: true}
	dict := fromJSON(t, str, `["p", "q", "r"]`)
	add("dict_key_past_end", f, `["p", null]`, `["q"]`, array.NewDictionaryArray(dt, fromJSON(t, arrow.PrimitiveTypes.Int8, `[0, 3]`), dict), `"d"`)
	add("dict_key_negative", f, `["p", null]`, `["q"]`, array.NewDictionaryArray(dt, fromJSON(t, arrow.PrimitiveTypes.Int8, `[-1, 0]`), dict), `"d"`)
	dtu := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Uint32, ValueType: i32}
	f = arrow.Field{Name: "d", Type: arrow.ListOf(dtu), Nullable: true}
	{
		good := fromJSON(t, f.Type, `[[1, 2], [3]]`)
		ld := good.Data()
		cd := ld.Children()[0]
		badKeys := withData(array.MakeFromData(cd), func(bufs []*memory.Buffer, n *int) {
			b := append([]byte(nil), bufs[1].Bytes()...)
			b[4*(cd.Offset()+1)+3] = 0x80 // key 1: 2^31 + k
			bufs[1] = memory.NewBufferBytes(b)
		})
		bad := array.MakeFromData(array.NewData(f.Type, ld.Len(), ld.Buffers(), []arrow.ArrayData{badKeys.Data()}, ld.NullN(), ld.Offset()))
		add("dict_key_in_list", f, `[[1], null]`, `[[2, 3]]`, bad, `"d.item"`)
	}

	// 16: invalid UTF-8 in valid slots.
	sb := array.NewStringBuilder(memory.NewGoAllocator())
	sb.AppendValues([]string{"ok", "caf\xc3", "\xa9"}, nil) // é split across two slots
	split := sb.NewArray()
	f = arrow.Field{Name: "s", Type: str, Nullable: true}
	add("utf8_split_char", f, `["café", null]`, `["x"]`, split, `"s"`)
	sb.AppendValues([]string{strings.Repeat("ascii ", 20), "bad \xff byte"}, nil)
	add("utf8_bad_byte", f, `["a"]`, `["b"]`, sb.NewArray(), `"s"`)
	lsb := array.NewLargeStringBuilder(memory.NewGoAllocator())
	lsb.AppendValues([]string{"fine", "\xed\xa0\x80"}, nil) // a surrogate
	f = arrow.Field{Name: "s", Type: arrow.BinaryTypes.LargeString, Nullable: true}
	add("utf8_large_surrogate", f, `["a"]`, `["b"]`, lsb.NewArray(), `"s"`)
	f = arrow.Field{Name: "d", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: str}, Nullable: true}
	sb.AppendValues([]string{"good", "\xc0\xaf"}, nil) // overlong
	add("utf8_in_dictionary", f, `["a", "b"]`, `["b"]`, array.NewDictionaryArray(f.Type, fromJSON(t, arrow.PrimitiveTypes.Int16, `[0, 0]`), sb.NewArray()), `"d.dictionary"`)
	f = arrow.Field{Name: "l", Type: arrow.ListOf(arrow.StructOf(arrow.Field{Name: "t", Type: str, Nullable: true})), Nullable: true}
	{
		good := fromJSON(t, f.Type, `[[{"t": "a"}], [{"t": "b"}, {"t": "c"}]]`)
		ld := good.Data()
		sd := ld.Children()[0]
		td := sd.Children()[0]
		bt := withData(array.MakeFromData(td), func(bufs []*memory.Buffer, n *int) {
			b := append([]byte(nil), bufs[2].Bytes()...)
			b[len(b)-1] = 0xfe
			bufs[2] = memory.NewBufferBytes(b)
		})
		nsd := array.NewData(sd.DataType(), sd.Len(), sd.Buffers(), []arrow.ArrayData{bt.Data()}, sd.NullN(), sd.Offset())
		bad := array.MakeFromData(array.NewData(f.Type, ld.Len(), ld.Buffers(), []arrow.ArrayData{nsd}, ld.NullN(), ld.Offset()))
		add("utf8_in_list_struct", f, `[[{"t": "x"}]]`, `[null, []]`, bad, `"l.item.t"`)
	}

	// 8: nil arrays and missing buffers.
	f = arrow.Field{Name: "a", Type: i32, Nullable: true}
	good := []arrow.RecordBatch{oneCol(f, fromJSON(t, i32, `[1]`)), oneCol(f, fromJSON(t, i32, `[2, 3]`))}
	cases = append(cases,
		rejectCase{"nil_column", good, nilColumns{oneCol(f, fromJSON(t, i32, `[1]`))}, `"a"`},
		rejectCase{"typed_nil_array", good, typedNil{oneCol(f, fromJSON(t, i32, `[1]`))}, `"a"`},
		rejectCase{"column_of_other_type", good, otherColumn{oneCol(f, fromJSON(t, i32, `[1]`)), fromJSON(t, str, `["x"]`)}, `"a"`},
		rejectCase{"data_of_other_type", good, otherColumn{oneCol(f, fromJSON(t, i32, `[1]`)), badData{fromJSON(t, i32, `[1]`), fromJSON(t, str, `["x"]`).Data()}}, `"a"`},
		rejectCase{"nil_data", good, otherColumn{oneCol(f, fromJSON(t, i32, `[1]`)), badData{fromJSON(t, i32, `[1]`), nil}}, `"a"`},
		rejectCase{"nil_values_buffer", good, oneCol(f, rawData(fromJSON(t, i32, `[1, 2]`), func(b []*memory.Buffer, _ *int) { b[1] = nil })), `"a"`},
	)
	f = arrow.Field{Name: "s", Type: str, Nullable: true}
	add("nil_string_data", f, `["a"]`, `["b"]`, rawData(fromJSON(t, str, `["abc"]`), func(b []*memory.Buffer, _ *int) { b[2] = nil }), `"s"`)
	add("nil_string_offsets", f, `["a"]`, `["b"]`, rawData(fromJSON(t, str, `["abc"]`), func(b []*memory.Buffer, _ *int) { b[1] = nil }), `"s"`)
	f = arrow.Field{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true}
	add("nil_bool_values", f, `[true]`, `[false]`, rawData(fromJSON(t, f.Type, `[true, false]`), func(b []*memory.Buffer, _ *int) { b[1] = nil }), `"b"`)
	f = arrow.Field{Name: "l", Type: arrow.ListOf(i32), Nullable: true}
	add("nil_list_offsets", f, `[[1], [2, 3]]`, `[[], [4]]`, rawData(fromJSON(t, f.Type, `[[1, 2]]`), func(b []*memory.Buffer, _ *int) { b[1] = nil }), `"l"`)
	st = arrow.StructOf(arrow.Field{Name: "x", Type: i32, Nullable: true})
	f = arrow.Field{Name: "s", Type: st, Nullable: true}
	{
		a := fromJSON(t, st, `[{"x": 1}]`)
		d := a.Data()
		nd := array.NewData(st, 1, d.Buffers(), []arrow.ArrayData{nil}, 0, 0)
		add("nil_struct_child", f, `[{"x": 1}, {"x": 2}]`, `[null, {"x": 3}]`, badData{a, nd}, `"s"`)
		df := arrow.Field{Name: "d", Type: dt, Nullable: true}
		dd := array.NewData(dt, 1, []*memory.Buffer{nil, memory.NewBufferBytes([]byte{0})}, nil, 0, 0)
		cases = append(cases, rejectCase{"nil_dictionary",
			[]arrow.RecordBatch{oneCol(df, fromJSON(t, dt, `["a"]`)), oneCol(df, fromJSON(t, dt, `["b"]`))},
			oneCol(df, badData{fromJSON(t, dt, `["a"]`), dd}), `"d"`})
	}

	dir := t.TempDir()
	files := map[string][]arrow.RecordBatch{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name+".lance")
			w, err := writer.Create(p, tc.good[0].Schema())
			if err != nil {
				t.Fatal(err)
			}
			if err := w.WriteBatch(tc.good[0]); err != nil {
				t.Fatal(err)
			}
			err = w.WriteBatch(tc.bad)
			if !errors.Is(err, writer.ErrInvalidBatch) {
				t.Errorf("bad batch: %v, want ErrInvalidBatch", err)
			} else if !strings.Contains(err.Error(), "column "+tc.path) {
				t.Errorf("error %q does not name column %s", err, tc.path)
			}
			if err := w.WriteBatch(tc.good[1]); err != nil {
				t.Fatalf("writer not usable after a rejected batch: %v", err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			files[p] = lanceView(tc.good)
		})
	}
	verifyFiles(t, dir, files)
}

// otherColumn is a batch whose column is col, whatever its schema says.
type otherColumn struct {
	arrow.RecordBatch
	col arrow.Array
}

func (r otherColumn) Columns() []arrow.Array { return []arrow.Array{r.col} }
func (r otherColumn) Column(int) arrow.Array { return r.col }

// typedNil is a batch whose column is a typed nil *array.Int32.
type typedNil struct{ arrow.RecordBatch }

func (r typedNil) Columns() []arrow.Array { return []arrow.Array{(*array.Int32)(nil)} }
func (r typedNil) Column(int) arrow.Array { return (*array.Int32)(nil) }

type acceptCase struct {
	name string
	in   []arrow.RecordBatch
	want []arrow.RecordBatch
}

// TestAcceptedEdgeBatches: batches that are valid though they look
// suspicious are written, and read back as Arrow defines them:
//   - nulls in a non-nullable field masked by a null ancestor slot (a null
//     struct or fixed-size-list slot, child values no valid list slot
//     reaches) (issue #9.5);
//   - an array with a null count but no validity bitmap has no nulls, at
//     every nesting level, non-nullable columns and slices included (#9.6);
//   - dictionary keys of null slots may be anything (#9.7);
//   - bytes of null string slots need not be UTF-8, and multi-byte
//     characters pass the fast path (#9.16).
func TestAcceptedEdgeBatches(t *testing.T) {
	i32 := arrow.PrimitiveTypes.Int32
	str := arrow.BinaryTypes.String
	var cases []acceptCase
	same := func(name string, f arrow.Field, js ...string) {
		var recs []arrow.RecordBatch
		for _, j := range js {
			recs = append(recs, oneCol(f, fromJSON(t, f.Type, j)))
		}
		cases = append(cases, acceptCase{name, recs, recs})
	}
	// 5: masked nulls.
	same("masked_struct_child", arrow.Field{Name: "s", Type: arrow.StructOf(arrow.Field{Name: "x", Type: i32}), Nullable: true},
		`[{"x": 1}, null, {"x": 3}]`)
	{
		st := arrow.StructOf(arrow.Field{Name: "x", Type: i32})
		f := arrow.Field{Name: "s", Type: st, Nullable: true}
		// The child's null sits exactly under the struct's null.
		x := fromJSON(t, i32, `[1, null, 3]`)
		sd := array.NewData(st, 3, []*memory.Buffer{memory.NewBufferBytes([]byte{0b101})}, []arrow.ArrayData{x.Data()}, 1, 0)
		in := oneCol(f, array.MakeFromData(sd))
		cases = append(cases, acceptCase{"masked_struct_child_null", []arrow.RecordBatch{in}, []arrow.RecordBatch{in}})
	}
	{
		inner := arrow.StructOf(arrow.Field{Name: "y", Type: i32})
		ot := arrow.StructOf(arrow.Field{Name: "i", Type: inner})
		f := arrow.Field{Name: "o", Type: ot, Nullable: true}
		y := fromJSON(t, i32, `[1, null, 3]`)
		id := array.NewData(inner, 3, []*memory.Buffer{memory.NewBufferBytes([]byte{0b101})}, []arrow.ArrayData{y.Data()}, 1, 0)
		od := array.NewData(ot, 3, []*memory.Buffer{memory.NewBufferBytes([]byte{0b101})}, []arrow.ArrayData{id}, 1, 0)
		in := oneCol(f, array.MakeFromData(od))
		cases = append(cases, acceptCase{"masked_nested", []arrow.RecordBatch{in}, []arrow.RecordBatch{in}})
	}
	{
		lt := arrow.ListOfField(arrow.Field{Name: "item", Type: i32})
		f := arrow.Field{Name: "l", Type: lt, Nullable: true}
		// Slot 1 is a null list over child value 1 (null); child value 4
		// (null) lies past the last offset.
		vals := fromJSON(t, i32, `[1, null, 2, 3, null]`)
		offs := memory.NewBufferBytes(arrow.Int32Traits.CastToBytes([]int32{0, 1, 2, 4}))
		ld := array.NewData(lt, 3, []*memory.Buffer{memory.NewBufferBytes([]byte{0b101}), offs}, []arrow.ArrayData{vals.Data()}, 1, 0)
		in := oneCol(f, array.MakeFromData(ld))
		want := oneCol(f, fromJSON(t, lt, `[[1], null, [2, 3]]`))
		cases = append(cases, acceptCase{"masked_list_garbage", []arrow.RecordBatch{in}, []arrow.RecordBatch{want}})
	}
	{
		ft := arrow.FixedSizeListOfField(2, arrow.Field{Name: "item", Type: i32})
		f := arrow.Field{Name: "v", Type: ft, Nullable: true}
		vals := fromJSON(t, i32, `[1, 2, null, null, 5, 6]`)
		fd := array.NewData(ft, 3, []*memory.Buffer{memory.NewBufferBytes([]byte{0b101})}, []arrow.ArrayData{vals.Data()}, 1, 0)
		in := oneCol(f, array.MakeFromData(fd))
		cases = append(cases, acceptCase{"masked_fsl_items", []arrow.RecordBatch{in}, []arrow.RecordBatch{in}})
	}

	// 6: a null count without a bitmap, at every level.
	nb := func(name string, f arrow.Field, js string, edit func(a arrow.Array) arrow.Array) {
		want := fromJSON(t, f.Type, js)
		in := edit(want)
		cases = append(cases, acceptCase{name, []arrow.RecordBatch{oneCol(f, in)}, []arrow.RecordBatch{oneCol(f, want)}})
	}
	drop := func(a arrow.Array) arrow.Array { return noBitmap(a, 2) }
	nb("nobitmap_leaf", arrow.Field{Name: "a", Type: i32, Nullable: true}, `[1, 2, 3, 4]`, drop)
	nb("nobitmap_leaf_nonnull", arrow.Field{Name: "a", Type: i32}, `[1, 2, 3, 4]`, drop)
	nb("nobitmap_string", arrow.Field{Name: "s", Type: str}, `["a", "bb", "", "d"]`, drop)
	nb("nobitmap_bool", arrow.Field{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true}, `[true, false, true]`, drop)
	nb("nobitmap_sliced", arrow.Field{Name: "a", Type: i32, Nullable: true}, `[2, 3]`, func(a arrow.Array) arrow.Array {
		full := noBitmap(fromJSON(t, i32, `[1, 2, 3, 4]`), 3)
		return array.NewSlice(full, 1, 3) // null count unknown, no bitmap
	})
	st := arrow.StructOf(arrow.Field{Name: "x", Type: i32, Nullable: true}, arrow.Field{Name: "y", Type: str, Nullable: true})
	nb("nobitmap_struct", arrow.Field{Name: "s", Type: st, Nullable: true}, `[{"x": 1, "y": "a"}, {"x": 2, "y": "b"}, {"x": 3, "y": null}]`, drop)
	nb("nobitmap_struct_child", arrow.Field{Name: "s", Type: st, Nullable: true}, `[{"x": 1, "y": "a"}, null, {"x": 3, "y": "c"}]`, func(a arrow.Array) arrow.Array {
		d := a.Data()
		x := noBitmap(array.MakeFromData(d.Children()[0]), 2)
		return array.MakeFromData(array.NewData(st, d.Len(), d.Buffers(), []arrow.ArrayData{x.Data(), d.Children()[1]}, d.NullN(), d.Offset()))
	})
	nb("nobitmap_struct_child_sliced", arrow.Field{Name: "s", Type: st, Nullable: true}, `[{"x": 2, "y": null}, {"x": 3, "y": "c"}]`, func(a arrow.Array) arrow.Array {
		full := fromJSON(t, st, `[{"x": 1, "y": "a"}, {"x": 2, "y": null}, {"x": 3, "y": "c"}]`)
		d := full.Data()
		x := noBitmap(array.MakeFromData(d.Children()[0]), 1)
		s := array.MakeFromData(array.NewData(st, d.Len(), d.Buffers(), []arrow.ArrayData{x.Data(), d.Children()[1]}, d.NullN(), d.Offset()))
		return array.NewSlice(s, 1, 3)
	})
	lt := arrow.ListOf(i32)
	nb("nobitmap_list", arrow.Field{Name: "l", Type: lt, Nullable: true}, `[[1, 2], [], [3]]`, drop)
	nb("nobitmap_list_item", arrow.Field{Name: "l", Type: lt, Nullable: true}, `[[1, 2], null, [3]]`, func(a arrow.Array) arrow.Array {
		d := a.Data()
		c := noBitmap(array.MakeFromData(d.Children()[0]), 1)
		return array.MakeFromData(array.NewData(lt, d.Len(), d.Buffers(), []arrow.ArrayData{c.Data()}, d.NullN(), d.Offset()))
	})
	ft := arrow.FixedSizeListOf(2, i32)
	nb("nobitmap_fsl", arrow.Field{Name: "v", Type: ft, Nullable: true}, `[[1, 2], [3, 4]]`, drop)
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: str}
	nb("nobitmap_dict_keys", arrow.Field{Name: "d", Type: dt, Nullable: true}, `["p", "q", "p"]`, drop)
	nb("nobitmap_dict_values", arrow.Field{Name: "d", Type: dt, Nullable: true}, `["p", "q", "p"]`, func(a arrow.Array) arrow.Array {
		da := a.(*array.Dictionary)
		return array.NewDictionaryArray(dt, da.Indices(), noBitmap(da.Dictionary(), 1))
	})

	// 7: keys of null slots are not looked at.
	{
		f := arrow.Field{Name: "d", Type: dt, Nullable: true}
		keys := withData(fromJSON(t, arrow.PrimitiveTypes.Int8, `[0, 99, -5, 1]`), func(b []*memory.Buffer, n *int) {
			b[0] = memory.NewBufferBytes([]byte{0b1001})
			*n = 2
		})
		in := array.NewDictionaryArray(dt, keys, fromJSON(t, str, `["p", "q"]`))
		cases = append(cases, acceptCase{"dict_null_slot_keys", []arrow.RecordBatch{oneCol(f, in)}, []arrow.RecordBatch{oneCol(f, fromJSON(t, dt, `["p", null, null, "q"]`))}})
	}

	// 16: invalid bytes under null slots; valid multi-byte text.
	{
		f := arrow.Field{Name: "s", Type: str, Nullable: true}
		b := array.NewStringBuilder(memory.NewGoAllocator())
		b.AppendValues([]string{"ok", "\xff\xfe", "é"}, []bool{true, false, true})
		in := b.NewArray()
		cases = append(cases, acceptCase{"utf8_null_slot", []arrow.RecordBatch{oneCol(f, in)}, []arrow.RecordBatch{oneCol(f, fromJSON(t, str, `["ok", null, "é"]`))}})
		var words []string
		for i := range 500 {
			words = append(words, fmt.Sprintf("%d:%s", i, []string{"plain ascii text", "Grüße", "日本語", "🙂", "", "x"}[i%6]))
		}
		b.AppendValues(words, nil)
		in = b.NewArray()
		cases = append(cases, acceptCase{"utf8_multibyte", []arrow.RecordBatch{oneCol(f, in), oneCol(f, array.NewSlice(in, 7, 300))}, []arrow.RecordBatch{oneCol(f, in), oneCol(f, array.NewSlice(in, 7, 300))}})
	}

	dir := t.TempDir()
	files := map[string][]arrow.RecordBatch{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name+".lance")
			w, err := writer.Create(p, tc.in[0].Schema())
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range tc.in {
				if err := w.WriteBatch(r); err != nil {
					t.Fatalf("WriteBatch: %v", err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			files[p] = lanceView(tc.want)
		})
	}
	verifyFiles(t, dir, files)
}
