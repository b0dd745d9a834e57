package interop

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
)

// A small raw reader of Lance manifests for the table tests: it decodes the
// protobuf by field number (Lance 14's table.proto) without planar's
// generated types, so that what a client wrote can be described (feature
// flags, deletion file types, field ids) whatever state planar's own
// manifest code is in.

// tblPB is one decoded protobuf message: for each field number, its values
// in order (varints as uint64, length-delimited fields as []byte).
type tblPB map[protowire.Number][]any

func tblPBDecode(b []byte) (tblPB, error) {
	m := tblPB{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, protowire.ParseError(n)
		}
		b = b[n:]
		switch typ {
		case protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return nil, protowire.ParseError(n)
			}
			m[num] = append(m[num], v)
			b = b[n:]
		case protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, protowire.ParseError(n)
			}
			m[num] = append(m[num], v)
			b = b[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return nil, protowire.ParseError(n)
			}
			b = b[n:]
		}
	}
	return m, nil
}

func (m tblPB) has(n protowire.Number) bool { return len(m[n]) > 0 }

func (m tblPB) uint(n protowire.Number) uint64 {
	if v, ok := tblLast(m[n]).(uint64); ok {
		return v
	}
	return 0
}

func (m tblPB) str(n protowire.Number) string {
	if v, ok := tblLast(m[n]).([]byte); ok {
		return string(v)
	}
	return ""
}

func (m tblPB) msg(n protowire.Number) tblPB {
	v, ok := tblLast(m[n]).([]byte)
	if !ok {
		return nil
	}
	out, _ := tblPBDecode(v)
	return out
}

func (m tblPB) msgs(n protowire.Number) []tblPB {
	var out []tblPB
	for _, v := range m[n] {
		if b, ok := v.([]byte); ok {
			d, _ := tblPBDecode(b)
			out = append(out, d)
		}
	}
	return out
}

// ints decodes a repeated int32 field (packed or not).
func (m tblPB) ints(n protowire.Number) []int32 {
	var out []int32
	for _, v := range m[n] {
		switch x := v.(type) {
		case uint64:
			out = append(out, int32(x))
		case []byte:
			for len(x) > 0 {
				u, k := protowire.ConsumeVarint(x)
				if k < 0 {
					break
				}
				out = append(out, int32(u))
				x = x[k:]
			}
		}
	}
	return out
}

func tblLast(v []any) any {
	if len(v) == 0 {
		return nil
	}
	return v[len(v)-1]
}

// tblRawManifest is what the table tests look at in one manifest.
type tblRawManifest struct {
	File               string
	Version            uint64
	ReaderFlags        uint64
	WriterFlags        uint64
	NextRowID          uint64
	MaxAllocatedField  *int32
	HasIndexSection    bool
	StorageVersion     string
	WriterLibrary      string
	Config             map[string]string
	Fields             []tblRawField
	Fragments          []tblRawFragment
	HasMaxFragmentID   bool
	MaxFragmentID      uint64
	TransactionFile    string
	UnknownTopLevelIDs []int
}

type tblRawField struct {
	ID, Parent int32
	Name, Type string
	Nullable   bool
}

type tblRawFragment struct {
	ID           uint64
	PhysicalRows uint64
	Files        []tblRawDataFile
	// Deletion is nil without a deletion file.
	Deletion *tblRawDeletion
	// RowIDs: the fragment carries stable row ids (inline or external).
	RowIDs bool
}

type tblRawDataFile struct {
	Path          string
	Fields        []int32
	ColumnIndices []int32
	Major, Minor  uint64
}

type tblRawDeletion struct {
	Type       string // "arrow" (ARROW_ARRAY) or "bitmap"
	NumDeleted uint64
}

// tblReadRawManifest decodes the manifest file at path.
func tblReadRawManifest(path string) (*tblRawManifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	n := uint64(len(b))
	if n < 20 || string(b[n-4:]) != "LANC" {
		return nil, fmt.Errorf("%s: not a manifest", path)
	}
	pos := binary.LittleEndian.Uint64(b[n-16:])
	if pos+4 > n-16 {
		return nil, fmt.Errorf("%s: bad manifest offset", path)
	}
	ln := uint64(binary.LittleEndian.Uint32(b[pos:]))
	if pos+4+ln > n-16 {
		return nil, fmt.Errorf("%s: bad manifest length", path)
	}
	m, err := tblPBDecode(b[pos+4 : pos+4+ln])
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	r := &tblRawManifest{
		File:             filepath.Base(path),
		Version:          m.uint(3),
		ReaderFlags:      m.uint(9),
		WriterFlags:      m.uint(10),
		NextRowID:        m.uint(14),
		HasIndexSection:  m.has(6),
		HasMaxFragmentID: m.has(11),
		MaxFragmentID:    m.uint(11),
		TransactionFile:  m.str(12),
		Config:           map[string]string{},
	}
	if m.has(24) {
		v := int32(m.uint(24))
		r.MaxAllocatedField = &v
	}
	if df := m.msg(15); df != nil {
		r.StorageVersion = df.str(2)
	}
	if wv := m.msg(13); wv != nil {
		r.WriterLibrary = wv.str(1) + " " + wv.str(2)
	}
	for _, kv := range m.msgs(16) {
		r.Config[kv.str(1)] = kv.str(2)
	}
	for _, f := range m.msgs(1) {
		r.Fields = append(r.Fields, tblRawField{ID: int32(f.uint(3)), Parent: int32(f.uint(4)), Name: f.str(2), Type: f.str(5), Nullable: f.uint(6) != 0})
	}
	for _, f := range m.msgs(2) {
		fr := tblRawFragment{ID: f.uint(1), PhysicalRows: f.uint(4), RowIDs: f.has(5) || f.has(6) || f.has(12)}
		for _, d := range f.msgs(2) {
			fr.Files = append(fr.Files, tblRawDataFile{Path: d.str(1), Fields: d.ints(2), ColumnIndices: d.ints(3), Major: d.uint(4), Minor: d.uint(5)})
		}
		if del := f.msg(3); del != nil {
			typ := "arrow"
			if del.uint(1) == 1 {
				typ = "bitmap"
			}
			fr.Deletion = &tblRawDeletion{Type: typ, NumDeleted: del.uint(4)}
		}
		r.Fragments = append(r.Fragments, fr)
	}
	known := map[protowire.Number]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 8: true, 9: true, 10: true,
		11: true, 12: true, 13: true, 14: true, 15: true, 16: true, 19: true, 20: true, 21: true, 23: true, 24: true}
	for k := range m {
		if !known[k] {
			r.UnknownTopLevelIDs = append(r.UnknownTopLevelIDs, int(k))
		}
	}
	sort.Ints(r.UnknownTopLevelIDs)
	return r, nil
}

// tblManifestFiles lists the dataset's manifest files under _versions/ by
// version: V2 names (20 digits, u64::MAX - version) and V1 names
// ("{version}.manifest").
func tblManifestFiles(dir string) (v1, v2 map[uint64]string, err error) {
	ents, err := os.ReadDir(filepath.Join(dir, "_versions"))
	if err != nil {
		return nil, nil, err
	}
	v1, v2 = map[uint64]string{}, map[uint64]string{}
	for _, e := range ents {
		digits, ok := strings.CutSuffix(e.Name(), ".manifest")
		if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" {
			continue
		}
		n, err := strconv.ParseUint(digits, 10, 64)
		if err != nil {
			continue
		}
		p := filepath.Join(dir, "_versions", e.Name())
		if len(digits) == 20 {
			v2[math.MaxUint64-n] = p
		} else {
			v1[n] = p
		}
	}
	return v1, v2, nil
}

// tblLatestRawManifest decodes the manifest of the dataset's latest version.
func tblLatestRawManifest(dir string) (*tblRawManifest, error) {
	v1, v2, err := tblManifestFiles(dir)
	if err != nil {
		return nil, err
	}
	var best uint64
	var path string
	for _, m := range []map[uint64]string{v1, v2} {
		for v, p := range m {
			if v >= best {
				best, path = v, p
			}
		}
	}
	if path == "" {
		return nil, fmt.Errorf("%s: no manifest", dir)
	}
	return tblReadRawManifest(path)
}

// String summarises the manifest on a few lines.
func (m *tblRawManifest) String() string {
	var sb strings.Builder
	alloc := "unset"
	if m.MaxAllocatedField != nil {
		alloc = strconv.Itoa(int(*m.MaxAllocatedField))
	}
	fmt.Fprintf(&sb, "%s v%d by %q storage %s reader flags %#x writer flags %#x next_row_id %d max_allocated_field_id %s index %v config %v",
		m.File, m.Version, m.WriterLibrary, m.StorageVersion, m.ReaderFlags, m.WriterFlags, m.NextRowID, alloc, m.HasIndexSection, m.Config)
	var fs []string
	for _, f := range m.Fields {
		fs = append(fs, fmt.Sprintf("%s#%d:%s", f.Name, f.ID, f.Type))
	}
	fmt.Fprintf(&sb, "\n  fields %s", strings.Join(fs, " "))
	for _, f := range m.Fragments {
		del := ""
		if f.Deletion != nil {
			del = fmt.Sprintf(" deletion %s(%d)", f.Deletion.Type, f.Deletion.NumDeleted)
		}
		var files []string
		for _, d := range f.Files {
			files = append(files, fmt.Sprintf("%v@%v/v%d.%d", d.Fields, d.ColumnIndices, d.Major, d.Minor))
		}
		fmt.Fprintf(&sb, "\n  fragment %d rows %d%s rowids %v files %s", f.ID, f.PhysicalRows, del, f.RowIDs, strings.Join(files, " "))
	}
	return sb.String()
}
