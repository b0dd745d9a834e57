package dataset

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/tablepb"
	"github.com/planarlance/planar/proto/txnpb"
)

// Directory and file names of a dataset, as Lance names them.
const (
	versionsDir     = "_versions"
	transactionsDir = "_transactions"
	dataDir         = "data"
	hintFile        = "latest_version_hint.json"
	manifestExt     = ".manifest"
	// A manifest file ends in a 16-byte footer: i64 LE offset of the
	// length-prefixed Manifest, i16 LE major 0, i16 LE minor 2, "LANC".
	manifestFooterLen = 16
	manifestMajor     = 0
	manifestMinor     = 2
	// maxManifestBytes bounds what is read of one manifest file.
	maxManifestBytes = 1 << 30
)

// manifestName is the V2 name of a version's manifest: u64::MAX - version,
// zero-padded to 20 digits, so that a lexicographic listing puts the newest
// version first.
func manifestName(version uint64) string {
	return fmt.Sprintf("%020d%s", uint64(math.MaxUint64)-version, manifestExt)
}

// manifestNameV1 is the V1 name of a version's manifest, "{version}.manifest"
// (every table Lance wrote up to 0.36, and pylance's
// enable_v2_manifest_paths=False). A table keeps its naming scheme: pylance
// refuses to open a table whose _versions/ mixes the two.
func manifestNameV1(version uint64) string {
	return strconv.FormatUint(version, 10) + manifestExt
}

// parseManifestName returns the version a file name under _versions/ names:
// V2 names have 20 digits, V1 names ("{version}.manifest") fewer. Detached
// versions, staging and temporary files are not versions.
func parseManifestName(name string) (uint64, bool) {
	digits, ok := strings.CutSuffix(name, manifestExt)
	if !ok || digits == "" || len(digits) > 20 {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	if len(digits) == 20 {
		return math.MaxUint64 - n, true
	}
	return n, true
}

// newUUID returns a random (version 4) UUID's bytes.
func newUUID() [16]byte {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}

func uuidString(u [16]byte) string {
	h := hex.EncodeToString(u[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// dataFileName names a new data file as Lance does: the first 3 bytes of a
// random UUID as 24 binary digits (spreading object-store prefixes), then the
// remaining 13 bytes as 26 hex digits.
func dataFileName() string {
	u := newUUID()
	var b strings.Builder
	b.Grow(50 + len(".lance"))
	for _, c := range u[:3] {
		for bit := 7; bit >= 0; bit-- {
			b.WriteByte('0' + c>>bit&1)
		}
	}
	b.WriteString(hex.EncodeToString(u[3:]))
	b.WriteString(".lance")
	return b.String()
}

// transactionFileName is "{read_version}-{uuid}.txn".
func transactionFileName(readVersion uint64, uuid string) string {
	return strconv.FormatUint(readVersion, 10) + "-" + uuid + ".txn"
}

// encodeManifestFile lays out a manifest file: an optional index section
// (copied as is), the transaction (length-prefixed, its offset recorded in
// the manifest), the length-prefixed manifest, and the footer.
func encodeManifestFile(m *tablepb.Manifest, txn *txnpb.Transaction, indexSection []byte) ([]byte, error) {
	var out []byte
	m.IndexSection = nil
	if indexSection != nil {
		off := uint64(len(out))
		m.IndexSection = &off
		out = binary.LittleEndian.AppendUint32(out, uint32(len(indexSection)))
		out = append(out, indexSection...)
	}
	m.TransactionSection = nil
	m.TransactionSectionDeprecated = nil
	if txn != nil {
		tb, err := proto.Marshal(txn)
		if err != nil {
			return nil, fmt.Errorf("encode transaction: %w", err)
		}
		off := uint64(len(out))
		m.TransactionSection = &off
		out = binary.LittleEndian.AppendUint32(out, uint32(len(tb)))
		out = append(out, tb...)
	}
	mb, err := proto.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	pos := len(out)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(mb)))
	out = append(out, mb...)
	out = binary.LittleEndian.AppendUint64(out, uint64(pos))
	out = binary.LittleEndian.AppendUint16(out, manifestMajor)
	out = binary.LittleEndian.AppendUint16(out, manifestMinor)
	out = append(out, format.Magic[:]...)
	return out, nil
}

// manifestFile is one decoded manifest file.
type manifestFile struct {
	m *tablepb.Manifest
	// indexSection is the raw IndexSection protobuf, nil when absent.
	indexSection []byte
	// v1Names is set when the manifest was found under its V1 name: the
	// next version is named the same way.
	v1Names bool
}

// nextManifestName names version v of the table whose previous manifest is
// prev (nil when creating: V2 names).
func nextManifestName(prev *manifestFile, v uint64) string {
	if prev != nil && prev.v1Names {
		return manifestNameV1(v)
	}
	return manifestName(v)
}

// decodeManifestFile parses a manifest file's bytes. Every offset and length
// is checked against the file's size.
func decodeManifestFile(b []byte) (*manifestFile, error) {
	n := uint64(len(b))
	if n < manifestFooterLen+4 {
		return nil, fmt.Errorf("manifest of %d bytes is shorter than its footer: %w", n, ErrCorrupt)
	}
	if string(b[n-4:]) != string(format.Magic[:]) {
		return nil, fmt.Errorf("manifest magic %q: %w", b[n-4:], ErrCorrupt)
	}
	pos := binary.LittleEndian.Uint64(b[n-16:])
	end := n - manifestFooterLen
	if pos > end-4 {
		return nil, fmt.Errorf("manifest offset %d past the footer at %d: %w", pos, end, ErrCorrupt)
	}
	ln := uint64(binary.LittleEndian.Uint32(b[pos:]))
	if pos+4+ln != end {
		return nil, fmt.Errorf("manifest length %d at %d does not reach the footer at %d: %w", ln, pos, end, ErrCorrupt)
	}
	m := &tablepb.Manifest{}
	if err := proto.Unmarshal(b[pos+4:end], m); err != nil {
		return nil, fmt.Errorf("decode manifest: %v: %w", err, ErrCorrupt)
	}
	mf := &manifestFile{m: m}
	if m.IndexSection != nil {
		sec, err := section(b[:pos], *m.IndexSection)
		if err != nil {
			return nil, fmt.Errorf("index section: %w", err)
		}
		mf.indexSection = sec
	}
	return mf, nil
}

// section returns the length-prefixed bytes at off within b.
func section(b []byte, off uint64) ([]byte, error) {
	n := uint64(len(b))
	if off > n || n-off < 4 {
		return nil, fmt.Errorf("offset %d outside %d bytes: %w", off, n, ErrCorrupt)
	}
	ln := uint64(binary.LittleEndian.Uint32(b[off:]))
	if ln > n-off-4 {
		return nil, fmt.Errorf("length %d at %d outside %d bytes: %w", ln, off, n, ErrCorrupt)
	}
	return b[off+4 : off+4+ln], nil
}

// readManifestVersion reads the manifest of one version.
func readManifestVersion(ctx context.Context, root *location, version uint64) (*manifestFile, error) {
	b, err := root.st.Get(ctx, versionsDir+"/"+manifestName(version))
	v1 := false
	if errors.Is(err, ErrObjectNotFound) {
		// Datasets written with V1 naming.
		v1 = true
		b, err = root.st.Get(ctx, versionsDir+"/"+manifestNameV1(version))
	}
	if errors.Is(err, ErrObjectNotFound) {
		return nil, fmt.Errorf("dataset %s version %d: %w", root, version, ErrNoVersion)
	}
	if err != nil {
		return nil, fmt.Errorf("dataset %s version %d: %w", root, version, err)
	}
	mf, err := decodeManifestFile(b)
	if err != nil {
		return nil, fmt.Errorf("dataset %s version %d: %w", root, version, err)
	}
	if mf.m.Version != version {
		return nil, fmt.Errorf("dataset %s: manifest of version %d says version %d: %w", root, version, mf.m.Version, ErrCorrupt)
	}
	mf.v1Names = v1
	return mf, nil
}

// listVersions returns the committed versions in increasing order.
func listVersions(ctx context.Context, root *location) ([]uint64, error) {
	ents, err := root.st.List(ctx, versionsDir+"/")
	if err != nil {
		if errors.Is(err, syscall.ENOTDIR) {
			return nil, fmt.Errorf("%s is a file, not a dataset directory (a lone Lance file is read with reader.OpenPath): %w", root, ErrNotFound)
		}
		return nil, fmt.Errorf("dataset %s: %w", root, err)
	}
	var vs []uint64
	for _, e := range ents {
		name, ok := strings.CutPrefix(e.Key, versionsDir+"/")
		if !ok || strings.Contains(name, "/") {
			continue
		}
		if v, ok := parseManifestName(name); ok {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return nil, fmt.Errorf("%s holds no dataset (no manifest under _versions/): %w", root, ErrNotFound)
	}
	slices.Sort(vs)
	return vs, nil
}

// latestVersion returns the newest committed version.
func latestVersion(ctx context.Context, root *location) (uint64, error) {
	vs, err := listVersions(ctx, root)
	if err != nil {
		return 0, err
	}
	return vs[len(vs)-1], nil
}

// readTransaction reads a transaction file named by a manifest.
func readTransaction(ctx context.Context, root *location, name string) (*txnpb.Transaction, error) {
	if name == "" || strings.ContainsAny(name, "/\\") {
		return nil, fmt.Errorf("transaction file name %q: %w", name, ErrCorrupt)
	}
	b, err := root.st.Get(ctx, transactionsDir+"/"+name)
	if err != nil {
		return nil, fmt.Errorf("transaction %s: %w", name, err)
	}
	t := &txnpb.Transaction{}
	if err := proto.Unmarshal(b, t); err != nil {
		return nil, fmt.Errorf("transaction %s: %v: %w", name, err, ErrCorrupt)
	}
	return t, nil
}
