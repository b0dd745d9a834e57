package dataset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
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
func decodeDeletionBitmap(b []byte, rows uint64) (deletions, error) {
	bm := roaring.New()
	if _, err := bm.ReadFrom(bytes.NewReader(b)); err != nil {
		return nil, fmt.Errorf("roaring bitmap: %v: %w", err, ErrCorrupt)
	}
	if bm.IsEmpty() {
		return nil, nil
	}
	if uint64(bm.Maximum()) >= rows {
		return nil, fmt.Errorf("deleted row %d of %d: %w", bm.Maximum(), rows, ErrCorrupt)
	}
	return bm.ToArray(), nil
}

// decodeDeletionArrow reads an Arrow IPC file of one uint32 column of
// offsets below rows (Lance writes it ZSTD-compressed, in one batch).
func decodeDeletionArrow(b []byte, rows uint64) (deletions, error) {
	r, err := ipc.NewFileReader(bytes.NewReader(b), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return nil, fmt.Errorf("arrow file: %v: %w", err, ErrCorrupt)
	}
	defer r.Close()
	if s := r.Schema(); s.NumFields() != 1 || s.Field(0).Type.ID() != arrow.UINT32 {
		return nil, fmt.Errorf("arrow file of schema %s, want one uint32 column: %w", s, ErrCorrupt)
	}
	var d deletions
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.RecordBatchAt(i)
		if err != nil {
			return nil, fmt.Errorf("arrow file batch %d: %v: %w", i, err, ErrCorrupt)
		}
		col := rec.Column(0).(*array.Uint32)
		if col.NullN() > 0 {
			rec.Release()
			return nil, fmt.Errorf("null deleted row: %w", ErrCorrupt)
		}
		if uint64(len(d))+uint64(col.Len()) > rows {
			rec.Release()
			return nil, fmt.Errorf("more deleted rows than the fragment's %d: %w", rows, ErrCorrupt)
		}
		d = append(d, col.Uint32Values()...)
		rec.Release()
	}
	slices.Sort(d)
	d = slices.Compact(d)
	if len(d) > 0 && uint64(d[len(d)-1]) >= rows {
		return nil, fmt.Errorf("deleted row %d of %d: %w", d[len(d)-1], rows, ErrCorrupt)
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
