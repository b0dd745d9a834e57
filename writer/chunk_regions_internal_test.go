package writer

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
)

// TestChunkPiecesOutgrowRegions: large pages whose chunks are encoded in
// pieces, each into a region of the page's buffer, write the same bytes
// when every region is too small (the pieces are appended elsewhere and
// copied), on four cores and on one.
func TestChunkPiecesOutgrowRegions(t *testing.T) {
	if testing.Short() {
		t.Skip("large pages")
	}
	var recs []arrow.RecordBatch
	for _, c := range corpus.PerfClasses(0.3) {
		switch c.Name {
		case "int32-small-nulls", "random-strings", "list-int32-nulls", "struct-i32-str-list":
			r := c.Record(memory.DefaultAllocator, 5)
			defer r.Release()
			recs = append(recs, r)
		}
	}
	if len(recs) != 4 {
		t.Fatalf("%d classes found", len(recs))
	}
	write := func(procs int, squeeze bool) [][]byte {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		testSqueezeRegions = squeeze
		defer func() { testSqueezeRegions = false }()
		var files [][]byte
		for _, r := range recs {
			file, _ := writeCut(t, r, []int64{0, r.NumRows()}, WithMaxPageBytes(64<<20))
			files = append(files, file)
		}
		return files
	}
	want := write(1, false)
	for _, procs := range []int{1, 4} {
		got := write(procs, true)
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Errorf("GOMAXPROCS %d, regions too small: file %d differs", procs, i)
			}
		}
	}
}
