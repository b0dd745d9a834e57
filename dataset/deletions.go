package dataset

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sort"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/proto/tablepb"
)

// Lance keeps a fragment's deleted rows in a deletion file under
// _deletions/, named "{fragment id}-{read version}-{random id}" with the
// suffix of its form: ".arrow", an Arrow IPC file of one non-nullable uint32
// column "row_id" holding the deleted offsets (one batch), or ".bin", a
// roaring bitmap of them in the portable serialization. Offsets count the
// fragment's physical rows from 0.
const deletionsDir = "_deletions"

// deletionKey is the store key of fragment id's deletion file.
func deletionKey(fragID uint64, df *tablepb.DeletionFile) (string, error) {
	var suffix string
	switch df.FileType {
	case tablepb.DeletionFile_ARROW_ARRAY:
		suffix = "arrow"
	case tablepb.DeletionFile_BITMAP:
		suffix = "bin"
	default:
		return "", fmt.Errorf("deletion file of type %d: %w", df.FileType, ErrUnsupported)
	}
	return deletionsDir + "/" + strconv.FormatUint(fragID, 10) + "-" + strconv.FormatUint(df.ReadVersion, 10) +
		"-" + strconv.FormatUint(df.Id, 10) + "." + suffix, nil
}

// checkDeletionFile refuses, from the manifest alone, a deletion file this
// package cannot read.
func checkDeletionFile(f *tablepb.DataFragment) error {
	df := f.DeletionFile
	if df == nil {
		return nil
	}
	if df.BaseId != nil {
		return fmt.Errorf("fragment %d: deletion file in base path %d: %w", f.Id, *df.BaseId, ErrUnsupported)
	}
	if df.NumDeletedRows > f.PhysicalRows {
		return fmt.Errorf("fragment %d: %d deleted rows of %d: %w", f.Id, df.NumDeletedRows, f.PhysicalRows, ErrCorrupt)
	}
	_, err := deletionKey(f.Id, df)
	if err != nil {
		return fmt.Errorf("fragment %d: %w", f.Id, err)
	}
	return nil
}

// deletions are the deleted physical offsets of one fragment, sorted and
// distinct; nil when none.
type deletions []uint32

// loadDeletions reads fragment f's deletion file (nil when it has none).
// Every offset must be below the fragment's physical rows, and the count
// must match the manifest's when the manifest records one. Memory is
// bounded by the fragment: at most 4 bytes a physical row.
func loadDeletions(ctx context.Context, root *location, f *tablepb.DataFragment) (deletions, error) {
	df := f.DeletionFile
	if df == nil {
		return nil, nil
	}
	if err := checkDeletionFile(f); err != nil {
		return nil, err
	}
	key, _ := deletionKey(f.Id, df)
	b, err := root.st.Get(ctx, key)
	if err != nil {
		if errors.Is(err, ErrObjectNotFound) {
			return nil, fmt.Errorf("fragment %d: deletion file %s is missing: %w", f.Id, key, ErrCorrupt)
		}
		return nil, fmt.Errorf("fragment %d: deletion file %s: %w", f.Id, key, err)
	}
	var d deletions
	if df.FileType == tablepb.DeletionFile_BITMAP {
		d, err = decodeDeletionBitmap(b, f.PhysicalRows)
	} else {
		d, err = decodeDeletionArrow(b, f.PhysicalRows)
	}
	if err != nil {
		return nil, fmt.Errorf("fragment %d: deletion file %s: %w", f.Id, key, err)
	}
	if df.NumDeletedRows != 0 && uint64(len(d)) != df.NumDeletedRows {
		return nil, fmt.Errorf("fragment %d: deletion file %s holds %d rows, manifest says %d: %w", f.Id, key, len(d), df.NumDeletedRows, ErrCorrupt)
	}
	return d, nil
}

// decodeDeletionBitmap reads a portable roaring bitmap of offsets below rows.
// The bytes are checked against the format first (checkRoaring): the
// roaring library reads containers in place, trusting their headers, and a
// hostile header made it fault.
func decodeDeletionBitmap(b []byte, rows uint64) (deletions, error) {
	n, err := checkRoaring(b)
	if err != nil {
		return nil, err
	}
	b = b[:n]
	bm := roaring.New()
	if _, err := bm.ReadFrom(bytes.NewReader(b)); err != nil {
		return nil, fmt.Errorf("roaring bitmap: %v: %w", err, ErrCorrupt)
	}
	if bm.IsEmpty() {
		return nil, nil
	}
	if c := bm.GetCardinality(); c > rows {
		return nil, fmt.Errorf("%d deleted rows of %d: %w", c, rows, ErrCorrupt)
	}
	// The library trusts the containers it reads: a hostile file can hold
	// unsorted or repeated offsets, which the lookups here must not see.
	d := deletions(bm.ToArray())
	for i, x := range d {
		if i > 0 && x <= d[i-1] || uint64(x) >= rows {
			return nil, fmt.Errorf("deleted row %d (entry %d) out of order or past the fragment's %d rows: %w", x, i, rows, ErrCorrupt)
		}
	}
	return d, nil
}

// physical maps the k-th live row of the fragment to its physical offset.
// d[j]-j is the number of live rows before d[j], so the rows deleted before
// the k-th live row are the d[j] with d[j]-j <= k.
func (d deletions) physical(k int64) int64 {
	c := sort.Search(len(d), func(j int) bool { return int64(d[j])-int64(j) > k })
	return k + int64(c)
}

// in returns the deleted offsets in [start, end) as a sub-slice.
func (d deletions) in(start, end int64) deletions {
	lo := sort.Search(len(d), func(j int) bool { return int64(d[j]) >= start })
	hi := sort.Search(len(d), func(j int) bool { return int64(d[j]) >= end })
	return d[lo:hi]
}

// liveMask returns a boolean array over rows [start, start+n): false where
// the row is deleted. Nil when no row of the range is deleted.
func (d deletions) liveMask(mem memory.Allocator, start, n int64) *array.Boolean {
	del := d.in(start, start+n)
	if len(del) == 0 {
		return nil
	}
	b := array.NewBooleanBuilder(mem)
	defer b.Release()
	b.Reserve(int(n))
	next := start
	for _, x := range del {
		for ; next < int64(x); next++ {
			b.UnsafeAppend(true)
		}
		b.UnsafeAppend(false)
		next++
	}
	for ; next < start+n; next++ {
		b.UnsafeAppend(true)
	}
	return b.NewBooleanArray()
}

// deletedRun is the number of deleted rows from pos on, before the first
// live row (or end).
func (d deletions) deletedRun(pos, end int64) int64 {
	j := sort.Search(len(d), func(j int) bool { return int64(d[j]) >= pos })
	n := int64(0)
	for ; j < len(d) && int64(d[j]) == pos+n && pos+n < end; j++ {
		n++
	}
	return n
}

// nextDeleted is the first deleted row at or after pos, or end.
func (d deletions) nextDeleted(pos, end int64) int64 {
	j := sort.Search(len(d), func(j int) bool { return int64(d[j]) >= pos })
	if j < len(d) && int64(d[j]) < end {
		return int64(d[j])
	}
	return end
}

// The portable roaring format (RoaringFormatSpec, what Rust's roaring
// crate's serialize_into writes): a cookie, per container a 16-bit key and
// cardinality-1, container offsets (unless a run-container cookie and
// fewer than 4 containers), then each container: runs (a count, then
// start/length-1 pairs), an array (cardinality sorted u16s, at most 4096)
// or a bitmap (1024 u64 words).
const (
	roaringCookieNoRuns   = 12346
	roaringCookieRuns     = 12347
	roaringNoOffsetsBelow = 4
	roaringArrayMax       = 4096
)

// checkRoaring checks a portable roaring bitmap's layout (every size within
// the bytes, keys increasing, array values increasing, run and bitmap
// cardinalities as declared, offsets where the containers are) and returns
// its length.
func checkRoaring(b []byte) (int, error) {
	bad := func(what string, args ...any) (int, error) {
		return 0, fmt.Errorf("roaring bitmap: %s: %w", fmt.Sprintf(what, args...), ErrCorrupt)
	}
	u16 := func(at int) int { return int(binary.LittleEndian.Uint16(b[at:])) }
	if len(b) < 4 {
		return bad("%d bytes", len(b))
	}
	cookie := binary.LittleEndian.Uint32(b)
	pos, size := 4, 0
	var runs []byte
	switch {
	case cookie&0xffff == roaringCookieRuns:
		size = int(cookie>>16) + 1
		nb := (size + 7) / 8
		if len(b)-pos < nb {
			return bad("run flags past the end")
		}
		runs, pos = b[pos:pos+nb], pos+nb
	case cookie == roaringCookieNoRuns:
		if len(b) < 8 {
			return bad("no container count")
		}
		size, pos = int(binary.LittleEndian.Uint32(b[4:])), 8
		if size > 1<<16 {
			return bad("%d containers", size)
		}
	default:
		return bad("cookie %#x", cookie)
	}
	if len(b)-pos < 4*size {
		return bad("%d container headers past the end", size)
	}
	head := pos
	pos += 4 * size
	offsets := -1
	if runs == nil || size >= roaringNoOffsetsBelow {
		if len(b)-pos < 4*size {
			return bad("offsets past the end")
		}
		offsets, pos = pos, pos+4*size
	}
	for i := 0; i < size; i++ {
		key, card := u16(head+4*i), u16(head+4*i+2)+1
		if i > 0 && key <= u16(head+4*(i-1)) {
			return bad("keys out of order at container %d", i)
		}
		if offsets >= 0 && int(binary.LittleEndian.Uint32(b[offsets+4*i:])) != pos {
			return bad("container %d offset", i)
		}
		switch {
		case runs != nil && runs[i/8]>>(i%8)&1 == 1:
			if len(b)-pos < 2 {
				return bad("container %d: run count past the end", i)
			}
			nr := u16(pos)
			pos += 2
			if len(b)-pos < 4*nr {
				return bad("container %d: %d runs past the end", i, nr)
			}
			total, next := 0, 0
			for r := 0; r < nr; r++ {
				start, l := u16(pos+4*r), u16(pos+4*r+2)+1
				if start < next || start+l > 1<<16 {
					return bad("container %d: run %d out of order", i, r)
				}
				next = start + l
				total += l
			}
			if total != card {
				return bad("container %d: runs hold %d values, header %d", i, total, card)
			}
			pos += 4 * nr
		case card > roaringArrayMax:
			if len(b)-pos < 8192 {
				return bad("container %d: bitmap past the end", i)
			}
			ones := 0
			for w := 0; w < 1024; w++ {
				ones += bits.OnesCount64(binary.LittleEndian.Uint64(b[pos+8*w:]))
			}
			if ones != card {
				return bad("container %d: bitmap holds %d values, header %d", i, ones, card)
			}
			pos += 8192
		default:
			if len(b)-pos < 2*card {
				return bad("container %d: %d values past the end", i, card)
			}
			for k := 1; k < card; k++ {
				if u16(pos+2*k) <= u16(pos+2*(k-1)) {
					return bad("container %d: values out of order", i)
				}
			}
			pos += 2 * card
		}
	}
	return pos, nil
}
