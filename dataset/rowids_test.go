package dataset

import (
	"bytes"
	"errors"
	"fmt"
	"iter"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/proto/tablepb"
)

// The golden manifests of testdata/rowids (see its README): row id r is the
// row written with x = r.
const (
	rowIDGoldenRows    = 130 // rows written, row ids [0, 130)
	rowIDGoldenNewRows = 100 // rows of version 1; the others came in version 2
)

// rowIDGoldenFragments is the layout of versions 1 to 5: id, first row id, rows.
var rowIDGoldenFragments = []struct{ id, start, rows uint64 }{
	{0, 0, 40}, {1, 40, 40}, {2, 80, 20}, {3, 100, 20}, {4, 120, 10},
}

// rowIDGoldenDeleted reports whether version 4's delete removed row id r.
func rowIDGoldenDeleted(r uint64) bool { return r == 2 || (r >= 64 && r%3 == 0) }

func loadRowIDGolden(t testing.TB, version int) *tablepb.Manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "rowids", fmt.Sprintf("v%d.manifest", version)))
	if err != nil {
		t.Fatal(err)
	}
	mf, err := decodeManifestFile(b)
	if err != nil {
		t.Fatalf("v%d: %v", version, err)
	}
	if mf.m.GetVersion() != uint64(version) {
		t.Fatalf("v%d.manifest holds version %d", version, mf.m.GetVersion())
	}
	return mf.m
}

func rowIDCollect(s iter.Seq[uint64]) []uint64 {
	var out []uint64
	for v := range s {
		out = append(out, v)
	}
	return out
}

func rowIDSpan(start, end uint64) []uint64 {
	var out []uint64
	for v := start; v < end; v++ {
		out = append(out, v)
	}
	return out
}

// stripRowIDs returns a copy of f without row ids and version metadata.
func stripRowIDs(f *tablepb.DataFragment) *tablepb.DataFragment {
	c := proto.Clone(f).(*tablepb.DataFragment)
	c.RowIdSequence = nil
	c.CreatedAtVersionSequence = nil
	c.LastUpdatedAtVersionSequence = nil
	return c
}

func rowIDMarshal(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Messages for building sequences.

func pbRange(start, end uint64) *tablepb.U64Segment {
	return &tablepb.U64Segment{Segment: &tablepb.U64Segment_Range_{Range: &tablepb.U64Segment_Range{Start: start, End: end}}}
}

func pbHoles(start, end uint64, holes *tablepb.EncodedU64Array) *tablepb.U64Segment {
	return &tablepb.U64Segment{Segment: &tablepb.U64Segment_RangeWithHoles_{RangeWithHoles: &tablepb.U64Segment_RangeWithHoles{Start: start, End: end, Holes: holes}}}
}

func pbBitmap(start, end uint64, bm ...byte) *tablepb.U64Segment {
	return &tablepb.U64Segment{Segment: &tablepb.U64Segment_RangeWithBitmap_{RangeWithBitmap: &tablepb.U64Segment_RangeWithBitmap{Start: start, End: end, Bitmap: bm}}}
}

func pbSorted(a *tablepb.EncodedU64Array) *tablepb.U64Segment {
	return &tablepb.U64Segment{Segment: &tablepb.U64Segment_SortedArray{SortedArray: a}}
}

func pbArray(a *tablepb.EncodedU64Array) *tablepb.U64Segment {
	return &tablepb.U64Segment{Segment: &tablepb.U64Segment_Array{Array: a}}
}

func pbU16(base uint64, offs ...uint16) *tablepb.EncodedU64Array {
	var b []byte
	for _, o := range offs {
		b = append(b, byte(o), byte(o>>8))
	}
	return &tablepb.EncodedU64Array{Array: &tablepb.EncodedU64Array_U16Array_{U16Array: &tablepb.EncodedU64Array_U16Array{Base: base, Offsets: b}}}
}

func pbU32(base uint64, offs ...uint32) *tablepb.EncodedU64Array {
	var b []byte
	for _, o := range offs {
		b = append(b, byte(o), byte(o>>8), byte(o>>16), byte(o>>24))
	}
	return &tablepb.EncodedU64Array{Array: &tablepb.EncodedU64Array_U32Array_{U32Array: &tablepb.EncodedU64Array_U32Array{Base: base, Offsets: b}}}
}

func pbU64(vals ...uint64) *tablepb.EncodedU64Array {
	var b []byte
	for _, v := range vals {
		for i := range 8 {
			b = append(b, byte(v>>(8*i)))
		}
	}
	return &tablepb.EncodedU64Array{Array: &tablepb.EncodedU64Array_U64Array_{U64Array: &tablepb.EncodedU64Array_U64Array{Values: b}}}
}

func pbRawArray(kind int, base uint64, raw []byte) *tablepb.EncodedU64Array {
	switch kind {
	case 2:
		return &tablepb.EncodedU64Array{Array: &tablepb.EncodedU64Array_U16Array_{U16Array: &tablepb.EncodedU64Array_U16Array{Base: base, Offsets: raw}}}
	case 4:
		return &tablepb.EncodedU64Array{Array: &tablepb.EncodedU64Array_U32Array_{U32Array: &tablepb.EncodedU64Array_U32Array{Base: base, Offsets: raw}}}
	default:
		return &tablepb.EncodedU64Array{Array: &tablepb.EncodedU64Array_U64Array_{U64Array: &tablepb.EncodedU64Array_U64Array{Values: raw}}}
	}
}

func pbSeq(t testing.TB, segs ...*tablepb.U64Segment) []byte {
	return rowIDMarshal(t, &tablepb.RowIdSequence{Segments: segs})
}

func TestRowIDFlag(t *testing.T) {
	for _, c := range []struct {
		reader, writer uint64
		want           bool
	}{
		{0, 0, false}, {1, 1, false}, {2, 2, true}, {3, 3, true}, {2, 0, true}, {0, 2, true}, {1 << 3, 1<<3 | 1, false},
	} {
		m := &tablepb.Manifest{ReaderFeatureFlags: c.reader, WriterFeatureFlags: c.writer}
		if got := stableRowIDs(m); got != c.want {
			t.Errorf("flags %#x/%#x: stableRowIDs %v, want %v", c.reader, c.writer, got, c.want)
		}
	}
	if stableRowIDs(nil) {
		t.Error("nil manifest has stable row ids")
	}
	// Lance sets the bit in both words, with deletions bit 0 too.
	for v, want := range map[int][2]uint64{1: {2, 2}, 2: {2, 2}, 3: {2, 2}, 4: {3, 3}, 6: {2, 2}} {
		m := loadRowIDGolden(t, v)
		if m.ReaderFeatureFlags != want[0] || m.WriterFeatureFlags != want[1] || !stableRowIDs(m) {
			t.Errorf("v%d: flags %#x/%#x", v, m.ReaderFeatureFlags, m.WriterFeatureFlags)
		}
	}
}

func TestRowIDEncodeRange(t *testing.T) {
	for _, c := range [][2]uint64{{0, 0}, {0, 1}, {0, 40}, {40, 80}, {5, 5}, {127, 128}, {1 << 40, 1<<40 + 3}, {7, math.MaxUint64}, {math.MaxUint64, math.MaxUint64}} {
		got := encodeRowIDRange(c[0], c[1])
		if want := pbSeq(t, pbRange(c[0], c[1])); !bytes.Equal(got, want) {
			t.Errorf("%d..%d: % x, protobuf gives % x", c[0], c[1], got, want)
		}
		s, err := decodeRowIDs(got)
		if err != nil {
			t.Fatalf("%d..%d: %v", c[0], c[1], err)
		}
		if s.length() != c[1]-c[0] {
			t.Errorf("%d..%d: length %d", c[0], c[1], s.length())
		}
	}
	// Lance's bytes for the first fragment of 40 rows: no start, end 40.
	if got, want := encodeRowIDRange(0, 40), []byte{0x0a, 0x04, 0x0a, 0x02, 0x10, 40}; !bytes.Equal(got, want) {
		t.Errorf("0..40: % x, want % x", got, want)
	}
}

func TestRowIDUniformVersions(t *testing.T) {
	if b := encodeUniformVersions(0, 7); b != nil {
		t.Errorf("0 rows: % x, want nothing", b)
	}
	for _, c := range [][2]uint64{{1, 1}, {40, 1}, {10, 3}, {1, 0}, {1 << 33, 1 << 50}, {math.MaxUint64, math.MaxUint64}} {
		got := encodeUniformVersions(c[0], c[1])
		want := rowIDMarshal(t, &tablepb.RowDatasetVersionSequence{Runs: []*tablepb.RowDatasetVersionRun{{Span: pbRange(0, c[0]), Version: c[1]}}})
		if !bytes.Equal(got, want) {
			t.Errorf("%d rows at %d: % x, protobuf gives % x", c[0], c[1], got, want)
		}
		s, err := decodeVersions(got)
		if err != nil {
			t.Fatal(err)
		}
		if s.length() != c[0] || len(s.runs) != 1 || s.runs[0] != (versionRun{c[0], c[1]}) {
			t.Errorf("%d rows at %d: decoded %+v", c[0], c[1], s)
		}
	}
	if got, want := encodeUniformVersions(40, 1), []byte{0x0a, 0x08, 0x0a, 0x04, 0x0a, 0x02, 0x10, 40, 0x10, 1}; !bytes.Equal(got, want) {
		t.Errorf("40 rows at 1: % x, want % x", got, want)
	}
	s, err := decodeVersions(nil)
	if err != nil || s.length() != 0 || len(rowIDCollect(s.values())) != 0 {
		t.Errorf("empty sequence: %+v, %v", s, err)
	}
}

func TestRowIDDecodeSegments(t *testing.T) {
	without := func(start, end uint64, gone ...uint64) []uint64 {
		var out []uint64
		for v := start; v < end; v++ {
			if !slices.Contains(gone, v) {
				out = append(out, v)
			}
		}
		return out
	}
	for _, c := range []struct {
		name string
		segs []*tablepb.U64Segment
		want []uint64
	}{
		{"none", nil, nil},
		{"range", []*tablepb.U64Segment{pbRange(3, 9)}, rowIDSpan(3, 9)},
		{"empty ranges", []*tablepb.U64Segment{pbRange(0, 0), pbRange(9, 9)}, nil},
		{"ranges", []*tablepb.U64Segment{pbRange(0, 10), pbRange(10, 20), pbRange(30, 32), pbRange(5, 6)}, append(append(rowIDSpan(0, 20), 30, 31), 5)},
		{"holes u16", []*tablepb.U64Segment{pbHoles(100, 200, pbU16(104, 0, 4, 46))}, without(100, 200, 104, 108, 150)},
		{"holes u32", []*tablepb.U64Segment{pbHoles(0, 1<<20, pbU32(5, 0, 1<<19))}, without(0, 1<<20, 5, 5+1<<19)},
		{"holes u64", []*tablepb.U64Segment{pbHoles(10, 14, pbU64(10, 13))}, []uint64{11, 12}},
		{"holes none", []*tablepb.U64Segment{pbHoles(10, 14, pbU64())}, rowIDSpan(10, 14)},
		{"all holes", []*tablepb.U64Segment{pbHoles(10, 12, pbU16(10, 0, 1))}, nil},
		// Lance's serde test: 100..110 without 102 is 0xfb 0x03.
		{"bitmap", []*tablepb.U64Segment{pbBitmap(100, 110, 0xfb, 0x03)}, without(100, 110, 102)},
		{"bitmap last", []*tablepb.U64Segment{pbBitmap(200, 300, append(make([]byte, 12), 0x08)...)}, []uint64{299}},
		{"bitmap empty", []*tablepb.U64Segment{pbBitmap(7, 7)}, nil},
		{"bitmap bytes", []*tablepb.U64Segment{pbBitmap(0, 16, 0x81, 0xff)}, []uint64{0, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
		{"sorted u16", []*tablepb.U64Segment{pbSorted(pbU16(200, 1, 2, 3))}, []uint64{201, 202, 203}},
		{"sorted u32", []*tablepb.U64Segment{pbSorted(pbU32(1<<40, 0, 1<<31))}, []uint64{1 << 40, 1<<40 + 1<<31}},
		{"sorted u64", []*tablepb.U64Segment{pbSorted(pbU64(1, 1<<63, math.MaxUint64))}, []uint64{1, 1 << 63, math.MaxUint64}},
		{"sorted empty", []*tablepb.U64Segment{pbSorted(pbU64())}, nil},
		{"array u64", []*tablepb.U64Segment{pbArray(pbU64(3, 1, 2))}, []uint64{3, 1, 2}},
		{"array u16", []*tablepb.U64Segment{pbArray(pbU16(math.MaxUint64-65535, 65535, 0))}, []uint64{math.MaxUint64, math.MaxUint64 - 65535}},
		{"array u32 max", []*tablepb.U64Segment{pbArray(pbU32(math.MaxUint64-math.MaxUint32, math.MaxUint32))}, []uint64{math.MaxUint64}},
		{"mixed", []*tablepb.U64Segment{pbRange(0, 20), pbRange(30, 100), pbHoles(100, 200, pbU64(104, 108, 150)), pbBitmap(200, 300, append(make([]byte, 12), 0x08)...), pbSorted(pbU16(200, 1, 2, 3)), pbArray(pbU64(3, 1, 2))},
			slices.Concat(rowIDSpan(0, 20), rowIDSpan(30, 100), without(100, 200, 104, 108, 150), []uint64{299, 201, 202, 203, 3, 1, 2})},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := decodeRowIDs(pbSeq(t, c.segs...))
			if err != nil {
				t.Fatal(err)
			}
			if got := rowIDCollect(s.values()); !slices.Equal(got, c.want) {
				t.Errorf("ids %v, want %v", got, c.want)
			}
			if s.length() != uint64(len(c.want)) {
				t.Errorf("length %d, want %d", s.length(), len(c.want))
			}
			// Stopping early stops.
			n := 0
			for range s.values() {
				n++
				if n == 2 {
					break
				}
			}
			if n != min(2, len(c.want)) {
				t.Errorf("early stop after %d", n)
			}
		})
	}
	// A range that continues the previous one joins it.
	s, err := decodeRowIDs(pbSeq(t, pbRange(0, 10), pbRange(10, 20), pbRange(0, 0), pbRange(20, 21)))
	if err != nil || len(s.segs) != 1 || s.length() != 21 {
		t.Errorf("joined ranges: %+v, %v", s, err)
	}
	// A huge range is counted, not expanded.
	s, err = decodeRowIDs(pbSeq(t, pbRange(0, math.MaxUint64)))
	if err != nil || s.length() != math.MaxUint64 {
		t.Errorf("huge range: %+v, %v", s, err)
	}
	for v := range s.values() {
		if v != 0 {
			t.Errorf("first id %d", v)
		}
		break
	}
	// Segments merge their fields as protobuf does (Lance decodes them with
	// prost): a second Range with only an end keeps the first one's start.
	seg := rowIDMarshal(t, pbRange(1, 9))
	seg = append(seg, rowIDMarshal(t, pbRange(0, 3))...)
	b := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), seg)
	if s, err := decodeRowIDs(b); err != nil || !slices.Equal(rowIDCollect(s.values()), []uint64{1, 2}) {
		t.Errorf("merged segment: %v, %v", s, err)
	}
}

func TestRowIDDecodeCorrupt(t *testing.T) {
	seq := func(segs ...*tablepb.U64Segment) []byte { return pbSeq(t, segs...) }
	rawSeg := func(b []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), b)
	}
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"other field", protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), 1)},
		{"segments as varint", protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1)},
		{"truncated tag", []byte{0x80}},
		{"truncated length", []byte{0x0a}},
		{"length past end", []byte{0x0a, 0x05, 0x0a, 0x00}},
		{"huge length", []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}},
		{"segment of no kind", []byte{0x0a, 0x00}},
		{"bad segment", rawSeg([]byte{0x0a, 0x02, 0x08})},
		{"reversed range", seq(pbRange(10, 9))},
		{"reversed holes", seq(pbHoles(10, 9, pbU64()))},
		{"no holes", seq(pbHoles(5, 7, nil))},
		{"holes of no kind", seq(pbHoles(5, 7, &tablepb.EncodedU64Array{}))},
		{"descending holes", seq(pbHoles(5, 7, pbU64(6, 5)))},
		{"duplicate holes", seq(pbHoles(5, 7, pbU64(5, 5)))},
		{"hole below", seq(pbHoles(5, 7, pbU64(4)))},
		{"hole at end", seq(pbHoles(5, 7, pbU16(7, 0)))},
		{"hole in empty range", seq(pbHoles(5, 5, pbU16(5, 0)))},
		{"misaligned holes", seq(pbHoles(5, 7, pbRawArray(4, 5, []byte{0, 0})))},
		{"reversed bitmap", seq(pbBitmap(10, 9))},
		{"short bitmap", seq(pbBitmap(5, 14, 0))},
		{"long bitmap", seq(pbBitmap(5, 14, 0, 0, 0))},
		{"bitmap for empty", seq(pbBitmap(5, 5, 0))},
		{"bitmap padding", seq(pbBitmap(5, 14, 0xff, 0x03))},
		{"bitmap for huge range", seq(pbBitmap(0, math.MaxUint64, 0xff))},
		{"descending u16", seq(pbSorted(pbU16(100, 2, 1)))},
		{"descending u32", seq(pbSorted(pbU32(100, 2, 1)))},
		{"descending u64", seq(pbSorted(pbU64(2, 1)))},
		{"duplicate u16", seq(pbSorted(pbU16(100, 5, 5)))},
		{"duplicate u32", seq(pbSorted(pbU32(100, 5, 5)))},
		{"duplicate u64", seq(pbSorted(pbU64(5, 5)))},
		{"misaligned u16", seq(pbArray(pbRawArray(2, 0, []byte{1})))},
		{"misaligned u32", seq(pbArray(pbRawArray(4, 0, []byte{1, 2, 3})))},
		{"misaligned u64", seq(pbArray(pbRawArray(8, 0, []byte{1, 2, 3, 4, 5, 6, 7})))},
		{"misaligned sorted", seq(pbSorted(pbRawArray(8, 0, make([]byte, 9))))},
		{"u16 overflow", seq(pbArray(pbU16(math.MaxUint64, 1)))},
		{"u32 overflow", seq(pbArray(pbU32(math.MaxUint64-1, 2)))},
		{"array of no kind", seq(pbArray(&tablepb.EncodedU64Array{}))},
		{"sorted of no kind", seq(pbSorted(nil))},
		{"total overflow", seq(pbRange(0, math.MaxUint64), pbRange(0, 1))},
		{"total overflow later", seq(pbRange(1, math.MaxUint64), pbSorted(pbU64(1, 2)), pbRange(0, 0))},
		{"corrupt after good", append(seq(pbRange(0, 4)), 0x12, 0x00)},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := decodeRowIDs(c.b)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("% x: %+v, %v; want ErrCorrupt", c.b, s, err)
			}
			t.Log(err)
			// The same span is as corrupt in a version run.
			num, typ, n := protowire.ConsumeTag(c.b)
			if n < 0 || num != 1 || typ != protowire.BytesType {
				return
			}
			if seg, m := protowire.ConsumeBytes(c.b[n:]); m > 0 && n+m == len(c.b) {
				run := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), seg)
				vb := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), run)
				if _, err := decodeVersions(vb); !errors.Is(err, ErrCorrupt) {
					t.Errorf("as a version span: %v; want ErrCorrupt", err)
				}
			}
		})
	}
}

func TestRowIDDecodeVersions(t *testing.T) {
	run := func(seg *tablepb.U64Segment, v uint64) *tablepb.RowDatasetVersionRun {
		return &tablepb.RowDatasetVersionRun{Span: seg, Version: v}
	}
	for _, c := range []struct {
		name string
		runs []*tablepb.RowDatasetVersionRun
		want []uint64
	}{
		{"uniform", []*tablepb.RowDatasetVersionRun{run(pbRange(0, 4), 7)}, []uint64{7, 7, 7, 7}},
		{"runs", []*tablepb.RowDatasetVersionRun{run(pbRange(0, 2), 1), run(pbRange(2, 3), 3), run(pbRange(3, 5), 1)}, []uint64{1, 1, 3, 1, 1}},
		{"empty run", []*tablepb.RowDatasetVersionRun{run(pbRange(0, 2), 1), run(pbRange(2, 2), 9), run(pbRange(2, 3), 1)}, []uint64{1, 1, 1}},
		// Only a span's length counts (Lance's compaction writes sliced spans).
		{"holes span", []*tablepb.RowDatasetVersionRun{run(pbHoles(0, 40, pbU16(2, 0)), 3), run(pbBitmap(40, 48, 0x81), 4)}, slices.Concat(slices.Repeat([]uint64{3}, 39), []uint64{4, 4})},
		{"array span", []*tablepb.RowDatasetVersionRun{run(pbArray(pbU64(9, 1)), 2), run(pbSorted(pbU16(0, 1, 2, 3)), 0)}, []uint64{2, 2, 0, 0, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := decodeVersions(rowIDMarshal(t, &tablepb.RowDatasetVersionSequence{Runs: c.runs}))
			if err != nil {
				t.Fatal(err)
			}
			if got := rowIDCollect(s.values()); !slices.Equal(got, c.want) || s.length() != uint64(len(c.want)) {
				t.Errorf("versions %v (length %d), want %v", got, s.length(), c.want)
			}
		})
	}
	good := rowIDMarshal(t, &tablepb.RowDatasetVersionSequence{Runs: []*tablepb.RowDatasetVersionRun{run(pbRange(0, 3), 2)}})
	// Unknown fields are skipped, as protobuf decoders do.
	unknown := protowire.AppendVarint(protowire.AppendTag(slices.Clone(good), 2, protowire.VarintType), 5)
	unknown = protowire.AppendBytes(protowire.AppendTag(unknown, 3, protowire.BytesType), []byte{1, 2})
	if s, err := decodeVersions(unknown); err != nil || s.length() != 3 {
		t.Errorf("unknown fields: %+v, %v", s, err)
	}
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"no span", rowIDMarshal(t, &tablepb.RowDatasetVersionSequence{Runs: []*tablepb.RowDatasetVersionRun{{Version: 3}}})},
		{"span of no kind", rowIDMarshal(t, &tablepb.RowDatasetVersionSequence{Runs: []*tablepb.RowDatasetVersionRun{{Span: &tablepb.U64Segment{}, Version: 3}}})},
		{"reversed span", rowIDMarshal(t, &tablepb.RowDatasetVersionSequence{Runs: []*tablepb.RowDatasetVersionRun{run(pbRange(3, 2), 3)}})},
		{"overflow", rowIDMarshal(t, &tablepb.RowDatasetVersionSequence{Runs: []*tablepb.RowDatasetVersionRun{run(pbRange(0, math.MaxUint64), 1), run(pbRange(0, 1), 2)}})},
		{"runs as varint", protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1)},
		{"truncated", good[:len(good)-1]},
		{"bad unknown", append(slices.Clone(good), 0x1a, 0x05)},
		{"bad run", []byte{0x0a, 0x02, 0x10, 0x80}},
	} {
		if s, err := decodeVersions(c.b); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %+v, %v; want ErrCorrupt", c.name, s, err)
		}
	}
}

// TestRowIDGoldenEncode checks the encoders against the bytes Lance wrote
// for the fragments of versions 1 to 5, and decoding against the ids.
func TestRowIDGoldenEncode(t *testing.T) {
	for v := 1; v <= 5; v++ {
		m := loadRowIDGolden(t, v)
		want := rowIDGoldenFragments
		if v == 1 {
			want = want[:3]
		}
		if len(m.Fragments) != len(want) {
			t.Fatalf("v%d: %d fragments", v, len(m.Fragments))
		}
		if next := uint64(rowIDGoldenRows); v == 1 && m.NextRowId != rowIDGoldenNewRows || v > 1 && m.NextRowId != next {
			t.Errorf("v%d: next row id %d", v, m.NextRowId)
		}
		for i, f := range m.Fragments {
			g := want[i]
			if f.Id != g.id || f.PhysicalRows != g.rows {
				t.Fatalf("v%d: fragment %d has id %d and %d rows", v, i, f.Id, f.PhysicalRows)
			}
			if got := encodeRowIDRange(g.start, g.start+g.rows); !bytes.Equal(got, f.GetInlineRowIds()) {
				t.Errorf("v%d fragment %d: row ids % x, Lance wrote % x", v, f.Id, got, f.GetInlineRowIds())
			}
			created := uint64(1)
			if g.start >= rowIDGoldenNewRows {
				created = 2
			}
			updated := created
			if v >= 3 {
				updated = 3 // add_columns
			}
			if got := encodeUniformVersions(g.rows, created); !bytes.Equal(got, f.GetInlineCreatedAtVersions()) {
				t.Errorf("v%d fragment %d: created at % x, Lance wrote % x", v, f.Id, got, f.GetInlineCreatedAtVersions())
			}
			if got := encodeUniformVersions(g.rows, updated); !bytes.Equal(got, f.GetInlineLastUpdatedAtVersions()) {
				t.Errorf("v%d fragment %d: last updated at % x, Lance wrote % x", v, f.Id, got, f.GetInlineLastUpdatedAtVersions())
			}
			ids, err := fragmentRowIDs(f)
			if err != nil {
				t.Fatal(err)
			}
			if got := rowIDCollect(ids.values()); !slices.Equal(got, rowIDSpan(g.start, g.start+g.rows)) {
				t.Errorf("v%d fragment %d: ids %v", v, f.Id, got)
			}
			for _, c := range []struct {
				created bool
				want    uint64
			}{{true, created}, {false, updated}} {
				vs, err := fragmentVersions(f, c.created)
				if err != nil {
					t.Fatal(err)
				}
				if got := rowIDCollect(vs.values()); !slices.Equal(got, slices.Repeat([]uint64{c.want}, int(g.rows))) {
					t.Errorf("v%d fragment %d created %v: versions %v", v, f.Id, c.created, got)
				}
			}
		}
	}
}

// TestRowIDGoldenStampAppend replays the commits of versions 1 (a new
// dataset) and 2 (an append) on fragments stripped of their row ids.
func TestRowIDGoldenStampAppend(t *testing.T) {
	v1, v2 := loadRowIDGolden(t, 1), loadRowIDGolden(t, 2)
	for _, c := range []struct {
		name    string
		base    *tablepb.Manifest
		want    []*tablepb.DataFragment
		version uint64
		next    uint64
	}{
		{"create", &tablepb.Manifest{ReaderFeatureFlags: stableRowIDsFlag, WriterFeatureFlags: stableRowIDsFlag}, v1.Fragments, 1, rowIDGoldenNewRows},
		{"append", proto.Clone(v1).(*tablepb.Manifest), v2.Fragments[3:], 2, rowIDGoldenRows},
	} {
		t.Run(c.name, func(t *testing.T) {
			frags := make([]*tablepb.DataFragment, len(c.want))
			for i, f := range c.want {
				frags[i] = stripRowIDs(f)
			}
			if err := stampAppendedFragments(c.base, frags, c.version); err != nil {
				t.Fatal(err)
			}
			for i, f := range frags {
				if !proto.Equal(f, c.want[i]) {
					t.Errorf("fragment %d:\n got %v\nwant %v", f.Id, f, c.want[i])
				}
			}
			if c.base.NextRowId != c.next {
				t.Errorf("next row id %d, want %d", c.base.NextRowId, c.next)
			}
		})
	}
}

// TestRowIDGoldenStampMerge replays add_columns (version 3): every fragment
// gets a second data file, so its rows count as updated at version 3.
func TestRowIDGoldenStampMerge(t *testing.T) {
	v2, v3 := loadRowIDGolden(t, 2), loadRowIDGolden(t, 3)
	if len(v3.Fragments) != len(v2.Fragments) || v3.NextRowId != v2.NextRowId {
		t.Fatal("add_columns changed the fragments")
	}
	for i, want := range v3.Fragments {
		prev := v2.Fragments[i]
		// What a merge commit gets: the fragment as it was, plus the new file.
		merged := proto.Clone(prev).(*tablepb.DataFragment)
		merged.Files = append(merged.Files, proto.Clone(want.Files[len(want.Files)-1]).(*tablepb.DataFile))
		if err := stampMergedFragment(prev, merged, 3); err != nil {
			t.Fatal(err)
		}
		if !proto.Equal(merged, want) {
			t.Errorf("fragment %d:\n got %v\nwant %v", want.Id, merged, want)
		}
		// The row count comes from the row ids when physical rows are unset.
		merged = proto.Clone(prev).(*tablepb.DataFragment)
		merged.Files = proto.Clone(want).(*tablepb.DataFragment).Files
		merged.PhysicalRows = 0
		if err := stampMergedFragment(prev, merged, 3); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(merged.GetInlineLastUpdatedAtVersions(), want.GetInlineLastUpdatedAtVersions()) {
			t.Errorf("fragment %d without physical rows: % x", want.Id, merged.GetInlineLastUpdatedAtVersions())
		}
		// Unchanged files (sizes aside) leave the fragment alone.
		same := proto.Clone(want).(*tablepb.DataFragment)
		for _, df := range same.Files {
			df.FileSizeBytes++
		}
		if err := stampMergedFragment(want, same, 4); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(same.GetInlineLastUpdatedAtVersions(), want.GetInlineLastUpdatedAtVersions()) {
			t.Errorf("fragment %d with the same files restamped", want.Id)
		}
	}
	// Every identity field of a data file counts.
	base := v3.Fragments[0]
	for name, change := range map[string]func(*tablepb.DataFile){
		"path":    func(d *tablepb.DataFile) { d.Path += "x" },
		"fields":  func(d *tablepb.DataFile) { d.Fields = append(d.Fields, 9) },
		"columns": func(d *tablepb.DataFile) { d.ColumnIndices = []int32{1} },
		"major":   func(d *tablepb.DataFile) { d.FileMajorVersion++ },
		"minor":   func(d *tablepb.DataFile) { d.FileMinorVersion++ },
		"base":    func(d *tablepb.DataFile) { d.BaseId = proto.Uint32(0) },
	} {
		merged := proto.Clone(base).(*tablepb.DataFragment)
		change(merged.Files[1])
		if err := stampMergedFragment(base, merged, 9); err != nil {
			t.Fatal(err)
		}
		if got, want := merged.GetInlineLastUpdatedAtVersions(), encodeUniformVersions(base.PhysicalRows, 9); !bytes.Equal(got, want) {
			t.Errorf("%s changed: last updated % x, want % x", name, got, want)
		}
		if !bytes.Equal(merged.GetInlineCreatedAtVersions(), base.GetInlineCreatedAtVersions()) || !bytes.Equal(merged.GetInlineRowIds(), base.GetInlineRowIds()) {
			t.Errorf("%s changed: row ids or created at changed", name)
		}
	}
	other := proto.Clone(base).(*tablepb.DataFragment)
	other.Id++
	if err := stampMergedFragment(base, other, 4); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("other fragment: %v", err)
	}
	bad := proto.Clone(base).(*tablepb.DataFragment)
	bad.Files = bad.Files[:1]
	bad.PhysicalRows = 0
	bad.RowIdSequence = &tablepb.DataFragment_InlineRowIds{InlineRowIds: []byte{0x0a, 0x00}}
	if err := stampMergedFragment(base, bad, 4); !errors.Is(err, ErrCorrupt) {
		t.Errorf("corrupt row ids: %v", err)
	}
}

// TestRowIDGoldenDelete: a delete (version 4) and a ReserveFragments commit
// (version 5) leave row ids, version metadata and next_row_id alone.
func TestRowIDGoldenDelete(t *testing.T) {
	v3, v4, v5 := loadRowIDGolden(t, 3), loadRowIDGolden(t, 4), loadRowIDGolden(t, 5)
	for _, m := range []*tablepb.Manifest{v4, v5} {
		if m.NextRowId != v3.NextRowId {
			t.Errorf("v%d: next row id %d", m.Version, m.NextRowId)
		}
		for i, f := range m.Fragments {
			p := v3.Fragments[i]
			if f.GetDeletionFile() == nil ||
				!bytes.Equal(f.GetInlineRowIds(), p.GetInlineRowIds()) ||
				!bytes.Equal(f.GetInlineCreatedAtVersions(), p.GetInlineCreatedAtVersions()) ||
				!bytes.Equal(f.GetInlineLastUpdatedAtVersions(), p.GetInlineLastUpdatedAtVersions()) {
				t.Errorf("v%d fragment %d changed", m.Version, f.Id)
			}
		}
	}
}

// TestRowIDGoldenCompacted decodes what compaction (version 6) wrote: the
// surviving rows in one fragment, their row ids as a range with holes and
// ranges with bitmaps (one segment per source fragment), and version runs
// with such spans.
func TestRowIDGoldenCompacted(t *testing.T) {
	m := loadRowIDGolden(t, 6)
	if len(m.Fragments) != 1 || m.NextRowId != rowIDGoldenRows {
		t.Fatalf("%d fragments, next row id %d", len(m.Fragments), m.NextRowId)
	}
	f := m.Fragments[0]
	var want, created []uint64
	for r := range uint64(rowIDGoldenRows) {
		if !rowIDGoldenDeleted(r) {
			want = append(want, r)
			created = append(created, 1+r/rowIDGoldenNewRows)
		}
	}
	if f.PhysicalRows != uint64(len(want)) {
		t.Fatalf("%d rows, want %d", f.PhysicalRows, len(want))
	}
	ids, err := fragmentRowIDs(f)
	if err != nil {
		t.Fatal(err)
	}
	if got := rowIDCollect(ids.values()); !slices.Equal(got, want) {
		t.Errorf("ids %v\nwant %v", got, want)
	}
	var kinds []u64Kind
	for _, s := range ids.segs {
		kinds = append(kinds, s.kind)
	}
	if want := []u64Kind{segRangeWithHoles, segRangeWithBitmap, segRangeWithBitmap, segRangeWithBitmap, segRangeWithBitmap}; !slices.Equal(kinds, want) {
		t.Errorf("segment kinds %v, want %v", kinds, want)
	}
	for _, c := range []struct {
		created bool
		want    []uint64
	}{{true, created}, {false, slices.Repeat([]uint64{3}, len(want))}} {
		vs, err := fragmentVersions(f, c.created)
		if err != nil {
			t.Fatal(err)
		}
		if got := rowIDCollect(vs.values()); !slices.Equal(got, c.want) {
			t.Errorf("created %v: versions %v\nwant %v", c.created, got, c.want)
		}
	}
}

func TestRowIDStampErrors(t *testing.T) {
	stable := func(next uint64) *tablepb.Manifest {
		return &tablepb.Manifest{ReaderFeatureFlags: 3, WriterFeatureFlags: 3, NextRowId: next}
	}
	frag := func(id, rows uint64) *tablepb.DataFragment {
		return &tablepb.DataFragment{Id: id, PhysicalRows: rows, Files: []*tablepb.DataFile{{Path: "a.lance", Fields: []int32{0}}}}
	}
	// Without stable row ids nothing happens.
	m := &tablepb.Manifest{ReaderFeatureFlags: 1, WriterFeatureFlags: 1, NextRowId: 5}
	f := frag(1, 10)
	if err := stampAppendedFragments(m, []*tablepb.DataFragment{f}, 2); err != nil || f.RowIdSequence != nil || m.NextRowId != 5 {
		t.Errorf("without stable row ids: %v, %v", err, f)
	}
	if err := stampAppendedFragments(nil, nil, 1); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("nil manifest: %v", err)
	}
	// Ids continue from next_row_id, in fragment order.
	m = stable(7)
	fs := []*tablepb.DataFragment{frag(3, 2), frag(4, 5)}
	if err := stampAppendedFragments(m, fs, 9); err != nil {
		t.Fatal(err)
	}
	if m.NextRowId != 14 || !bytes.Equal(fs[0].GetInlineRowIds(), encodeRowIDRange(7, 9)) || !bytes.Equal(fs[1].GetInlineRowIds(), encodeRowIDRange(9, 14)) ||
		!bytes.Equal(fs[1].GetInlineCreatedAtVersions(), encodeUniformVersions(5, 9)) || !bytes.Equal(fs[1].GetInlineLastUpdatedAtVersions(), encodeUniformVersions(5, 9)) {
		t.Errorf("stamped %v, next %d", fs, m.NextRowId)
	}
	// Nothing is appended: nothing changes.
	if err := stampAppendedFragments(m, nil, 10); err != nil || m.NextRowId != 14 {
		t.Errorf("no fragments: %v, next %d", err, m.NextRowId)
	}
	withIDs := frag(5, 3)
	withIDs.RowIdSequence = &tablepb.DataFragment_InlineRowIds{InlineRowIds: encodeRowIDRange(0, 3)}
	withColumn := frag(5, 3)
	withColumn.RowIdSequence = &tablepb.DataFragment_ColumnRowIds{ColumnRowIds: &tablepb.RowLineageColumn{}}
	for _, c := range []struct {
		name string
		m    *tablepb.Manifest
		f    *tablepb.DataFragment
		err  error
	}{
		{"row ids", stable(0), withIDs, ErrInvalidOption},
		{"column row ids", stable(0), withColumn, ErrInvalidOption},
		{"no rows", stable(0), frag(5, 0), ErrInvalidOption},
		{"overflow", stable(math.MaxUint64 - 2), frag(5, 3), ErrCorrupt},
	} {
		good := frag(4, 1)
		before := proto.Clone(c.m)
		err := stampAppendedFragments(c.m, []*tablepb.DataFragment{good, c.f}, 2)
		if !errors.Is(err, c.err) {
			t.Errorf("%s: %v, want %v", c.name, err, c.err)
		}
		if good.RowIdSequence != nil || !proto.Equal(c.m, before) {
			t.Errorf("%s: changed something", c.name)
		}
	}
	// Exactly up to the last id is fine.
	m = stable(math.MaxUint64 - 3)
	if err := stampAppendedFragments(m, []*tablepb.DataFragment{frag(1, 3)}, 2); err != nil || m.NextRowId != math.MaxUint64 {
		t.Errorf("last ids: %v, next %d", err, m.NextRowId)
	}
}

func TestRowIDFragmentChecks(t *testing.T) {
	f := &tablepb.DataFragment{Id: 3, PhysicalRows: 4}
	if _, err := fragmentRowIDs(f); !errors.Is(err, ErrCorrupt) {
		t.Errorf("no row ids: %v", err)
	}
	if vs, err := fragmentVersions(f, true); vs != nil || err != nil {
		t.Errorf("no versions: %v, %v", vs, err)
	}
	f.RowIdSequence = &tablepb.DataFragment_InlineRowIds{InlineRowIds: encodeRowIDRange(0, 3)}
	f.CreatedAtVersionSequence = &tablepb.DataFragment_InlineCreatedAtVersions{InlineCreatedAtVersions: encodeUniformVersions(5, 1)}
	f.LastUpdatedAtVersionSequence = &tablepb.DataFragment_InlineLastUpdatedAtVersions{InlineLastUpdatedAtVersions: []byte{0x0a}}
	if _, err := fragmentRowIDs(f); !errors.Is(err, ErrCorrupt) {
		t.Errorf("3 ids for 4 rows: %v", err)
	}
	if _, err := fragmentVersions(f, true); !errors.Is(err, ErrCorrupt) {
		t.Errorf("5 versions for 4 rows: %v", err)
	}
	if _, err := fragmentVersions(f, false); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated versions: %v", err)
	}
	f.RowIdSequence = &tablepb.DataFragment_ColumnRowIds{ColumnRowIds: &tablepb.RowLineageColumn{}}
	f.CreatedAtVersionSequence = &tablepb.DataFragment_ColumnCreatedAtVersions{ColumnCreatedAtVersions: &tablepb.RowLineageColumn{}}
	f.LastUpdatedAtVersionSequence = &tablepb.DataFragment_ColumnLastUpdatedAtVersions{ColumnLastUpdatedAtVersions: &tablepb.RowLineageColumn{}}
	if _, err := fragmentRowIDs(f); !errors.Is(err, ErrUnsupported) {
		t.Errorf("column row ids: %v", err)
	}
	for _, created := range []bool{true, false} {
		if _, err := fragmentVersions(f, created); !errors.Is(err, ErrUnsupported) {
			t.Errorf("column versions (created %v): %v", created, err)
		}
	}
	// The marker arms survive a round trip (field numbers 12, 13, 14).
	b := rowIDMarshal(t, f)
	for _, tag := range []byte{12<<3 | 2, 13<<3 | 2, 14<<3 | 2} {
		if !bytes.Contains(b, []byte{tag, 0x00}) {
			t.Errorf("no empty field %d in % x", tag>>3, b)
		}
	}
	var back tablepb.DataFragment
	if err := proto.Unmarshal(b, &back); err != nil || !proto.Equal(&back, f) {
		t.Errorf("round trip: %v", err)
	}
}

// FuzzRowIDDecode feeds both decoders arbitrary bytes: they must return a
// sequence whose length matches its values, or an ErrCorrupt, never panic,
// and keep no more than the input justifies.
func FuzzRowIDDecode(f *testing.F) {
	for v := 1; v <= 6; v++ {
		for _, fr := range loadRowIDGolden(f, v).Fragments {
			f.Add(fr.GetInlineRowIds())
			f.Add(fr.GetInlineCreatedAtVersions())
			f.Add(fr.GetInlineLastUpdatedAtVersions())
		}
	}
	f.Add([]byte{})
	f.Add(encodeRowIDRange(0, math.MaxUint64))
	f.Add(encodeUniformVersions(3, 1))
	f.Add(pbSeq(f, pbRange(0, 20), pbRange(30, 100), pbHoles(100, 200, pbU64(104, 108, 150)), pbBitmap(200, 300, append(make([]byte, 12), 0x08)...),
		pbSorted(pbU16(200, 1, 2, 3)), pbSorted(pbU32(1<<40, 0, 1<<31)), pbArray(pbU64(3, 1, 2))))
	f.Add(pbSeq(f, pbBitmap(5, 14, 0xff, 0x01), pbHoles(0, 1<<20, pbU32(5, 0, 1<<19))))
	f.Add(rowIDMarshal(f, &tablepb.RowDatasetVersionSequence{Runs: []*tablepb.RowDatasetVersionRun{
		{Span: pbRange(0, 2), Version: 1}, {Span: pbHoles(0, 40, pbU16(2, 0)), Version: 3}, {Span: pbBitmap(40, 48, 0x81), Version: 4},
	}}))
	const most = 1 << 16
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := decodeRowIDs(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("row ids: %v is not ErrCorrupt", err)
			}
		} else {
			// A kept segment holds at least one id and takes at least 6 bytes.
			if 6*len(s.segs) > len(b) {
				t.Fatalf("%d segments from %d bytes", len(s.segs), len(b))
			}
			var n, sum uint64
			for _, seg := range s.segs {
				if seg.n == 0 {
					t.Fatal("empty segment kept")
				}
				sum += seg.n
			}
			if sum != s.length() {
				t.Fatalf("segments hold %d ids, length %d", sum, s.length())
			}
			for range s.values() {
				if n++; n == most {
					break
				}
			}
			if n != min(s.length(), most) {
				t.Fatalf("%d ids, length %d", n, s.length())
			}
		}
		vs, err := decodeVersions(b)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("versions: %v is not ErrCorrupt", err)
			}
			return
		}
		// A kept run holds at least one row and takes at least 8 bytes.
		if 8*len(vs.runs) > len(b) {
			t.Fatalf("%d runs from %d bytes", len(vs.runs), len(b))
		}
		var n uint64
		for range vs.values() {
			if n++; n == most {
				break
			}
		}
		if n != min(vs.length(), most) {
			t.Fatalf("%d versions, length %d", n, vs.length())
		}
	})
}
