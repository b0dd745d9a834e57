package dataset

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestDeletionFilesFromPylance decodes the two deletion-file forms pylance
// 14.0.2 wrote (testdata/deletions/README).
func TestDeletionFilesFromPylance(t *testing.T) {
	arr, err := os.ReadFile("testdata/deletions/array.arrow")
	if err != nil {
		t.Fatal(err)
	}
	d, err := decodeDeletionArrow(arr, 10000)
	if err != nil {
		t.Fatal(err)
	}
	var want deletions
	for i := uint32(7); i < 10000; i += 100 {
		want = append(want, i)
	}
	if !slices.Equal(d, want) {
		t.Fatalf("array form: %d offsets %v..., want %d", len(d), d[:min(5, len(d))], len(want))
	}
	if _, err := decodeDeletionArrow(arr, 9907); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("offset past the fragment's rows: %v, want ErrCorrupt", err)
	}
	bm, err := os.ReadFile("testdata/deletions/bitmap.bin")
	if err != nil {
		t.Fatal(err)
	}
	d, err = decodeDeletionBitmap(bm, 10000)
	if err != nil {
		t.Fatal(err)
	}
	if len(d) != 8000 || d[0] != 0 || d[7999] != 7999 {
		t.Fatalf("bitmap form: %d offsets, want 0..7999", len(d))
	}
	if _, err := decodeDeletionBitmap(bm, 7999); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("offset past the fragment's rows: %v, want ErrCorrupt", err)
	}
	// pylance's take([0, 7, 9899, 9900, 9901]) on that table (fragment 0
	// with the array deletions, fragment 1 with the bitmap) gave ids
	// 0, 8, 9999, 18000, 18001.
	arrD, _ := decodeDeletionArrow(arr, 10000)
	live0 := int64(10000 - len(arrD))
	for _, c := range []struct{ logical, id int64 }{{0, 0}, {7, 8}, {9899, 9999}, {9900, 18000}, {9901, 18001}} {
		var got int64
		if c.logical < live0 {
			got = arrD.physical(c.logical)
		} else {
			got = 10000 + d.physical(c.logical-live0)
		}
		if got != c.id {
			t.Errorf("logical row %d is id %d, pylance says %d", c.logical, got, c.id)
		}
	}
}

func TestDeletionsCorrupt(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("LANC"), bytes.Repeat([]byte{0xff}, 64)} {
		if _, err := decodeDeletionArrow(b, 100); !errors.Is(err, ErrCorrupt) {
			t.Errorf("arrow %x: %v, want ErrCorrupt", b, err)
		}
		if _, err := decodeDeletionBitmap(b, 100); !errors.Is(err, ErrCorrupt) && b != nil {
			t.Errorf("bitmap %x: %v, want ErrCorrupt", b, err)
		}
	}
}

// TestDeletionsMapping checks physical, liveMask, deletedRun and
// nextDeleted against a plain walk over the rows.
func TestDeletionsMapping(t *testing.T) {
	const rows = 300
	for _, del := range []deletions{nil, {0}, {299}, {0, 1, 2}, {5, 6, 100, 101, 102, 250, 299}, func() deletions {
		var d deletions
		for i := uint32(0); i < rows; i += 3 {
			d = append(d, i)
		}
		return d
	}()} {
		deleted := map[int64]bool{}
		for _, x := range del {
			deleted[int64(x)] = true
		}
		var live []int64
		for p := int64(0); p < rows; p++ {
			if !deleted[p] {
				live = append(live, p)
			}
		}
		for k, p := range live {
			if got := del.physical(int64(k)); got != p {
				t.Fatalf("%v: live row %d is physical %d, got %d", del, k, p, got)
			}
		}
		for _, r := range [][2]int64{{0, rows}, {0, 1}, {5, 3}, {99, 5}, {250, 50}} {
			m := del.liveMask(memory.DefaultAllocator, r[0], r[1])
			any := false
			for p := r[0]; p < r[0]+r[1]; p++ {
				any = any || deleted[p]
				if m != nil && m.Value(int(p-r[0])) == deleted[p] {
					t.Fatalf("%v: mask of row %d", del, p)
				}
			}
			if (m != nil) != any {
				t.Fatalf("%v: mask over [%d,+%d) present %v, deletions %v", del, r[0], r[1], m != nil, any)
			}
			if m != nil {
				m.Release()
			}
		}
		for p := int64(0); p <= rows; p++ {
			run := int64(0)
			for deleted[p+run] && p+run < rows {
				run++
			}
			if got := del.deletedRun(p, rows); got != run {
				t.Fatalf("%v: deleted run at %d is %d, got %d", del, p, run, got)
			}
			next := p
			for next < rows && !deleted[next] {
				next++
			}
			if got := del.nextDeleted(p, rows); got != next {
				t.Fatalf("%v: next deleted from %d is %d, got %d", del, p, next, got)
			}
		}
	}
}

func FuzzDeletionBitmap(f *testing.F) {
	if b, err := os.ReadFile("testdata/deletions/bitmap.bin"); err == nil {
		f.Add(b)
	}
	bm := roaring.BitmapOf(1, 5, 70000)
	var buf bytes.Buffer
	bm.WriteTo(&buf)
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decodeDeletionBitmap(b, 1<<17)
		if err != nil {
			return
		}
		for i := 1; i < len(d); i++ {
			if d[i] <= d[i-1] {
				t.Fatalf("unsorted offsets at %d", i)
			}
		}
	})
}

func FuzzDeletionArrow(f *testing.F) {
	if b, err := os.ReadFile("testdata/deletions/array.arrow"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decodeDeletionArrow(b, 20000)
		if err != nil {
			return
		}
		for i := 1; i < len(d); i++ {
			if d[i] <= d[i-1] {
				t.Fatalf("unsorted offsets at %d", i)
			}
		}
	})
}
