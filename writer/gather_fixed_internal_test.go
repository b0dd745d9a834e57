package writer

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/bulk"
	"github.com/planarlance/planar/internal/par"
	"github.com/planarlance/planar/structural"
)

// TestGatherFixedPieces: a page of many segments (sliced arrays with nulls,
// of uneven lengths, some shorter than a piece and some spanning a cut)
// gathers, in pieces on more cores than the machine may have, into
// not-cleared memory, what a value-by-value loop gives: each value, null
// slots zero.
func TestGatherFixedPieces(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(5))
	mem := memory.NewGoAllocator()
	r := rand.New(rand.NewPCG(3, 4))
	for iter := range 6 {
		var segs []structural.Segment
		var want []byte
		for total := 0; total < 3*par.MinValues+iter*7919; {
			n := 1 + r.IntN([]int{50, 5000, par.MinValues}[r.IntN(3)])
			b := array.NewInt64Builder(mem)
			for i := range n + 20 {
				if r.IntN(5) == 0 {
					b.AppendNull()
				} else {
					b.Append(int64(r.Uint64()) ^ int64(i))
				}
			}
			a := b.NewInt64Array()
			start := r.IntN(10)
			sl := array.NewSlice(a, int64(r.IntN(10)), int64(n+20)).(*array.Int64)
			end := start + min(n, sl.Len()-start)
			segs = append(segs, structural.Segment{Arr: sl, Start: start, End: end})
			for i := start; i < end; i++ {
				v := uint64(0)
				if sl.IsValid(i) {
					v = uint64(sl.Value(i))
				}
				want = binary.LittleEndian.AppendUint64(want, v)
			}
			total += end - start
		}
		head := []byte("kept")
		dst := append(bulk.Make(len(head)+len(want)), head...)
		// The memory past the head is not cleared: fill it with junk to
		// be sure every byte is written.
		junk := dst[:cap(dst)]
		for i := len(head); i < len(junk); i++ {
			junk[i] = 0xA5
		}
		got := gatherFixed(dst, segs, 8)
		if !bytes.Equal(got[:len(head)], head) || !bytes.Equal(got[len(head):], want) {
			t.Fatalf("iter %d: %d segments, %d values: gathered bytes differ", iter, len(segs), len(want)/8)
		}
	}
}
