package reader

import (
	"fmt"
	"sort"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// ReadAll reads every row of every column.
func (f *File) ReadAll() (arrow.RecordBatch, error) { return f.ReadRange(0, f.numRows) }

// ReadRange reads rows [start, start+n).
func (f *File) ReadRange(start, n int64) (arrow.RecordBatch, error) {
	if start < 0 || n < 0 || start > f.numRows || n > f.numRows-start {
		return nil, fmt.Errorf("range [%d, +%d) of %d rows: %w", start, n, f.numRows, ErrOutOfRange)
	}
	idx := make([]int64, n)
	for i := range idx {
		idx[i] = start + int64(i)
	}
	return f.Take(idx)
}

// Take reads the rows at the given indices, in the given order (repeats
// allowed).
func (f *File) Take(indices []int64) (arrow.RecordBatch, error) {
	for _, i := range indices {
		if i < 0 || i >= f.numRows {
			return nil, fmt.Errorf("row %d of %d: %w", i, f.numRows, ErrOutOfRange)
		}
	}
	cols := make([]arrow.Array, 0, len(f.columns))
	release := func() {
		for _, c := range cols {
			c.Release()
		}
	}
	for ci := range f.columns {
		a, err := f.takeColumn(ci, indices)
		if err != nil {
			release()
			return nil, fmt.Errorf("column %q: %w", f.leaves[ci].Path, err)
		}
		cols = append(cols, a)
	}
	rec := array.NewRecordBatch(f.schema, cols, int64(len(indices)))
	release()
	return rec, nil
}

func bitWidth(dt arrow.DataType) int {
	if fw, ok := dt.(arrow.FixedWidthDataType); ok {
		return fw.BitWidth()
	}
	return 0
}

func (f *File) takeColumn(ci int, indices []int64) (arrow.Array, error) {
	leaf := f.leaves[ci]
	if len(f.schema.Fields()) != len(f.leaves) {
		return nil, fmt.Errorf("nested schemas: %w", ErrUnsupported)
	}
	dt := leaf.Field.Type
	bits := bitWidth(dt)
	if bits == 0 || bits%8 != 0 || bits > 64 || dt.ID() == arrow.DICTIONARY {
		return nil, fmt.Errorf("type %s: %w", dt, ErrUnsupported)
	}
	bw := bits / 8
	pages := f.columns[ci]
	n := len(indices)
	vals := make([]byte, n*bw)
	valid := make([]byte, bitutil.BytesForBits(int64(n)))
	nulls := 0
	cache := map[int]*flatPage{}
	for i, row := range indices {
		pi := sort.Search(len(pages), func(k int) bool { return pages[k].firstRow+pages[k].rows > uint64(row) })
		p := pages[pi]
		dp, ok := cache[pi]
		if !ok {
			var err error
			if dp, err = f.decodeFlat(p, bits); err != nil {
				return nil, fmt.Errorf("page %d: %w", pi, err)
			}
			if len(dp.vals) != dp.n*bw || (dp.def != nil && len(dp.def) != dp.n) {
				return nil, fmt.Errorf("page %d decoded to %d values for %d rows: %w", pi, len(dp.vals)/bw, dp.n, ErrCorrupt)
			}
			cache[pi] = dp
		}
		k := int(uint64(row) - p.firstRow)
		copy(vals[i*bw:], dp.vals[k*bw:(k+1)*bw])
		if dp.allNull || (dp.def != nil && dp.def[k] != 0) {
			nulls++
		} else {
			bitutil.SetBit(valid, i)
		}
	}
	var vb *memory.Buffer
	if nulls > 0 {
		vb = memory.NewBufferBytes(valid)
	}
	data := array.NewData(dt, n, []*memory.Buffer{vb, memory.NewBufferBytes(vals)}, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}
