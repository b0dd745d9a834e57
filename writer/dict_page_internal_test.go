package writer

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/planarlance/planar/values"
)

// TestInternPageInPieces: a page interned in pieces side by side (few
// distinct keys), or by hash parts (many distinct 8-byte keys), gets the
// ids one pass gives (first occurrence over the page, nulls sharing the
// first null's), for fixed 8-byte, fixed 16-byte and variable values, with
// and without nulls (one pass itself against a map); a page past the limit
// is refused either way.
func TestInternPageInPieces(t *testing.T) {
	prev := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(prev)
	const n = 300_000 // several pieces of at least par.MinValues
	r := rand.New(rand.NewPCG(4, 5))
	for _, distinct := range []int{300, 60000} {
		for _, bw := range []int{8, 16, 0} {
			for _, nullEvery := range []int{0, 7} {
				name := fmt.Sprintf("%d distinct, width %d, nulls every %d", distinct, bw, nullEvery)
				pv := pageValues{n: n, nulls: make([]bool, n)}
				if bw == 0 {
					pv.offsets = []uint64{0}
				}
				for i := range n {
					null := nullEvery > 0 && i%nullEvery == 3
					pv.nulls[i] = null
					k := r.IntN(distinct)
					switch {
					case bw > 0 && null:
						pv.fixed = append(pv.fixed, make([]byte, bw)...)
					case bw > 0:
						v := make([]byte, bw)
						binary.LittleEndian.PutUint64(v, uint64(k)*0x9e3779b97f4a7c15)
						pv.fixed = append(pv.fixed, v...)
					case null:
						pv.offsets = append(pv.offsets, uint64(len(pv.fixed)))
					default:
						pv.fixed = fmt.Appendf(pv.fixed, "value-%d", k)
						pv.offsets = append(pv.offsets, uint64(len(pv.fixed)))
					}
				}
				if bw > 0 {
					pv.info.kind, pv.info.bits = values.KindFixed, 8*bw
				}
				want := make([]byte, 4*n)
				one := newDictTable(100000, bw)
				if !internRange(one, pv, pv.nulls, want, 0, n) {
					t.Fatalf("%s: one pass refused", name)
				}
				// The one pass against a map: ids by first occurrence of
				// each key's bytes (a null slot's are zeros or empty).
				ids := map[string]uint32{}
				for i := range n {
					var key []byte
					if bw > 0 {
						key = pv.fixed[i*bw : (i+1)*bw]
					} else {
						key = pv.fixed[pv.offsets[i]:pv.offsets[i+1]]
					}
					id, seen := ids[string(key)]
					if !seen {
						id = uint32(len(ids))
						ids[string(key)] = id
					}
					if got := binary.LittleEndian.Uint32(want[4*i:]); got != id {
						t.Fatalf("%s: value %d has id %d in one pass, %d by first occurrence", name, i, got, id)
					}
				}
				got := make([]byte, 4*n)
				tab, ok := internPage(pv, got, 100000, bw, uint64(distinct))
				if !ok || tab.n != one.n || !bytes.Equal(got, want) {
					t.Fatalf("%s: pieces give %d keys (ok %v), one pass %d; ids equal %v", name, tab.n, ok, one.n, bytes.Equal(got, want))
				}
				if bw > 0 && !bytes.Equal(tab.appendRows(nil), one.appendRows(nil)) || bw == 0 && !bytes.Equal(tab.items, one.items) {
					t.Fatalf("%s: keys differ", name)
				}
				if _, ok := internPage(pv, got, one.n-1, bw, uint64(distinct)); ok {
					t.Fatalf("%s: %d distinct keys interned under a limit of %d", name, one.n, one.n-1)
				}
				if _, ok := internPage(pv, got, one.n, bw, uint64(distinct)); !ok {
					t.Fatalf("%s: %d distinct keys refused under a limit of %d", name, one.n, one.n)
				}
			}
		}
	}
}

// TestDictTableShortKeys: keys of at most 8 bytes (held in the short-key
// table) and longer ones share one id count in first-occurrence order;
// keys differing only by trailing zero bytes or length stay apart; values
// near the end of their buffer (no word to load past them) intern the same;
// the limit counts both kinds.
func TestDictTableShortKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 7))
	var page []byte
	offs := []uint64{0}
	for range 20000 {
		l := r.IntN(13)
		for k := 0; k < l; k++ {
			page = append(page, "a\x00b"[r.IntN(3)])
		}
		offs = append(offs, uint64(len(page)))
	}
	page = page[:len(page):len(page)] // the last values have no bytes past them
	tab := newDictTable(1<<20, 0)
	want := map[string]uint32{}
	for i := range len(offs) - 1 {
		v := page[offs[i]:offs[i+1]]
		id, ok := tab.intern(v)
		if !ok {
			t.Fatalf("value %d refused", i)
		}
		w, seen := want[string(v)]
		if !seen {
			w = uint32(len(want))
			want[string(v)] = w
		}
		if id != w {
			t.Fatalf("value %d %q: id %d, want %d", i, v, id, w)
		}
		if !bytes.Equal(tab.key(id), v) {
			t.Fatalf("value %d: key %q, want %q", i, tab.key(id), v)
		}
	}
	if tab.n != len(want) || tab.nShort == 0 || tab.nShort == tab.n {
		t.Fatalf("%d keys (%d short), want %d of both kinds", tab.n, tab.nShort, len(want))
	}
	small := newDictTable(3, 0)
	for i, v := range []string{"ab", "a-long-key", "ab", "x", "another-long"} {
		_, ok := small.intern([]byte(v))
		if ok != (i < 4) {
			t.Fatalf("limit 3, key %d %q: ok %v", i, v, ok)
		}
	}
}
