package reader_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/writer"
)

// damagedTake opens b and takes idx, failing on a panic or on an
// allocation beyond the read budget; it returns the take's error (or
// Open's).
func damagedTake(t *testing.T, what string, b []byte, idx []int64) error {
	t.Helper()
	f, err := reader.Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return err
	}
	var terr error
	a := allocated(func() {
		err, p := callNoPanic(func() error {
			rec, err := f.Take(idx)
			if err == nil {
				rec.Release()
			}
			return err
		})
		if p != nil {
			t.Fatalf("%s: Take panicked: %v", what, p)
		}
		terr = err
	})
	if a > readBudget+uint64(64*len(b)) {
		t.Fatalf("%s: Take allocated %d MiB", what, a>>20)
	}
	return terr
}

// TestDenseTakeDamage corrupts the addressing data the window paths read:
// chunk words, repetition indices (of chunked and zipped pages) and the
// records they point at. Every take must fail with ErrCorrupt (or
// ErrUnsupported) or, when the damage leaves a consistent page, succeed;
// none may panic or allocate without bound.
func TestDenseTakeDamage(t *testing.T) {
	type damage struct {
		name   string
		kind   string
		buffer int // page buffer (-1: the last)
		mutate func(b []byte)
		must   bool // the take must fail
	}
	fill := func(v byte) func([]byte) {
		return func(b []byte) {
			for i := range b {
				b[i] = v
			}
		}
	}
	u64 := func(at int, v uint64) func([]byte) {
		return func(b []byte) {
			if at+8 <= len(b) {
				binary.LittleEndian.PutUint64(b[at:], v)
			}
		}
	}
	cases := []damage{
		{"chunk words all ones", "ints", 0, fill(0xFF), true},
		{"chunk words zero", "ints", 0, fill(0), true},
		{"chunk words of a list page", "lists", 0, fill(0x7F), true},
		{"chunk data zero", "short", 1, fill(0), false},
		{"rep index ends past rows", "lists", -1, u64(0, 1<<62), true},
		{"rep index partial everywhere", "lists", -1, fill(0x01), true},
		{"rep index zero", "nlists", -1, fill(0), true},
		{"dictionary garbage", "lowcard", 2, fill(0xEE), false},
		{"zipped index past the buffer", "big", 1, fill(0xFF), true},
		{"zipped index decreasing", "big", 1, func(b []byte) { copy(b[len(b)/2:], make([]byte, len(b)/2)) }, true},
		{"zipped records garbage", "big", 0, fill(0xFF), true},
		{"fixed records garbage", "vecs", 0, fill(0xFF), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := denseGolden(t, c.kind)
			pg := open(t, g).Pages(0)[0]
			bi := c.buffer
			if bi < 0 {
				bi = len(pg.Buffers) - 1
			}
			r := pg.Buffers[bi]
			b := bytes.Clone(g)
			c.mutate(b[r.Position : r.Position+r.Size])
			rows := int64(pg.Rows)
			failed := false
			for _, idx := range [][]int64{{rows / 2}, {rows - 1, 1}, {0, rows / 3, rows / 3, rows - 2}} {
				err := damagedTake(t, c.name, b, idx)
				if err == nil {
					continue
				}
				failed = true
				if !errors.Is(err, reader.ErrCorrupt) && !errors.Is(err, reader.ErrUnsupported) {
					t.Fatalf("take %v: error wraps neither ErrCorrupt nor ErrUnsupported: %v", idx, err)
				}
			}
			if c.must && !failed {
				t.Fatalf("no take noticed the damage")
			}
		})
	}
}

// FuzzDenseTake takes scattered rows of damaged dense golden pages.
func FuzzDenseTake(f *testing.F) {
	// Small seeds keep the fuzzer fast: one file per nested corpus case
	// (chunked pages with lists, zipped pages, dictionaries) and the two
	// smallest pylance goldens (a dictionary page and a nullable flat page
	// of several chunks); the larger goldens' damage is TestDenseTakeDamage's.
	mem := memory.NewGoAllocator()
	for i, c := range corpus.NestedWritable(40) {
		if i%3 != 0 {
			continue
		}
		rec := corpus.NestedRecord(mem, []corpus.NestedCase{c}, uint64(i))
		f.Add(writeFile(f, rec, writer.WithFormat([]writer.Format{writer.Format2_2, writer.Format2_3}[i%2])))
		rec.Release()
	}
	f.Add(denseGolden(f, "lowcard"))
	f.Add(denseGolden(f, "nints"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := reader.Open(bytes.NewReader(b), int64(len(b)))
		if err != nil || r.NumRows() == 0 {
			return
		}
		n := r.NumRows()
		seed := int64(len(b))
		idx := []int64{seed % n, n - 1, n / 2, seed % n}
		if err := damagedTake(t, "fuzz", b, idx); err != nil {
			checkClass(t, "Take", err)
		}
	})
}
