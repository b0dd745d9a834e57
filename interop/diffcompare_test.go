package interop

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// rows addresses the rows of a column held in several chunks.
type rows struct {
	chunks []arrow.Array
	starts []int
	n      int
}

func rowsOf(chunks []arrow.Array) rows {
	r := rows{chunks: chunks}
	for _, c := range chunks {
		r.starts = append(r.starts, r.n)
		r.n += c.Len()
	}
	return r
}

func (r rows) at(i int) (arrow.Array, int) {
	k := len(r.starts) - 1
	for k > 0 && r.starts[k] > i {
		k--
	}
	for k < len(r.chunks)-1 && r.chunks[k].Len() == 0 {
		k++
	}
	return r.chunks[k], i - r.starts[k]
}

// diffColumns compares got with want row for row (want rows wantIdx, in
// order) exactly: types, validity and values, floats bit for bit. Slots under
// a null parent are not compared (Arrow leaves them undefined); dictionary
// arrays compare by the values they point at. It returns at most max
// differences.
func diffColumns(name string, got rows, want rows, wantIdx []int, max int) []string {
	var out []string
	if got.n != len(wantIdx) {
		return []string{fmt.Sprintf("column %s: %d rows, want %d", name, got.n, len(wantIdx))}
	}
	if len(got.chunks) > 0 && len(want.chunks) > 0 {
		gt, wt := got.chunks[0].DataType(), want.chunks[0].DataType()
		if d := typeDiff(gt, wt, name); d != "" {
			return []string{"type: " + d}
		}
	}
	for i, wi := range wantIdx {
		g, gi := got.at(i)
		w, wj := want.at(wi)
		if d := diffSlot(g, gi, w, wj); d != "" {
			out = append(out, fmt.Sprintf("column %s row %d: %s", name, wi, d))
			if len(out) >= max {
				break
			}
		}
	}
	return out
}

func diffSlot(g arrow.Array, gi int, w arrow.Array, wi int) string {
	gn, wn := g.IsNull(gi), w.IsNull(wi)
	if gn != wn {
		return fmt.Sprintf("null=%v, want null=%v (want %s)", gn, wn, slotString(w, wi))
	}
	if gn {
		return ""
	}
	if gd, ok := g.(*array.Dictionary); ok {
		g, gi = gd.Dictionary(), gd.GetValueIndex(gi)
	}
	if wd, ok := w.(*array.Dictionary); ok {
		w, wi = wd.Dictionary(), wd.GetValueIndex(wi)
	}
	if g.DataType().ID() != w.DataType().ID() {
		return fmt.Sprintf("type %s, want %s", g.DataType(), w.DataType())
	}
	switch ga := g.(type) {
	case *array.Null:
		return ""
	case *array.Struct:
		wa := w.(*array.Struct)
		st := ga.DataType().(*arrow.StructType)
		for k := 0; k < ga.NumField(); k++ {
			if d := diffSlot(ga.Field(k), gi, wa.Field(k), wi); d != "" {
				return "." + st.Field(k).Name + ": " + d
			}
		}
		return ""
	case array.ListLike:
		wa := w.(array.ListLike)
		gs, ge := ga.ValueOffsets(gi)
		ws, we := wa.ValueOffsets(wi)
		if ge-gs != we-ws {
			return fmt.Sprintf("%d items, want %d (want %s)", ge-gs, we-ws, slotString(w, wi))
		}
		for k := int64(0); k < ge-gs; k++ {
			if d := diffSlot(ga.ListValues(), int(gs+k), wa.ListValues(), int(ws+k)); d != "" {
				return fmt.Sprintf("[%d]%s", k, d)
			}
		}
		return ""
	case *array.String:
		if a, b := ga.Value(gi), w.(*array.String).Value(wi); a != b {
			return fmt.Sprintf("%q, want %q", a, b)
		}
	case *array.LargeString:
		if a, b := ga.Value(gi), w.(*array.LargeString).Value(wi); a != b {
			return fmt.Sprintf("%q, want %q", a, b)
		}
	case *array.Binary:
		if a, b := ga.Value(gi), w.(*array.Binary).Value(wi); !bytes.Equal(a, b) {
			return fmt.Sprintf("%x, want %x", a, b)
		}
	case *array.LargeBinary:
		if a, b := ga.Value(gi), w.(*array.LargeBinary).Value(wi); !bytes.Equal(a, b) {
			return fmt.Sprintf("%x, want %x", a, b)
		}
	case *array.FixedSizeBinary:
		if a, b := ga.Value(gi), w.(*array.FixedSizeBinary).Value(wi); !bytes.Equal(a, b) {
			return fmt.Sprintf("%x, want %x", a, b)
		}
	case *array.Boolean:
		if a, b := ga.Value(gi), w.(*array.Boolean).Value(wi); a != b {
			return fmt.Sprintf("%v, want %v", a, b)
		}
	default:
		fw, ok := g.DataType().(arrow.FixedWidthDataType)
		if !ok {
			return "cannot compare type " + g.DataType().String()
		}
		a, b := fixedBytes(g, gi, fw.BitWidth()/8), fixedBytes(w, wi, fw.BitWidth()/8)
		if !bytes.Equal(a, b) {
			return fmt.Sprintf("%s (%x), want %s (%x)", slotString(g, gi), a, slotString(w, wi), b)
		}
	}
	return ""
}

// fixedBytes is the bytes of slot i of a fixed-width array.
func fixedBytes(a arrow.Array, i, width int) []byte {
	d := a.Data()
	buf := d.Buffers()[1]
	if buf == nil {
		return nil
	}
	p := (d.Offset() + i) * width
	if p+width > buf.Len() {
		return nil
	}
	return buf.Bytes()[p : p+width]
}

func slotString(a arrow.Array, i int) string {
	s := array.NewSlice(a, int64(i), int64(i+1))
	defer s.Release()
	out := fmt.Sprint(s)
	if len(out) > 200 {
		out = out[:200] + "..."
	}
	return strings.TrimSuffix(strings.TrimPrefix(out, "["), "]")
}

// typeDiff names the first place where two types differ: a type, a child
// field's name, nullability or metadata, a dimension or a map's sortedness.
// A map compares by its key and item fields (arrow-go's MapOf and pyarrow
// name the inner list field differently; the data is the same).
func typeDiff(g, w arrow.DataType, path string) string {
	if g.ID() != w.ID() {
		return fmt.Sprintf("%s: %s, want %s", path, g, w)
	}
	var gfs, wfs []arrow.Field
	switch gt := g.(type) {
	case *arrow.MapType:
		wt := w.(*arrow.MapType)
		if gt.KeysSorted != wt.KeysSorted {
			return fmt.Sprintf("%s: keys sorted %v, want %v", path, gt.KeysSorted, wt.KeysSorted)
		}
		gfs, wfs = []arrow.Field{gt.KeyField(), gt.ItemField()}, []arrow.Field{wt.KeyField(), wt.ItemField()}
	case *arrow.FixedSizeListType:
		if gt.Len() != w.(*arrow.FixedSizeListType).Len() {
			return fmt.Sprintf("%s: dimension %d, want %d", path, gt.Len(), w.(*arrow.FixedSizeListType).Len())
		}
		gfs, wfs = gt.Fields(), w.(arrow.NestedType).Fields()
	case arrow.NestedType:
		gfs, wfs = gt.Fields(), w.(arrow.NestedType).Fields()
	default:
		if !arrow.TypeEqual(g, w) {
			return fmt.Sprintf("%s: %s, want %s", path, g, w)
		}
		return ""
	}
	if len(gfs) != len(wfs) {
		return fmt.Sprintf("%s: %d children, want %d", path, len(gfs), len(wfs))
	}
	for i := range gfs {
		p := path + "." + wfs[i].Name
		switch {
		case gfs[i].Name != wfs[i].Name:
			return fmt.Sprintf("%s: child named %q", p, gfs[i].Name)
		case gfs[i].Nullable != wfs[i].Nullable && !vectorItem(g, wfs[i]):
			return fmt.Sprintf("%s: nullable %v, want %v", p, gfs[i].Nullable, wfs[i].Nullable)
		case !gfs[i].Metadata.Equal(wfs[i].Metadata):
			return fmt.Sprintf("%s: metadata %v, want %v", p, gfs[i].Metadata, wfs[i].Metadata)
		}
		if d := typeDiff(gfs[i].Type, wfs[i].Type, p); d != "" {
			return d
		}
	}
	return ""
}

// vectorItem reports whether f is the item of a fixed-size list of a
// non-struct: Lance stores such a list as one logical type
// ("fixed_size_list:int16:3") with no child field, so the item's
// nullability does not survive a Lance file (pylance 14 reads every such
// item as nullable too).
func vectorItem(parent arrow.DataType, f arrow.Field) bool {
	_, fsl := parent.(*arrow.FixedSizeListType)
	return fsl && f.Type.ID() != arrow.STRUCT
}
