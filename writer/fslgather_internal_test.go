package writer

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/structural"
)

// TestGatherFSLBulk checks the bulk gather of one-level fixed-size lists
// against the item-by-item walk: row nulls, item nulls (in valid and in
// null rows), children without a validity bitmap, sliced arrays and several
// segments, with and without visibleOnly.
func TestGatherFSLBulk(t *testing.T) {
	for _, dt := range []arrow.DataType{arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Uint8} {
		for _, shape := range []struct {
			name              string
			rowNull, itemNull float64
		}{{"dense", 0, 0}, {"row nulls", 0.4, 0}, {"item nulls", 0, 0.05}, {"both", 0.3, 0.1}, {"all null rows", 1, 0.2}} {
			t.Run(fmt.Sprintf("%s/%s", dt, shape.name), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(len(shape.name)), uint64(dt.ID())))
				const dim = 5
				ft := arrow.FixedSizeListOf(dim, dt)
				li, err := classifyLeaf(ft)
				if err != nil {
					t.Fatal(err)
				}
				// Arrays are assembled from buffers so that the values
				// under null items and null rows are not zero: the
				// gather must zero them itself.
				var arrs []arrow.Array
				for k := 0; k < 3; k++ {
					const rows = 40
					bw := dt.(arrow.FixedWidthDataType).BitWidth() / 8
					vals := make([]byte, rows*dim*bw)
					for i := range vals {
						vals[i] = byte(r.IntN(255) + 1)
					}
					rowValid := make([]byte, (rows+7)/8)
					itemValid := make([]byte, (rows*dim+7)/8)
					rowNulls, itemNulls := 0, 0
					for i := 0; i < rows; i++ {
						if r.Float64() < shape.rowNull {
							rowNulls++
						} else {
							bitutil.SetBit(rowValid, i)
						}
					}
					for i := 0; i < rows*dim; i++ {
						if r.Float64() < shape.itemNull {
							itemNulls++
						} else {
							bitutil.SetBit(itemValid, i)
						}
					}
					var itemBuf *memory.Buffer
					if itemNulls > 0 {
						itemBuf = memory.NewBufferBytes(itemValid)
					}
					child := array.NewData(dt, rows*dim, []*memory.Buffer{itemBuf, memory.NewBufferBytes(vals)}, nil, itemNulls, 0)
					fd := array.NewData(ft, rows, []*memory.Buffer{memory.NewBufferBytes(rowValid)}, []arrow.ArrayData{child}, rowNulls, 0)
					a := array.MakeFromData(fd)
					child.Release()
					fd.Release()
					s := array.NewSlice(a, int64(k), int64(a.Len()-k))
					a.Release()
					arrs = append(arrs, s)
				}
				segs := []structural.Segment{{Arr: arrs[0], Start: 0, End: arrs[0].Len()}, {Arr: arrs[1], Start: 3, End: 20}, {Arr: arrs[2], Start: 1, End: arrs[2].Len() - 1}}
				for _, vis := range []bool{false, true} {
					wd, wv := walkFSL(nil, nil, segs, li, vis)
					bd, bv, ok := gatherFSLBulk([]byte{9, 9}, []byte{7}, segs, li, vis)
					if !ok {
						t.Fatal("bulk gather refused a one-level fixed-width FSL")
					}
					if !bytes.Equal(bd, wd) {
						t.Fatalf("visibleOnly %v: data differs (%d vs %d bytes)", vis, len(bd), len(wd))
					}
					var want []byte
					if len(wv) > 0 {
						want = wv[0]
					}
					if (bv == nil) != (want == nil) || !bytes.Equal(bv, want) {
						t.Fatalf("visibleOnly %v: item validity %x, walk %x", vis, bv, want)
					}
				}
				for _, a := range arrs {
					a.Release()
				}
			})
		}
	}
}
