package reader

import (
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/planarlance/planar/values"
)

// TestChunkSpanFrom: the chunks of a row window found from any starting
// chunk are those a search over all chunks finds, on pages whose chunks
// hold no row start (rows longer than a chunk) and whose rows cross chunks.
func TestChunkSpanFrom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for it := range 2000 {
		n := 1 + rng.IntN(40)
		m := &denseMeta{refs: make([]values.ChunkRef, n), chunkRow: make([]uint64, n+1), trailer: make([]bool, n)}
		for c := 1; c <= n; c++ {
			m.chunkRow[c] = m.chunkRow[c-1] + uint64(rng.IntN(4)) // 0: a chunk inside one row
		}
		if m.chunkRow[n] == 0 {
			m.chunkRow[n] = 1
		}
		for c := range m.trailer {
			m.trailer[c] = rng.IntN(3) == 0
		}
		rows := m.chunkRow[n]
		search := func(r uint64) int { return sort.Search(n, func(c int) bool { return m.chunkRow[c+1] > r }) }
		for range 20 {
			a := rng.Uint64N(rows)
			b := a + 1 + rng.Uint64N(rows-a)
			from := rng.IntN(n+3) - 1
			c0, c1 := m.chunkSpanFrom(a, b, from)
			w0, w1 := search(a), search(b-1)
			if w1 < n && m.chunkRow[w1+1] == b {
				for w1 < n-1 && m.trailer[w1] {
					w1++
				}
			}
			w1 = min(w1, n-1)
			if c0 != w0 || c1 != w1 {
				t.Fatalf("case %d: chunk rows %v, trailers %v: rows [%d, %d) from chunk %d: chunks [%d, %d], want [%d, %d]",
					it, m.chunkRow, m.trailer, a, b, from, c0, c1, w0, w1)
			}
		}
	}
}
