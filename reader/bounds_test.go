package reader_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/file2pb"
	"github.com/planarlance/planar/proto/filepb"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/values"
	"github.com/planarlance/planar/writer"
)

// allocated runs fn and returns the bytes it allocated.
func allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

const readBudget = 64 << 20

// hugeRows is the row count the crafted files claim.
const hugeRows = 1<<31 - 1

// allNullRLEPage is a dense all-null page of rows rows whose definition
// levels (all 1: null) are one run-length encoded run, as Lance 2.2 writes
// compressed all-null levels.
func allNullRLEPage(t testing.TB, rows uint64, defPos uint64, defLen uint64) *file2pb.ColumnMetadata_Page {
	t.Helper()
	rle := &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Rle{Rle: &enc21pb.Rle{Values: values.FlatEncoding(16), RunLengths: values.FlatEncoding(32)}}}
	l := &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_ConstantLayout{ConstantLayout: &enc21pb.ConstantLayout{
		Layers: []enc21pb.RepDefLayer{enc21pb.RepDefLayer_REPDEF_NULLABLE_ITEM}, DefCompression: rle, NumDefValues: rows,
	}}}
	b, err := format.MarshalAny(format.URLPageLayout21, l)
	if err != nil {
		t.Fatal(err)
	}
	return &file2pb.ColumnMetadata_Page{Length: rows, BufferOffsets: []uint64{defPos, defPos}, BufferSizes: []uint64{0, defLen},
		Encoding: &file2pb.Encoding{Location: &file2pb.Encoding_Direct{Direct: &file2pb.DirectEncoding{Encoding: b}}}}
}

// rleRun is the block RLE of one run of n copies of the u16 level v.
func rleRun(v uint16, n uint32) []byte {
	b := binary.LittleEndian.AppendUint64(nil, 2)
	b = binary.LittleEndian.AppendUint16(b, v)
	return binary.LittleEndian.AppendUint32(b, n)
}

// hugeFiles are small files whose metadata claims 2^31-1 rows in one page
// that stores no values: constant, all-null, all-null with run-length
// encoded levels.
func hugeFiles(t testing.TB) map[string][]byte {
	rec := goldenRecord(memory.NewGoAllocator())
	defer rec.Release()
	out := map[string][]byte{}
	for _, ff := range []writer.Format{writer.Format2_2, writer.Format2_3} {
		b := writeFile(t, rec, writer.WithFormat(ff))
		out["constant-"+ff.String()] = rebuild(t, b, func(fd *filepb.FileDescriptor, cols []*file2pb.ColumnMetadata) {
			fd.Length = hugeRows
			cols[0].Pages = []*file2pb.ColumnMetadata_Page{constantPage(t, ff, hugeRows, []byte{42, 0, 0, 0})}
		})
		out["null-"+ff.String()] = rebuild(t, b, func(fd *filepb.FileDescriptor, cols []*file2pb.ColumnMetadata) {
			fd.Length = hugeRows
			cols[0].Pages = []*file2pb.ColumnMetadata_Page{constantPage(t, ff, hugeRows, nil)}
		})
	}
	b := writeFile(t, rec, writer.WithFormat(writer.Format2_2))
	out["null-rle-levels-2.2"] = rebuildExtra(t, b, [][]byte{rleRun(1, hugeRows)}, func(fd *filepb.FileDescriptor, cols []*file2pb.ColumnMetadata, pos []uint64) {
		fd.Length = hugeRows
		cols[0].Pages = []*file2pb.ColumnMetadata_Page{allNullRLEPage(t, hugeRows, pos[0], uint64(len(rleRun(1, hugeRows))))}
	})
	return out
}

// TestHugePagesReadOnlyWhatIsAsked: a file of a few hundred bytes whose one
// page claims 2^31-1 rows without storing values reads any few rows (take,
// range) with little memory: only the rows asked for are materialized.
func TestHugePagesReadOnlyWhatIsAsked(t *testing.T) {
	for name, b := range hugeFiles(t) {
		t.Run(name, func(t *testing.T) {
			f, err := reader.Open(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			if f.NumRows() != hugeRows {
				t.Fatalf("%d rows", f.NumRows())
			}
			var got *array.Int32
			check := func(what string, fn func() error) {
				var err error
				if a := allocated(func() { err = fn() }); a > readBudget {
					t.Errorf("%s of a %d-byte file allocated %d MiB", what, len(b), a>>20)
				}
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				for i := 0; i < got.Len(); i++ {
					if name[:4] == "null" != got.IsNull(i) || name[:4] != "null" && got.Value(i) != 42 {
						t.Fatalf("%s: row %d = %v", what, i, got)
					}
				}
			}
			check("Take([0, last, 12345])", func() error {
				rec, err := f.Take([]int64{0, hugeRows - 1, 12345})
				if err == nil {
					got = rec.Column(0).(*array.Int32)
					if got.Len() != 3 {
						t.Errorf("take: %d rows", got.Len())
					}
				}
				return err
			})
			check("ReadRange(1e9, 1000)", func() error {
				rec, err := f.ReadRange(1e9, 1000)
				if err == nil {
					got = rec.Column(0).(*array.Int32)
				}
				return err
			})
		})
	}
}

// TestUnbackedCounts: counts a file's bytes cannot back (dictionary items,
// sparse slots, level counts) are refused as corrupt before anything is
// sized by them.
func TestUnbackedCounts(t *testing.T) {
	rec := goldenRecord(memory.NewGoAllocator())
	defer rec.Release()
	b := writeFile(t, rec, writer.WithFormat(writer.Format2_2))
	cases := map[string][]byte{
		// A non-RLE level stream (Constant, no payload beyond one byte)
		// claiming 2^31-1 levels.
		"constant levels": rebuildExtra(t, b, [][]byte{{0}}, func(fd *filepb.FileDescriptor, cols []*file2pb.ColumnMetadata, pos []uint64) {
			fd.Length = hugeRows
			p := allNullRLEPage(t, hugeRows, pos[0], 1)
			l := &enc21pb.PageLayout{}
			name, v, _ := format.UnmarshalAny(p.Encoding.GetDirect().Encoding)
			_ = name
			if err := proto.Unmarshal(v, l); err != nil {
				t.Fatal(err)
			}
			l.GetConstantLayout().DefCompression = &enc21pb.CompressiveEncoding{Compression: &enc21pb.CompressiveEncoding_Constant{Constant: &enc21pb.Constant{Value: []byte{1, 0}}}}
			enc, _ := format.MarshalAny(format.URLPageLayout21, l)
			p.Encoding.GetDirect().Encoding = enc
			cols[0].Pages = []*file2pb.ColumnMetadata_Page{p}
		}),
	}
	for name, c := range cases {
		f, err := reader.Open(bytes.NewReader(c), int64(len(c)))
		if err == nil {
			if a := allocated(func() { _, err = f.Take([]int64{0}) }); a > readBudget {
				t.Errorf("%s: Take([0]) allocated %d MiB", name, a>>20)
			}
		}
		if !errors.Is(err, reader.ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", name, err)
		}
	}
}

// TestHugeSparsePages: sparse pages claiming millions of rows over a few
// stored positions either read one row with little memory or are refused as
// corrupt (their slots are not backed by the page's bytes).
func TestHugeSparsePages(t *testing.T) {
	for name, b := range sparseFiles(t) {
		for _, rows := range []uint64{1 << 24, hugeRows} {
			c := rebuild(t, b, func(fd *filepb.FileDescriptor, cols []*file2pb.ColumnMetadata) {
				fd.Length = rows
				cols[0].Pages[0].Length = rows
			})
			f, err := reader.Open(bytes.NewReader(c), int64(len(c)))
			if err == nil {
				if a := allocated(func() { _, err = f.Take([]int64{0}) }); a > readBudget {
					t.Errorf("%s of %d rows: Take([0]) allocated %d MiB", name, rows, a>>20)
				}
			}
			if err != nil && !errors.Is(err, reader.ErrCorrupt) {
				t.Errorf("%s of %d rows: %v", name, rows, err)
			}
		}
	}
}
