package writer

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// validateArray checks that an array's buffers, offsets and children are
// consistent with its length and offset, so encoding it cannot read out of
// bounds. Errors wrap ErrInvalidBatch and name the column path.
func validateArray(a arrow.Array, name string) error {
	return validateData(a.Data(), name, 0)
}

func validateData(d arrow.ArrayData, path string, depth int) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("column %q: %s: %w", path, fmt.Sprintf(format, args...), ErrInvalidBatch)
	}
	if depth > 64 {
		return bad("nested too deep")
	}
	off, n := d.Offset(), d.Len()
	if off < 0 || n < 0 {
		return bad("negative offset or length")
	}
	bufs := d.Buffers()
	end := off + n
	if len(bufs) > 0 && bufs[0] != nil && d.NullN() != 0 && bufs[0].Len() < int(bitutil.BytesForBits(int64(end))) {
		return bad("validity bitmap of %d bytes for %d slots", bufs[0].Len(), end)
	}
	need := func(i, bytes int) error {
		if bytes == 0 {
			return nil
		}
		if len(bufs) <= i || bufs[i] == nil || bufs[i].Len() < bytes {
			return bad("buffer %d shorter than %d bytes", i, bytes)
		}
		return nil
	}
	offsets := func(w int) ([]int64, error) {
		if n == 0 {
			return nil, nil
		}
		if err := need(1, (end+1)*w); err != nil {
			return nil, err
		}
		b := bufs[1].Bytes()
		out := make([]int64, 0, n+1)
		for i := off; i <= end; i++ {
			var o int64
			if w == 4 {
				o = int64(int32(uint32(b[4*i]) | uint32(b[4*i+1])<<8 | uint32(b[4*i+2])<<16 | uint32(b[4*i+3])<<24))
			} else {
				var u uint64
				for k := 7; k >= 0; k-- {
					u = u<<8 | uint64(b[8*i+k])
				}
				o = int64(u)
			}
			if o < 0 || (len(out) > 0 && o < out[len(out)-1]) {
				return nil, bad("offset %d at slot %d is negative or decreasing", o, i)
			}
			out = append(out, o)
		}
		return out, nil
	}
	switch t := d.DataType().(type) {
	case *arrow.NullType:
		return nil
	case *arrow.BooleanType:
		return need(1, int(bitutil.BytesForBits(int64(end))))
	case *arrow.StringType, *arrow.BinaryType, *arrow.LargeStringType, *arrow.LargeBinaryType:
		w := 4
		if t.ID() == arrow.LARGE_STRING || t.ID() == arrow.LARGE_BINARY {
			w = 8
		}
		o, err := offsets(w)
		if err != nil || o == nil {
			return err
		}
		return need(2, int(o[len(o)-1]))
	case *arrow.ListType, *arrow.LargeListType, *arrow.MapType:
		w := 4
		if t.ID() == arrow.LARGE_LIST {
			w = 8
		}
		if len(d.Children()) != 1 {
			return bad("list without one child")
		}
		o, err := offsets(w)
		if err != nil {
			return err
		}
		if o != nil && o[len(o)-1] > int64(d.Children()[0].Len()) {
			return bad("list offsets reach %d past a child of %d", o[len(o)-1], d.Children()[0].Len())
		}
		return validateData(d.Children()[0], path+".item", depth+1)
	case *arrow.FixedSizeListType:
		if len(d.Children()) != 1 {
			return bad("fixed-size list without one child")
		}
		if c := d.Children()[0]; c.Len() < end*int(t.Len()) {
			return bad("fixed-size list child of %d slots for %d rows of %d", c.Len(), end, t.Len())
		}
		return validateData(d.Children()[0], path+".item", depth+1)
	case *arrow.StructType:
		if len(d.Children()) != t.NumFields() {
			return bad("struct with %d children for %d fields", len(d.Children()), t.NumFields())
		}
		for i, c := range d.Children() {
			if c.Len() < end {
				return bad("struct child %q of %d slots for %d", t.Field(i).Name, c.Len(), end)
			}
			if err := validateData(c, path+"."+t.Field(i).Name, depth+1); err != nil {
				return err
			}
		}
		return nil
	case *arrow.DictionaryType:
		if err := need(1, end*t.IndexType.(arrow.FixedWidthDataType).BitWidth()/8); err != nil {
			return err
		}
		dict := d.Dictionary()
		if dict == nil {
			return bad("dictionary array without a dictionary")
		}
		if err := validateData(dict, path+".dictionary", depth+1); err != nil {
			return err
		}
		// Keys must name dictionary entries; the structural builder checks
		// each key against the dictionary length.
		return nil
	case arrow.FixedWidthDataType:
		return need(1, end*t.BitWidth()/8)
	}
	return bad("type %s", d.DataType())
}
