package reader

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/internal/bulk"
	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/enc23pb"
	"github.com/planarlance/planar/proto/file2pb"
	"github.com/planarlance/planar/proto/filepb"
	"github.com/planarlance/planar/values"
)

var (
	// ErrCorrupt is wrapped by errors caused by inconsistent file bytes.
	ErrCorrupt = format.ErrCorruptFile
	// ErrNotLance is wrapped when the bytes are not a Lance v2 file.
	ErrNotLance = format.ErrNotLance
	// ErrUnsupportedVersion is wrapped for file versions planar cannot read.
	ErrUnsupportedVersion = format.ErrUnsupportedVersion
	// ErrUnsupported is wrapped for well-formed content planar cannot decode
	// yet (a type or an encoding).
	ErrUnsupported = errors.New("planar/reader: unsupported content")
	// ErrNonCanonical is wrapped (with ErrCorrupt) for pages that break a
	// planar canonicality rule.
	ErrNonCanonical = format.ErrNonCanonical
	// ErrOutOfRange is returned for row ranges or indices outside the file.
	ErrOutOfRange = errors.New("planar/reader: row out of range")
)

// MaxPageRows is the largest page (in rows) the reader decodes.
const MaxPageRows = 1 << 31

// File is an open Lance file.
type File struct {
	// paths turns read strategies off one at a time: the zero value is
	// every strategy on, as users get it; tests and benchmarks compare
	// (export_test.go).
	paths   readPaths
	r       io.ReaderAt
	size    int64
	footer  format.Footer
	schema  *arrow.Schema
	leaves  []format.Column
	numRows int64
	columns [][]*page
	// dims are, per column, the elements of a row: the product of the
	// structural fixed-size-list dimensions on its path (page lengths
	// count elements).
	dims   []uint64
	closer io.Closer
	io     ioCounter
	// sparseCache holds the structure of the sparse pages read so far.
	sparseCache sparseCache
	// denseCache holds the addressing metadata of the dense pages read by
	// window so far.
	denseCache denseCache
}

// Open reads and validates the metadata of a Lance file of the given size.
//
// Errors wrap ErrCorrupt or ErrUnsupported (ErrNotLance and
// ErrUnsupportedVersion refine them), unless they come from r itself.
func Open(r io.ReaderAt, size int64) (*File, error) {
	if r == nil {
		return nil, fmt.Errorf("reader.Open: nil io.ReaderAt: %w", ErrCorrupt)
	}
	if size < 0 {
		return nil, fmt.Errorf("reader.Open: negative size %d: %w", size, ErrCorrupt)
	}
	f := &File{r: r, size: size}
	if err := f.open(); err != nil {
		return nil, classify(err)
	}
	return f, nil
}

// OpenPath opens a Lance file on disk; Close releases it.
func OpenPath(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	if st.IsDir() {
		fh.Close()
		return nil, fmt.Errorf("%s: %w", path, notLanceError{"a directory, not a Lance file (a Lance dataset is opened with dataset.Open)"})
	}
	f, err := Open(fh, st.Size())
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.closer = fh
	return f, nil
}

// notLanceError is ErrNotLance (and ErrCorrupt) with a message that says
// what the bytes look like instead.
type notLanceError struct{ msg string }

func (e notLanceError) Error() string   { return e.msg }
func (e notLanceError) Unwrap() []error { return []error{ErrNotLance, ErrCorrupt} }

// notLance returns the error for a file without a Lance footer, naming the
// format its bytes have when it is one a user converts from.
func (f *File) notLance(why string) error {
	head := make([]byte, min(f.size, 8))
	tail := make([]byte, min(f.size, 4))
	_, herr := f.r.ReadAt(head, 0)
	_, terr := f.r.ReadAt(tail, f.size-int64(len(tail)))
	if herr == nil && terr == nil {
		switch {
		case string(tail) == "PAR1" || bytes.HasPrefix(head, []byte("PAR1")):
			return notLanceError{"a Parquet file, not a Lance file: convert it with planar convert (or lance.write_dataset)"}
		case bytes.HasPrefix(head, []byte("ARROW1")) || bytes.HasPrefix(head, []byte{0xff, 0xff, 0xff, 0xff}):
			return notLanceError{"an Arrow IPC file, not a Lance file: convert it with planar convert"}
		}
	}
	return notLanceError{why + ": not a Lance file, or one cut short"}
}

// readPaths are a File's switches of read strategies.
type readPaths struct {
	noDenseWindows bool // partial reads of dense pages decode whole pages
	noSparseJoin   bool // a take decodes one sparse page's windows one by one
	noRawPages     bool // no straight-to-buffer read of raw page runs
	noSparsePages  bool // no straight-to-buffer read of sparse fixed-width page runs
	noFlatVariable bool // no one-buffer read of flat string page runs
	wholePageTake  int  // dense chunked takes: 0 by window count, 1 whole pages, -1 windows
}

// Close releases a file opened with OpenPath.
func (f *File) Close() error {
	if f.closer != nil {
		return f.closer.Close()
	}
	return nil
}

// Schema returns the file's Arrow schema.
func (f *File) Schema() *arrow.Schema { return f.schema }

// NumRows returns the number of rows in the file.
func (f *File) NumRows() int64 { return f.numRows }

// Version returns the footer's (major, minor) version pair.
func (f *File) Version() (uint16, uint16) { return f.footer.Major, f.footer.Minor }

// NumColumns returns the number of physical (leaf) columns.
func (f *File) NumColumns() int { return len(f.columns) }

// ColumnPath returns the dotted schema path of physical column i.
func (f *File) ColumnPath(i int) string { return f.leaves[i].Path }

func (f *File) readAt(off, n uint64) ([]byte, error) {
	if off > uint64(f.size) || n > uint64(f.size)-off {
		return nil, fmt.Errorf("range [%d, +%d) outside file of %d bytes: %w", off, n, f.size, ErrCorrupt)
	}
	b := bulk.Make(int(n))[:n] // (every byte is read over: not cleared first)
	if err := f.readInto(b, off); err != nil {
		return nil, err
	}
	return b, nil
}

// readInto fills dst with the file's bytes from off (checked by the caller
// to lie inside the file), counting the read.
func (f *File) readInto(dst []byte, off uint64) error {
	n := uint64(len(dst))
	if off > uint64(f.size) || n > uint64(f.size)-off {
		return fmt.Errorf("range [%d, +%d) outside file of %d bytes: %w", off, n, f.size, ErrCorrupt)
	}
	f.io.add(n)
	if k, err := f.r.ReadAt(dst, int64(off)); err != nil && !(errors.Is(err, io.EOF) && uint64(k) == n) {
		return shortRead(off, n, err)
	}
	return nil
}

func (f *File) open() error {
	if f.size < format.FooterSize {
		return f.notLance(fmt.Sprintf("%d bytes, shorter than a Lance footer (40)", f.size))
	}
	size := uint64(f.size)
	t, err := format.ParseTail(size, f.readAt)
	if errors.Is(err, ErrNotLance) {
		return f.notLance("no Lance footer (a Lance file ends in LANC)")
	}
	ft := t.Footer
	if err != nil && ft == (format.Footer{}) {
		return err // the footer itself could not be read
	}
	f.footer = ft
	if ft.Major != 2 || ft.Minor < 1 || ft.Minor > 3 {
		return fmt.Errorf("footer version %d.%d (planar reads 2.1, 2.2 and 2.3): %w", ft.Major, ft.Minor, ErrUnsupportedVersion)
	}
	if err != nil {
		return err
	}
	globals, cmo, n := t.Globals, t.Columns, uint64(ft.NumColumns)
	if len(globals) == 0 {
		return fmt.Errorf("no global buffers (schema expected): %w", ErrCorrupt)
	}
	for i, gb := range globals {
		if gb.Position%format.Alignment != 0 {
			return fmt.Errorf("global buffer %d at %d is not 64-byte aligned: %w", i, gb.Position, ErrCorrupt)
		}
	}
	sb, err := f.readAt(globals[0].Position, globals[0].Size)
	if err != nil {
		return err
	}
	var fd filepb.FileDescriptor
	if err := proto.Unmarshal(sb, &fd); err != nil {
		return fmt.Errorf("schema: %v: %w", err, ErrCorrupt)
	}
	f.schema, f.leaves, err = format.SchemaFromLance(fd.GetSchema())
	if err != nil {
		return err
	}
	if fd.Length > 1<<62 {
		return fmt.Errorf("row count %d: %w", fd.Length, ErrCorrupt)
	}
	f.numRows = int64(fd.Length)
	if uint64(len(f.leaves)) != n {
		return fmt.Errorf("schema has %d leaf columns, footer %d: %w", len(f.leaves), n, ErrCorrupt)
	}
	// Pages of leaves below a structural fixed-size list count elements
	// (rows times the dimensions).
	dims := make([]uint64, 0, n)
	for _, c := range f.leaves {
		dims = append(dims, uint64(c.ElementsPerRow()))
	}
	f.columns = make([][]*page, n)
	for i, r := range cmo {
		b, err := f.readAt(r.Position, r.Size)
		if err != nil {
			return err
		}
		var cm file2pb.ColumnMetadata
		if err := proto.Unmarshal(b, &cm); err != nil {
			return fmt.Errorf("column %d metadata: %v: %w", i, err, ErrCorrupt)
		}
		pages, err := f.parsePages(&cm)
		if err != nil {
			return fmt.Errorf("column %q: %w", f.leaves[i].Path, err)
		}
		var rows uint64
		for pi, p := range pages {
			if p.rows > MaxPageRows {
				return fmt.Errorf("column %q page %d has %d rows, over planar's limit of %d: %w", f.leaves[i].Path, pi, p.rows, uint64(MaxPageRows), ErrUnsupported)
			}
			p.firstRow = rows
			if rows+p.rows < rows {
				return fmt.Errorf("column %q page rows overflow: %w", f.leaves[i].Path, ErrCorrupt)
			}
			rows += p.rows
		}
		if fd.Length > 0 && dims[i] > (1<<62)/fd.Length || rows != fd.Length*dims[i] {
			return fmt.Errorf("column %q pages hold %d elements, file %d rows of %d: %w", f.leaves[i].Path, rows, fd.Length, dims[i], ErrCorrupt)
		}
		f.columns[i] = pages
	}
	f.dims = dims
	return nil
}

func (f *File) parsePages(cm *file2pb.ColumnMetadata) ([]*page, error) {
	pages := make([]*page, 0, len(cm.Pages))
	for pi, p := range cm.Pages {
		if len(p.BufferOffsets) != len(p.BufferSizes) {
			return nil, fmt.Errorf("page %d: %d buffer offsets, %d sizes: %w", pi, len(p.BufferOffsets), len(p.BufferSizes), ErrCorrupt)
		}
		pg := &page{rows: p.Length}
		for j, off := range p.BufferOffsets {
			sz := p.BufferSizes[j]
			if off > uint64(f.size) || sz > uint64(f.size)-off {
				return nil, fmt.Errorf("page %d buffer %d [%d, +%d) outside file: %w", pi, j, off, sz, ErrCorrupt)
			}
			if off%format.Alignment != 0 && sz > 0 {
				return nil, fmt.Errorf("page %d buffer %d at %d is not 64-byte aligned: %w", pi, j, off, ErrCorrupt)
			}
			pg.buffers = append(pg.buffers, format.BufferRange{Position: off, Size: sz})
		}
		direct := p.GetEncoding().GetDirect()
		if direct == nil {
			return nil, fmt.Errorf("page %d: only direct encodings are readable: %w", pi, ErrUnsupported)
		}
		name, val, err := format.UnmarshalAny(direct.Encoding)
		if err != nil {
			return nil, fmt.Errorf("page %d: %w", pi, err)
		}
		var l *enc21pb.PageLayout
		switch {
		case name == "lance.encodings21.PageLayout":
			l = &enc21pb.PageLayout{}
			if err := proto.Unmarshal(val, l); err != nil {
				return nil, fmt.Errorf("page %d layout: %v: %w", pi, err, ErrCorrupt)
			}
		case name == "lance.encodings23.PlanarLayout" && f.footer.Minor == 3:
			var pl enc23pb.PlanarLayout
			if err := proto.Unmarshal(val, &pl); err != nil {
				return nil, fmt.Errorf("page %d layout: %v: %w", pi, err, ErrCorrupt)
			}
			pg.planar = true
			pg.planarDesc = &pl
			if pl.GetStructure().GetSparse() != nil {
				pg.sparse = &pl
				if err := validateSparse(pg); err != nil {
					return nil, fmt.Errorf("page %d: %w", pi, err)
				}
				pages = append(pages, pg)
				continue
			}
			if l, err = format.PB21FromPlanar(&pl); err != nil {
				return nil, fmt.Errorf("page %d: %w", pi, err)
			}
		default:
			return nil, fmt.Errorf("page %d: encoding %q in a %d.%d file: %w", pi, name, f.footer.Major, f.footer.Minor, ErrCorrupt)
		}
		pg.layout = l
		if err := pg.validate(f.footer.Minor); err != nil {
			return nil, fmt.Errorf("page %d: %w", pi, err)
		}
		pages = append(pages, pg)
	}
	return pages, nil
}

// BufferRange is a byte range of the file: Size bytes from Position.
type BufferRange struct {
	Position uint64
	Size     uint64
}

// PageInfo describes one page for inspection.
type PageInfo struct {
	Rows     uint64
	FirstRow uint64
	Buffers  []BufferRange
	Planar   bool   // the page carried planar (2.3) metadata
	Cell     string // e.g. "dense x chunked"
	// Encoding is the page's codec trees in compact form, e.g.
	// "values=bitpack32 def=bitpack16(w=1)".
	Encoding string
	Layout   string // text form of the page's description as stored
}

// Pages lists the pages of physical column i.
func (f *File) Pages(i int) []PageInfo {
	var out []PageInfo
	for _, p := range f.columns[i] {
		desc := p.layout.String()
		if p.planarDesc != nil {
			desc = p.planarDesc.String()
		}
		bufs := make([]BufferRange, len(p.buffers))
		for k, b := range p.buffers {
			bufs[k] = BufferRange{Position: b.Position, Size: b.Size}
		}
		out = append(out, PageInfo{Rows: p.rows, FirstRow: p.firstRow, Buffers: bufs, Planar: p.planar, Cell: p.cell(), Encoding: p.encoding(), Layout: desc})
	}
	return out
}

// ReadBuffer returns the bytes of a buffer range of the file.
// The range must lie inside the file (errors wrap ErrCorrupt otherwise).
func (f *File) ReadBuffer(r BufferRange) ([]byte, error) {
	b, err := f.readAt(r.Position, r.Size)
	return b, classify(err)
}

// encoding prints the codec trees of a page.
func (p *page) encoding() string {
	if p.sparse != nil {
		var parts []string
		switch v := p.sparse.GetValues().GetCodec().(type) {
		case *enc23pb.ValuePlane_Chunked:
			s := "values=" + values.EncodingName(v.Chunked.GetCompression())
			if v.Chunked.Dictionary != nil {
				s += fmt.Sprintf(" dict=%s[%d]", values.EncodingName(v.Chunked.Dictionary), v.Chunked.NumDictionaryItems)
			}
			parts = append(parts, s)
		case *enc23pb.ValuePlane_Zipped:
			parts = append(parts, "values=per-value "+values.EncodingName(v.Zipped.GetCompression()))
		case *enc23pb.ValuePlane_Indexed:
			parts = append(parts, fmt.Sprintf("indices=%s items=per-value %s[%d]", values.EncodingName(v.Indexed.GetIndices()),
				values.EncodingName(v.Indexed.GetItems().GetCompression()), v.Indexed.GetItems().GetNumItems()))
		}
		for i, l := range p.sparse.GetStructure().GetSparse().GetLayers() {
			switch x := l.GetLayer().(type) {
			case *enc23pb.SparseStructuralLayer_List:
				parts = append(parts, fmt.Sprintf("layer%d: list positions=%s counts=%s validity=%s", i,
					values.EncodingName(x.List.GetNonEmptyPositions()), values.EncodingName(x.List.GetCounts()), values.EncodingName(x.List.GetValidity().GetPositions())))
			case *enc23pb.SparseStructuralLayer_FixedSizeList:
				parts = append(parts, fmt.Sprintf("layer%d: fsl validity=%s", i, values.EncodingName(x.FixedSizeList.GetValidity().GetPositions())))
			case *enc23pb.SparseStructuralLayer_Validity:
				parts = append(parts, fmt.Sprintf("layer%d: validity=%s", i, values.EncodingName(x.Validity.GetPositions())))
			}
		}
		return strings.Join(parts, "; ")
	}
	switch l := p.layout.GetLayout().(type) {
	case *enc21pb.PageLayout_MiniBlockLayout:
		mb := l.MiniBlockLayout
		s := "values=" + values.EncodingName(mb.ValueCompression)
		if mb.DefCompression != nil {
			s += " def=" + values.EncodingName(mb.DefCompression)
		}
		if mb.RepCompression != nil {
			s += " rep=" + values.EncodingName(mb.RepCompression)
		}
		if mb.Dictionary != nil {
			s += fmt.Sprintf(" dict=%s[%d]", values.EncodingName(mb.Dictionary), mb.NumDictionaryItems)
		}
		return s
	case *enc21pb.PageLayout_FullZipLayout:
		return "per-value " + values.EncodingName(l.FullZipLayout.ValueCompression)
	case *enc21pb.PageLayout_ConstantLayout:
		if len(l.ConstantLayout.InlineValue) > 0 {
			return fmt.Sprintf("scalar %d bytes", len(l.ConstantLayout.InlineValue))
		}
		if n := len(p.buffers); n == 1 || n == 3 {
			return fmt.Sprintf("scalar buffer %d bytes", p.buffers[0].Size)
		}
		return "no values"
	}
	return ""
}
