// Package format holds the on-disk facts of the Lance container shared by the
// writer and the reader: the footer, the offset tables, the protobuf Any
// wrapping with Lance's exact type URLs, the schema (Arrow <-> Lance fields and
// logical type strings) and the rule that maps schema leaves to physical
// columns.
package format

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// Exact type URLs Lance writes (leading slash, no host).
const (
	URLPageLayout21   = "/lance.encodings21.PageLayout"
	URLPlanarLayout23 = "/lance.encodings23.PlanarLayout"
	URLColumnEncoding = "/lance.encodings.ColumnEncoding"
)

// Magic is the last four bytes of every Lance file.
var Magic = [4]byte{'L', 'A', 'N', 'C'}

// FooterSize is the size of the fixed footer at the end of a file.
const FooterSize = 40

// Alignment is the alignment of every page buffer and global buffer.
const Alignment = 64

// PadByte fills the gap after a buffer up to the next alignment boundary.
const PadByte = 0x48

// ErrNotLance is wrapped when bytes are not a Lance v2 file at all.
var ErrNotLance = errors.New("planar: not a Lance file")

// ErrCorruptFile is wrapped when a Lance file's container metadata is
// inconsistent (bad offsets, truncated tables, undecodable protobufs).
var ErrCorruptFile = errors.New("planar: corrupt Lance file")

// ErrNonCanonical is wrapped (together with ErrCorruptFile) when a page
// breaks one of the planar canonicality rules: sparse structure where every
// layer is all-valid, dense x constant / dense x none under non-trivial
// structure, level streams that disagree with the layers.
var ErrNonCanonical = errors.New("planar: page is not in canonical form")

// nonCanonical builds a canonicality error.
func nonCanonical(format string, args ...any) error {
	return fmt.Errorf("%s: %w (%w)", fmt.Sprintf(format, args...), ErrNonCanonical, ErrCorruptFile)
}

// ErrUnsupportedVersion is wrapped when the footer names a version planar
// does not read.
var ErrUnsupportedVersion = errors.New("planar: unsupported Lance file version")

// Footer is the fixed 40-byte trailer of a file.
type Footer struct {
	ColumnMetaStart  uint64 // A: first byte of column 0's metadata
	ColumnMetaOffset uint64 // B: position of the column-metadata offset table
	GlobalBufOffset  uint64 // C: position of the global-buffer offset table
	NumGlobalBuffers uint32
	NumColumns       uint32
	Major, Minor     uint16
}

// AppendFooter appends the 40 footer bytes.
func AppendFooter(dst []byte, f Footer) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, f.ColumnMetaStart)
	dst = binary.LittleEndian.AppendUint64(dst, f.ColumnMetaOffset)
	dst = binary.LittleEndian.AppendUint64(dst, f.GlobalBufOffset)
	dst = binary.LittleEndian.AppendUint32(dst, f.NumGlobalBuffers)
	dst = binary.LittleEndian.AppendUint32(dst, f.NumColumns)
	dst = binary.LittleEndian.AppendUint16(dst, f.Major)
	dst = binary.LittleEndian.AppendUint16(dst, f.Minor)
	return append(dst, Magic[:]...)
}

// ParseFooter decodes the last 40 bytes of a file.
func ParseFooter(b []byte) (Footer, error) {
	if len(b) != FooterSize {
		return Footer{}, fmt.Errorf("footer is %d bytes, want %d: %w", len(b), FooterSize, ErrNotLance)
	}
	if [4]byte(b[36:40]) != Magic {
		return Footer{}, fmt.Errorf("missing LANC magic: %w", ErrNotLance)
	}
	le := binary.LittleEndian
	return Footer{
		ColumnMetaStart:  le.Uint64(b[0:]),
		ColumnMetaOffset: le.Uint64(b[8:]),
		GlobalBufOffset:  le.Uint64(b[16:]),
		NumGlobalBuffers: le.Uint32(b[24:]),
		NumColumns:       le.Uint32(b[28:]),
		Major:            le.Uint16(b[32:]),
		Minor:            le.Uint16(b[34:]),
	}, nil
}

// BufferRange is one entry of an offset table.
type BufferRange struct {
	Position, Size uint64
}

// AppendOffsetTable appends 16 bytes per entry.
func AppendOffsetTable(dst []byte, rs []BufferRange) []byte {
	for _, r := range rs {
		dst = binary.LittleEndian.AppendUint64(dst, r.Position)
		dst = binary.LittleEndian.AppendUint64(dst, r.Size)
	}
	return dst
}

// ParseOffsetTable decodes n entries and checks each lies inside [0, limit).
func ParseOffsetTable(b []byte, n int, limit uint64) ([]BufferRange, error) {
	if len(b) != 16*n {
		return nil, fmt.Errorf("offset table is %d bytes, want %d: %w", len(b), 16*n, ErrCorruptFile)
	}
	out := make([]BufferRange, n)
	for i := range out {
		p := binary.LittleEndian.Uint64(b[16*i:])
		s := binary.LittleEndian.Uint64(b[16*i+8:])
		if p > limit || s > limit-p {
			return nil, fmt.Errorf("offset table entry %d [%d, +%d) outside [0, %d): %w", i, p, s, limit, ErrCorruptFile)
		}
		out[i] = BufferRange{p, s}
	}
	return out, nil
}

// MarshalAny wraps a message in a google.protobuf.Any with Lance's exact type
// URL and returns the serialized Any. anypb.New is not used because it
// prepends a host to the URL.
func MarshalAny(url string, m proto.Message) ([]byte, error) {
	v, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, err
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(&anypb.Any{TypeUrl: url, Value: v})
}

// UnmarshalAny decodes a serialized Any and returns its type URL's last path
// segment (the full message name) and value bytes. Like Lance, it accepts any
// prefix before the last '/'.
func UnmarshalAny(b []byte) (name string, value []byte, err error) {
	var a anypb.Any
	if err := proto.Unmarshal(b, &a); err != nil {
		return "", nil, fmt.Errorf("decoding Any: %v: %w", err, ErrCorruptFile)
	}
	i := strings.LastIndexByte(a.TypeUrl, '/')
	if i < 0 || i == len(a.TypeUrl)-1 {
		return "", nil, fmt.Errorf("bad type URL %q: %w", a.TypeUrl, ErrCorruptFile)
	}
	return a.TypeUrl[i+1:], a.Value, nil
}

// PadLen returns the number of bytes needed to pad n to a multiple of a.
func PadLen(n uint64, a uint64) uint64 {
	return (a - n%a) % a
}
