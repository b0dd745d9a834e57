package reader_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/enc23pb"
	"github.com/planarlance/planar/proto/file2pb"
	"github.com/planarlance/planar/proto/filepb"
	"github.com/planarlance/planar/reader"
)

// smallSparseGoldens are the golden files small enough for damage
// campaigns and fuzz seeds.
var smallSparseGoldens = []string{"str400_null99.lance", "list_int32_100k.lance", "lowcard1k_null90.lance", "struct_str_null99.lance"}

// editSparsePage rewrites the planar description and buffer table of page
// 0 of column 0 of a golden file.
func editSparsePage(t *testing.T, name string, edit func(pl *enc23pb.PlanarLayout, pg *file2pb.ColumnMetadata_Page)) []byte {
	t.Helper()
	return rebuild(t, readGolden(t, name), func(_ *filepb.FileDescriptor, cols []*file2pb.ColumnMetadata) {
		pg := cols[0].Pages[0]
		_, val, err := format.UnmarshalAny(pg.GetEncoding().GetDirect().GetEncoding())
		if err != nil {
			t.Fatal(err)
		}
		var pl enc23pb.PlanarLayout
		if err := proto.Unmarshal(val, &pl); err != nil {
			t.Fatal(err)
		}
		edit(&pl, pg)
		b, err := format.MarshalAny(format.URLPlanarLayout23, &pl)
		if err != nil {
			t.Fatal(err)
		}
		pg.Encoding = &file2pb.Encoding{Location: &file2pb.Encoding_Direct{Direct: &file2pb.DirectEncoding{Encoding: b}}}
	})
}

// TestCorruptSparseMetadata: sparse pages whose description disagrees with
// their buffers fail every windowed read (take, range, scan) with
// ErrCorrupt, without panicking and within a small allocation budget.
func TestCorruptSparseMetadata(t *testing.T) {
	validity := func(pl *enc23pb.PlanarLayout) *enc23pb.SparseValiditySet {
		return pl.GetStructure().GetSparse().GetLayers()[0].GetValidity()
	}
	cases := []struct {
		name, file string
		edit       func(pl *enc23pb.PlanarLayout, pg *file2pb.ColumnMetadata_Page)
	}{
		{"zipped fixed: one value more than materialized", "fsl768_null99.lance", func(pl *enc23pb.PlanarLayout, _ *file2pb.ColumnMetadata_Page) {
			z := pl.GetValues().GetZipped()
			z.NumItems++
			z.NumVisibleItems++
		}},
		{"zipped fixed: record width disagrees with the buffer", "fsl768_null99.lance", func(pl *enc23pb.PlanarLayout, _ *file2pb.ColumnMetadata_Page) {
			pl.GetValues().GetZipped().Addressing = &enc23pb.ZippedValues_BitsPerValue{BitsPerValue: 768*32 + 8}
		}},
		{"zipped fixed: value buffer short by one record", "fsl768_null99.lance", func(_ *enc23pb.PlanarLayout, pg *file2pb.ColumnMetadata_Page) {
			pg.BufferSizes[0] -= 3072
		}},
		{"zipped fixed: validity claims 2^40 positions", "fsl768_null99.lance", func(pl *enc23pb.PlanarLayout, _ *file2pb.ColumnMetadata_Page) {
			validity(pl).NumPositions = 1 << 40
		}},
		{"zipped variable: offset index of 8 bytes", "str400_null99.lance", func(_ *enc23pb.PlanarLayout, pg *file2pb.ColumnMetadata_Page) {
			pg.BufferSizes[1] = 8
		}},
		{"zipped variable: offset index past the data", "str400_null99.lance", func(_ *enc23pb.PlanarLayout, pg *file2pb.ColumnMetadata_Page) {
			pg.BufferSizes[0] -= 64
		}},
		{"zipped variable: 16-bit length prefixes", "str400_null99.lance", func(pl *enc23pb.PlanarLayout, _ *file2pb.ColumnMetadata_Page) {
			pl.GetValues().GetZipped().Addressing = &enc23pb.ZippedValues_BitsPerOffset{BitsPerOffset: 16}
		}},
		{"chunked: a chunk word missing", "list_int32_100k.lance", func(_ *enc23pb.PlanarLayout, pg *file2pb.ColumnMetadata_Page) {
			pg.BufferSizes[0] -= 4
		}},
		{"chunked: chunk data short", "list_int32_100k.lance", func(_ *enc23pb.PlanarLayout, pg *file2pb.ColumnMetadata_Page) {
			pg.BufferSizes[1] -= 8
		}},
		{"chunked: list of 2^40 child slots", "list_int32_100k.lance", func(pl *enc23pb.PlanarLayout, _ *file2pb.ColumnMetadata_Page) {
			pl.GetStructure().GetSparse().GetLayers()[0].GetList().NumChildSlots = 1 << 40
		}},
		{"chunked: one child slot more than the counts", "list_int32_100k.lance", func(pl *enc23pb.PlanarLayout, _ *file2pb.ColumnMetadata_Page) {
			pl.GetStructure().GetSparse().GetLayers()[0].GetList().NumChildSlots++
		}},
		{"indexed: indices name items past the dictionary", "lowcard1k_null90.lance", func(pl *enc23pb.PlanarLayout, _ *file2pb.ColumnMetadata_Page) {
			it := pl.GetValues().GetIndexed().GetItems()
			it.NumItems, it.NumVisibleItems = 5, 5
		}},
		{"indexed: item offsets truncated", "lowcard1k_null90.lance", func(_ *enc23pb.PlanarLayout, pg *file2pb.ColumnMetadata_Page) {
			pg.BufferSizes[2] -= 4
		}},
		{"indexed: index payload missing", "lowcard1k_null90.lance", func(_ *enc23pb.PlanarLayout, pg *file2pb.ColumnMetadata_Page) {
			pg.BufferSizes[0] = 0
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := editSparsePage(t, c.file, c.edit)
			var err error
			var p any
			if a := allocated(func() {
				err, p = callNoPanic(func() error {
					f, err := reader.Open(bytes.NewReader(b), int64(len(b)))
					if err != nil {
						// Opening checks only the buffer count of sparse
						// pages: these reach the windowed reads.
						return fmt.Errorf("open: %v", err)
					}
					rec, err := f.Take([]int64{f.NumRows() - 1, 0, 7})
					if err == nil {
						rec.Release()
						return errors.New("take succeeded")
					}
					if !errors.Is(err, reader.ErrCorrupt) {
						return err
					}
					if rec, err = f.ReadRange(1, f.NumRows()/2); err == nil {
						rec.Release()
						return errors.New("range read succeeded")
					}
					if !errors.Is(err, reader.ErrCorrupt) {
						return err
					}
					rec, err = f.ReadAll()
					if err == nil {
						rec.Release()
						return errors.New("scan succeeded")
					}
					return err
				})
			}); a > readBudget {
				t.Errorf("allocated %d MiB", a>>20)
			}
			if p != nil {
				t.Fatalf("panic: %v", p)
			}
			if !errors.Is(err, reader.ErrCorrupt) {
				t.Fatalf("error %v, want ErrCorrupt", err)
			}
		})
	}
}

// TestDamagedSparseGoldens: damaged variants of the small golden sparse
// files (structure buffers and metadata sit in their last quarter) fail
// with documented errors and never panic.
func TestDamagedSparseGoldens(t *testing.T) {
	files := map[string][]byte{}
	for _, name := range smallSparseGoldens {
		files[name] = readGolden(t, name)
	}
	n := damageCampaign(t, files, 150)
	t.Logf("%d damaged variants", n)
}
