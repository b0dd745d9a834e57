package dataset

// Stable row ids (Lance feature flag 1<<1). With the flag on, every fragment
// carries its row ids (DataFragment.inline_row_ids, a serialized
// RowIdSequence), and the version that created and last updated each row
// (inline_created_at_versions, inline_last_updated_at_versions, serialized
// RowDatasetVersionSequences); Manifest.next_row_id is the next id to hand
// out.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"iter"
	"math"
	"math/bits"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/proto/tablepb"
)

// stableRowIDsFlag is the stable row ids bit of the manifest's feature flag
// words. Lance sets it in both words and tests the reader word.
const stableRowIDsFlag = 1 << 1

// stableRowIDs reports whether the dataset of m uses stable row ids: the flag
// in either feature word. Lance always sets both together (whenever a
// fragment has row ids) and tests the reader word; taking either keeps a
// manifest where they disagree stamped, since Lance refuses to commit one in
// which only some fragments have row ids.
func stableRowIDs(m *tablepb.Manifest) bool {
	return (m.GetReaderFeatureFlags()|m.GetWriterFeatureFlags())&stableRowIDsFlag != 0
}

// Encoding.

// encodeRowIDRange returns the serialized RowIdSequence of the ids
// [start, end): one segment holding a Range, the form Lance writes for the
// row ids of a newly written fragment. Zero fields are left out, as protobuf
// encoders do.
func encodeRowIDRange(start, end uint64) []byte {
	return appendMessage(nil, 1, rangeSegment(start, end))
}

// rangeSegment returns the serialized U64Segment holding Range{start, end}.
func rangeSegment(start, end uint64) []byte {
	var r []byte
	if start != 0 {
		r = protowire.AppendTag(r, 1, protowire.VarintType)
		r = protowire.AppendVarint(r, start)
	}
	if end != 0 {
		r = protowire.AppendTag(r, 2, protowire.VarintType)
		r = protowire.AppendVarint(r, end)
	}
	return appendMessage(nil, 1, r)
}

// appendMessage appends field num holding the serialized message m.
func appendMessage(b []byte, num protowire.Number, m []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, m)
}

// encodeUniformVersions returns the serialized RowDatasetVersionSequence of n
// rows all at version v: one run whose span is the Range [0, n), as Lance
// writes it. For n == 0 the sequence has no runs and its encoding is empty
// (nil); Lance never stores that one, a fragment without rows gets no version
// metadata.
func encodeUniformVersions(n, v uint64) []byte {
	if n == 0 {
		return nil
	}
	run := appendMessage(nil, 1, rangeSegment(0, n))
	if v != 0 {
		run = protowire.AppendTag(run, 2, protowire.VarintType)
		run = protowire.AppendVarint(run, v)
	}
	return appendMessage(nil, 1, run)
}

// Decoding.

// u64Kind is the kind of a U64Segment.
type u64Kind uint8

const (
	segRange u64Kind = iota + 1
	segRangeWithHoles
	segRangeWithBitmap
	segSortedArray
	segArray
)

// u64Segment is a decoded, checked U64Segment.
type u64Segment struct {
	kind u64Kind
	// start and end bound the range kinds, end exclusive.
	start, end uint64
	// n is the number of values.
	n uint64
	// width is the byte width of the packed values in data (2, 4 or 8),
	// which are offsets from base (or, width 8, the values themselves): the
	// holes of a range with holes and the values of the arrays. For a range
	// with a bitmap data is the bitmap, bit i (of byte i/8, least significant
	// bit first) set when start+i is present.
	width int
	base  uint64
	data  []byte
}

// packed returns packed value i.
func (s *u64Segment) packed(i int) uint64 {
	switch s.width {
	case 2:
		return s.base + uint64(binary.LittleEndian.Uint16(s.data[2*i:]))
	case 4:
		return s.base + uint64(binary.LittleEndian.Uint32(s.data[4*i:]))
	default:
		return binary.LittleEndian.Uint64(s.data[8*i:])
	}
}

// each yields the segment's values in order; false when yield stopped it.
func (s *u64Segment) each(yield func(uint64) bool) bool {
	switch s.kind {
	case segRange:
		for v := s.start; v < s.end; v++ {
			if !yield(v) {
				return false
			}
		}
	case segRangeWithHoles:
		nh, h := len(s.data)/s.width, 0
		for v := s.start; v < s.end; v++ {
			if h < nh && s.packed(h) == v {
				h++
				continue
			}
			if !yield(v) {
				return false
			}
		}
	case segRangeWithBitmap:
		for i, c := range s.data {
			for c != 0 {
				j := bits.TrailingZeros8(c)
				c &= c - 1
				if !yield(s.start + uint64(i)*8 + uint64(j)) {
					return false
				}
			}
		}
	case segSortedArray, segArray:
		for i := range len(s.data) / s.width {
			if !yield(s.packed(i)) {
				return false
			}
		}
	}
	return true
}

// rowIDSeq is a decoded RowIdSequence.
type rowIDSeq struct {
	segs []u64Segment
	n    uint64
}

// length returns the number of row ids.
func (s *rowIDSeq) length() uint64 { return s.n }

// values yields the row ids in row order.
func (s *rowIDSeq) values() iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		for i := range s.segs {
			if !s.segs[i].each(yield) {
				return
			}
		}
	}
}

// decodeRowIDs decodes and checks a serialized RowIdSequence. As in Lance,
// the sequence may hold nothing but segments (field 1); each segment is
// checked the way Lance checks it (ranges not reversed, holes and sorted
// arrays strictly increasing, holes inside their range, bitmaps of exactly
// the range's length with clear padding, packed arrays a whole number of
// values that do not overflow) and the total length must fit a uint64. What
// it keeps is at most a small multiple of len(b); ids are produced lazily.
func decodeRowIDs(b []byte) (*rowIDSeq, error) {
	s := &rowIDSeq{}
	var pb tablepb.U64Segment
	for i := 0; len(b) > 0; i++ {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, rowIDErr("row id sequence: %v", protowire.ParseError(n))
		}
		if num != 1 || typ != protowire.BytesType {
			return nil, rowIDErr("row id sequence: unexpected field %d of wire type %d", num, typ)
		}
		b = b[n:]
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return nil, rowIDErr("row id sequence: %v", protowire.ParseError(n))
		}
		b = b[n:]
		if err := proto.Unmarshal(v, &pb); err != nil {
			return nil, rowIDErr("row id segment %d: %v", i, err)
		}
		seg, err := checkSegment(&pb)
		if err != nil {
			return nil, fmt.Errorf("row id segment %d: %w", i, err)
		}
		if s.n+seg.n < s.n {
			return nil, rowIDErr("row id sequence longer than 2^64-1 ids")
		}
		s.n += seg.n
		s.push(seg)
	}
	return s, nil
}

// push appends seg, dropping an empty one and joining a range that continues
// the previous one; neither changes the ids.
func (s *rowIDSeq) push(seg u64Segment) {
	if seg.n == 0 {
		return
	}
	if k := len(s.segs) - 1; seg.kind == segRange && k >= 0 && s.segs[k].kind == segRange && s.segs[k].end == seg.start {
		s.segs[k].end = seg.end
		s.segs[k].n += seg.n
		return
	}
	s.segs = append(s.segs, seg)
}

// checkSegment converts a U64Segment, checking it as Lance does.
func checkSegment(pb *tablepb.U64Segment) (u64Segment, error) {
	switch x := pb.GetSegment().(type) {
	case *tablepb.U64Segment_Range_:
		r := x.Range
		if r.GetStart() > r.GetEnd() {
			return u64Segment{}, rowIDErr("range start %d after end %d", r.GetStart(), r.GetEnd())
		}
		return u64Segment{kind: segRange, start: r.GetStart(), end: r.GetEnd(), n: r.GetEnd() - r.GetStart()}, nil
	case *tablepb.U64Segment_RangeWithHoles_:
		r := x.RangeWithHoles
		start, end := r.GetStart(), r.GetEnd()
		if start > end {
			return u64Segment{}, rowIDErr("range with holes: start %d after end %d", start, end)
		}
		if r.GetHoles() == nil {
			return u64Segment{}, rowIDErr("range with holes %d..%d has no holes array", start, end)
		}
		seg, err := checkPacked(r.GetHoles())
		if err != nil {
			return u64Segment{}, fmt.Errorf("range with holes: %w", err)
		}
		if err := seg.increasing(); err != nil {
			return u64Segment{}, fmt.Errorf("range with holes: %w", err)
		}
		if seg.n > 0 && (seg.packed(0) < start || seg.packed(int(seg.n)-1) >= end) {
			return u64Segment{}, rowIDErr("range with holes: a hole outside %d..%d", start, end)
		}
		// Strictly increasing holes inside the range: no more than its length.
		seg.kind, seg.start, seg.end, seg.n = segRangeWithHoles, start, end, end-start-seg.n
		return seg, nil
	case *tablepb.U64Segment_RangeWithBitmap_:
		r := x.RangeWithBitmap
		start, end, bm := r.GetStart(), r.GetEnd(), r.GetBitmap()
		if start > end {
			return u64Segment{}, rowIDErr("range with bitmap: start %d after end %d", start, end)
		}
		span := end - start
		if want := span/8 + min(span%8, 1); uint64(len(bm)) != want {
			return u64Segment{}, rowIDErr("range with bitmap %d..%d: %d bitmap bytes, want %d", start, end, len(bm), want)
		}
		if rem := span % 8; rem != 0 && bm[len(bm)-1]>>rem != 0 {
			return u64Segment{}, rowIDErr("range with bitmap %d..%d: padding bits set", start, end)
		}
		var n uint64
		for _, c := range bm {
			n += uint64(bits.OnesCount8(c))
		}
		return u64Segment{kind: segRangeWithBitmap, start: start, end: end, n: n, data: bm}, nil
	case *tablepb.U64Segment_SortedArray:
		seg, err := checkPacked(x.SortedArray)
		if err != nil {
			return u64Segment{}, fmt.Errorf("sorted array: %w", err)
		}
		if err := seg.increasing(); err != nil {
			return u64Segment{}, fmt.Errorf("sorted array: %w", err)
		}
		seg.kind = segSortedArray
		return seg, nil
	case *tablepb.U64Segment_Array:
		seg, err := checkPacked(x.Array)
		if err != nil {
			return u64Segment{}, fmt.Errorf("array: %w", err)
		}
		seg.kind = segArray
		return seg, nil
	default:
		return u64Segment{}, rowIDErr("segment of no known kind")
	}
}

// checkPacked converts an EncodedU64Array (its kind left unset), checking
// that its bytes are a whole number of values and that base plus the
// largest offset fits a uint64.
func checkPacked(pb *tablepb.EncodedU64Array) (u64Segment, error) {
	var s u64Segment
	switch x := pb.GetArray().(type) {
	case *tablepb.EncodedU64Array_U16Array_:
		s.width, s.base, s.data = 2, x.U16Array.GetBase(), x.U16Array.GetOffsets()
	case *tablepb.EncodedU64Array_U32Array_:
		s.width, s.base, s.data = 4, x.U32Array.GetBase(), x.U32Array.GetOffsets()
	case *tablepb.EncodedU64Array_U64Array_:
		s.width, s.data = 8, x.U64Array.GetValues()
	default:
		return s, rowIDErr("encoded array of no known kind")
	}
	if len(s.data)%s.width != 0 {
		return s, rowIDErr("encoded u%d array of %d bytes", 8*s.width, len(s.data))
	}
	s.n = uint64(len(s.data) / s.width)
	if s.width < 8 {
		var most uint64
		for i := range int(s.n) {
			most = max(most, s.packed(i)-s.base)
		}
		if s.base > math.MaxUint64-most {
			return s, rowIDErr("encoded u%d array: base %d plus offset %d overflows", 8*s.width, s.base, most)
		}
	}
	return s, nil
}

// increasing checks that the packed values are strictly increasing.
func (s *u64Segment) increasing() error {
	for i := 1; i < int(s.n); i++ {
		if a, b := s.packed(i-1), s.packed(i); a >= b {
			return rowIDErr("value %d at %d is not below the next one, %d", a, i-1, b)
		}
	}
	return nil
}

// versionRun is a run of rows sharing a version.
type versionRun struct {
	n, version uint64
}

// versionSeq is a decoded RowDatasetVersionSequence.
type versionSeq struct {
	runs []versionRun
	n    uint64
}

// length returns the number of rows.
func (s *versionSeq) length() uint64 { return s.n }

// values yields the version of each row in row order.
func (s *versionSeq) values() iter.Seq[uint64] {
	return func(yield func(uint64) bool) {
		for _, r := range s.runs {
			for range r.n {
				if !yield(r.version) {
					return
				}
			}
		}
	}
}

// decodeVersions decodes and checks a serialized RowDatasetVersionSequence.
// Each run's span is a U64Segment checked as in a row id sequence; only its
// length matters (the number of rows of the run). Unknown fields are
// skipped, as Lance's protobuf decoder does; a run without a span is
// corrupt, and so is a total longer than 2^64-1 rows.
func decodeVersions(b []byte) (*versionSeq, error) {
	s := &versionSeq{}
	var pb tablepb.RowDatasetVersionRun
	for i := 0; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, rowIDErr("version sequence: %v", protowire.ParseError(n))
		}
		b = b[n:]
		if num != 1 {
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return nil, rowIDErr("version sequence: %v", protowire.ParseError(n))
			}
			b = b[n:]
			continue
		}
		if typ != protowire.BytesType {
			return nil, rowIDErr("version sequence: run of wire type %d", typ)
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return nil, rowIDErr("version sequence: %v", protowire.ParseError(n))
		}
		b = b[n:]
		if err := proto.Unmarshal(v, &pb); err != nil {
			return nil, rowIDErr("version run %d: %v", i, err)
		}
		if pb.GetSpan() == nil {
			return nil, rowIDErr("version run %d has no span", i)
		}
		seg, err := checkSegment(pb.GetSpan())
		if err != nil {
			return nil, fmt.Errorf("version run %d: %w", i, err)
		}
		if s.n+seg.n < s.n {
			return nil, rowIDErr("version sequence longer than 2^64-1 rows")
		}
		s.n += seg.n
		i++
		if seg.n == 0 {
			continue
		}
		if k := len(s.runs) - 1; k >= 0 && s.runs[k].version == pb.GetVersion() {
			s.runs[k].n += seg.n
			continue
		}
		s.runs = append(s.runs, versionRun{n: seg.n, version: pb.GetVersion()})
	}
	return s, nil
}

func rowIDErr(format string, args ...any) error {
	return fmt.Errorf(format+": %w", append(args, ErrCorrupt)...)
}

// fragmentRowIDs decodes the inline row ids of f and checks there is one per
// physical row (Lance's dataset validation). Row ids kept in a data file
// column are ErrUnsupported, none at all ErrCorrupt.
func fragmentRowIDs(f *tablepb.DataFragment) (*rowIDSeq, error) {
	switch x := f.GetRowIdSequence().(type) {
	case *tablepb.DataFragment_InlineRowIds:
		s, err := decodeRowIDs(x.InlineRowIds)
		if err != nil {
			return nil, fmt.Errorf("fragment %d: %w", f.GetId(), err)
		}
		if s.length() != f.GetPhysicalRows() {
			return nil, fmt.Errorf("fragment %d: %d row ids for %d physical rows: %w", f.GetId(), s.length(), f.GetPhysicalRows(), ErrCorrupt)
		}
		return s, nil
	case *tablepb.DataFragment_ColumnRowIds:
		return nil, fmt.Errorf("fragment %d: row ids in a data file column: %w", f.GetId(), ErrUnsupported)
	default:
		return nil, fmt.Errorf("fragment %d has no row ids: %w", f.GetId(), ErrCorrupt)
	}
}

// fragmentVersions decodes the inline created-at (created) or last-updated-at
// versions of f, nil when f has none, and checks there is one per physical
// row. Versions kept in a data file column are ErrUnsupported.
func fragmentVersions(f *tablepb.DataFragment, created bool) (*versionSeq, error) {
	var b []byte
	what := "last updated"
	if created {
		what = "created"
		switch x := f.GetCreatedAtVersionSequence().(type) {
		case nil:
			return nil, nil
		case *tablepb.DataFragment_InlineCreatedAtVersions:
			b = x.InlineCreatedAtVersions
		default:
			return nil, fmt.Errorf("fragment %d: %s versions in a data file column: %w", f.GetId(), what, ErrUnsupported)
		}
	} else {
		switch x := f.GetLastUpdatedAtVersionSequence().(type) {
		case nil:
			return nil, nil
		case *tablepb.DataFragment_InlineLastUpdatedAtVersions:
			b = x.InlineLastUpdatedAtVersions
		default:
			return nil, fmt.Errorf("fragment %d: %s versions in a data file column: %w", f.GetId(), what, ErrUnsupported)
		}
	}
	s, err := decodeVersions(b)
	if err != nil {
		return nil, fmt.Errorf("fragment %d %s versions: %w", f.GetId(), what, err)
	}
	if s.length() != f.GetPhysicalRows() {
		return nil, fmt.Errorf("fragment %d: %d %s versions for %d physical rows: %w", f.GetId(), s.length(), what, f.GetPhysicalRows(), ErrCorrupt)
	}
	return s, nil
}

// Commit stamps.

// stampAppendedFragments gives the new fragments of an append (or of a new
// dataset, or an overwrite) on top of m what Lance's commit gives them when m
// uses stable row ids, in order: the row ids [m.NextRowId, +physical rows)
// inline as one Range, created-at and last-updated-at versions newVersion
// for every row, and it advances m.NextRowId past them. Without stable row
// ids it does nothing.
//
// Unlike Lance, which keeps row ids a fragment already carries (filling up a
// partial sequence, the merge-insert case), a fragment with row ids of any
// kind, or without rows, is refused (ErrInvalidOption); nothing is changed
// then.
func stampAppendedFragments(m *tablepb.Manifest, frags []*tablepb.DataFragment, newVersion uint64) error {
	if m == nil {
		return fmt.Errorf("stamp row ids: no manifest: %w", ErrInvalidOption)
	}
	if !stableRowIDs(m) {
		return nil
	}
	next := m.GetNextRowId()
	for _, f := range frags {
		switch {
		case f.GetRowIdSequence() != nil:
			return fmt.Errorf("new fragment %d already has row ids: %w", f.GetId(), ErrInvalidOption)
		case f.GetPhysicalRows() == 0:
			return fmt.Errorf("new fragment %d has no rows: %w", f.GetId(), ErrInvalidOption)
		case next > math.MaxUint64-f.GetPhysicalRows():
			return fmt.Errorf("next row id %d plus %d rows overflows: %w", next, f.GetPhysicalRows(), ErrCorrupt)
		}
		next += f.GetPhysicalRows()
	}
	next = m.GetNextRowId()
	for _, f := range frags {
		end := next + f.PhysicalRows
		f.RowIdSequence = &tablepb.DataFragment_InlineRowIds{InlineRowIds: encodeRowIDRange(next, end)}
		v := encodeUniformVersions(f.PhysicalRows, newVersion)
		f.LastUpdatedAtVersionSequence = &tablepb.DataFragment_InlineLastUpdatedAtVersions{InlineLastUpdatedAtVersions: v}
		f.CreatedAtVersionSequence = &tablepb.DataFragment_InlineCreatedAtVersions{InlineCreatedAtVersions: bytes.Clone(v)}
		next = end
	}
	m.NextRowId = next
	return nil
}

// stampMergedFragment does what Lance 14's Merge commit (add_columns, merge)
// does, on a dataset with stable row ids, to an existing fragment prev that
// comes back as merged: when merged's data files differ from prev's (another
// count, or a file whose path, fields, column indices, file version or base
// differ; sizes do not count) every row's last-updated-at version becomes
// newVersion. Row ids and created-at versions stay what merged carries. The
// row count is the physical rows, or failing those the inline row ids; with
// none nothing changes. Fragments new in the merge are stamped like appended
// ones (stampAppendedFragments).
func stampMergedFragment(prev, merged *tablepb.DataFragment, newVersion uint64) error {
	if prev.GetId() != merged.GetId() {
		return fmt.Errorf("merged fragment %d is not fragment %d: %w", merged.GetId(), prev.GetId(), ErrInvalidOption)
	}
	if !filesRewritten(prev.GetFiles(), merged.GetFiles()) {
		return nil
	}
	rows := merged.GetPhysicalRows()
	if rows == 0 {
		if x, ok := merged.GetRowIdSequence().(*tablepb.DataFragment_InlineRowIds); ok {
			s, err := decodeRowIDs(x.InlineRowIds)
			if err != nil {
				return fmt.Errorf("fragment %d: %w", merged.GetId(), err)
			}
			rows = s.length()
		}
	}
	if rows == 0 {
		return nil
	}
	merged.LastUpdatedAtVersionSequence = &tablepb.DataFragment_InlineLastUpdatedAtVersions{
		InlineLastUpdatedAtVersions: encodeUniformVersions(rows, newVersion),
	}
	return nil
}

// filesRewritten reports whether a fragment's data files changed in a way
// Lance counts as rewriting its rows.
func filesRewritten(prev, merged []*tablepb.DataFile) bool {
	if len(prev) != len(merged) {
		return true
	}
	for i, p := range prev {
		m := merged[i]
		if p.GetPath() != m.GetPath() ||
			!slices.Equal(p.GetFields(), m.GetFields()) ||
			!slices.Equal(p.GetColumnIndices(), m.GetColumnIndices()) ||
			p.GetFileMajorVersion() != m.GetFileMajorVersion() ||
			p.GetFileMinorVersion() != m.GetFileMinorVersion() ||
			(p.BaseId == nil) != (m.BaseId == nil) || p.GetBaseId() != m.GetBaseId() {
			return true
		}
	}
	return false
}
