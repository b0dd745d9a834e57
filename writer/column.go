package writer

import (
	"fmt"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"

	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/enc23pb"
	"github.com/planarlance/planar/proto/file2pb"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// PageReport says what was written for one page and why.
type PageReport struct {
	Column      string
	Page        int
	Rows        int
	Cell        string // e.g. "dense x chunked"
	Encoding    string // the value and level codecs
	Bytes       int    // page buffer bytes (unpadded)
	Reason      string
	BufferSizes []int
	// Candidates are the value codec trees the selector weighed for a
	// chunked page, the winner first, with their estimates.
	Candidates []Candidate
	// EstimatedValueBytes is the winner's estimated value size and
	// ValueBytes what its chunks actually hold (value buffers only, without
	// levels, chunk framing or dictionary).
	EstimatedValueBytes, ValueBytes int
}

// Candidate is one codec tree the selector considered for a page.
type Candidate struct {
	Codec     string
	Bytes     int     // estimated stored bytes
	ReadCost  float64 // estimated read work (byte-equivalents)
	WriteCost float64 // estimated encoding work (byte-equivalents)
	Cost      float64 // Bytes + λ·ReadCost + μ·WriteCost
}

// Report returns one entry per written page, in file order.
func (w *Writer) Report() []PageReport { return w.report }

// colSpec is what a leaf column's pages are encoded from besides their
// data: fixed when the writer is made, shared by the pages encoded
// concurrently.
type colSpec struct {
	leaf format.Column
	top  int // index of the top-level field
	path []structural.Step
	keep []bool // layers kept nullable in every page (structural.KeepNullable)
	// itemLayers are the item layers of nullable fields (innermost first),
	// nullable in every 2.2 zipped page with lists (structural.NullableItems).
	itemLayers []bool
	info       leafInfo
	opts       selector.Options
	cfg        *config
	onePage    bool // never cut pages (columns below a structural FSL)
	sparse     bool // sparse cells only (a structural FSL and a list on the path)
	hasLists   bool // a list layer on the path
	fslScale   int  // product of the structural FSL dimensions on the path (1: none)
}

// pageEnc encodes one page of a column: the column's spec and scratch
// buffers reused across pages (of any column: the writer keeps one pageEnc
// per page in flight, not per column). A page's encoded buffers may point
// into the scratch, so a pageEnc serves one page at a time, until it is
// written.
type pageEnc struct {
	*colSpec
	vals, meta, data, rep, def []byte
	arrays                     []arrow.Array          // the page's top-level arrays (set by pageJob.run)
	layers                     []structural.LayerData // the page's sparse layers when built without levels (structural.ListShell)
	spareData                  []byte                 // the data scratch of the trials after a first one kept its own (keepBuffers)
	stored                     []byte                 // a sparse page's stored values (compactValues)
	offsets                    []uint64
	chunkBufs                  [][]byte
	repEnc, defEnc             values.LevelEncoder // the level streams of a dense chunked page
	pieces                     []chunkScratch      // the scratch of a chunked page's pieces after the first
	sampleData                 []byte
	sampleOffs                 []uint64
	zvals                      []byte
	zoffs                      []uint64
	nulls                      []bool
	// deferZip: the dense trial of a page that a sparse trial follows
	// writes no fixed-width zipped records, only their lengths
	// (encoded.later), until the page keeps it.
	deferZip bool
}

// column buffers one leaf column (the arrays of its top-level field) and cuts
// it into pages.
type column struct {
	*colSpec
	pending   []arrow.Array // top-level arrays
	pendBytes int64
	// pendDicts are the dictionaries of the pending arrays (dictionary
	// columns) and pendDictLen their entries: the page dictionary.
	pendDicts   []arrow.ArrayData
	pendDictLen int
	union       *dictUnion // dictionary columns with 8/16-bit keys
	firstRow    int64      // element number of the first pending element
	pendArrow   int64      // Arrow bytes covered by the pending arrays (null rows' items included)
	cut         int        // pages cut so far (written or in flight)
	pages       []*file2pb.ColumnMetadata_Page
	// nullRowBytes > 0: long null runs are cut into all-null pages of
	// their own (selector.MinNullRun; nullruns.go), a null row holding
	// that much payload otherwise. pendNull says the pending page is such
	// a page, of pendNullRows rows; nulls is the shared all-null block
	// its arrays point to; spans and runs are scratch for a batch's runs.
	nullRowBytes int
	cutWork      selector.CutWork // the read work of the rows so far (selector.MinNullRun)
	spans        []rowSpan
	runs         []int64
	pendNull     bool
	pendNullRows int64
	nulls        arrow.Array
}

func newColumn(leaf format.Column, top arrow.Field, ti int, path []structural.Step, cfg *config) (*column, error) {
	var info leafInfo
	var err error
	if structural.Packed(leaf.Field) {
		info, err = packedInfo(leaf.Field.Type.(*arrow.StructType))
	} else {
		info, err = classifyLeaf(leaf.Field.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("field %q: %v: %w", leaf.Path, err, ErrUnsupportedType)
	}
	fields := []arrow.Field{top}
	if leaf.Path != top.Name {
		fields = append(fields, leaf.Field)
	}
	opts, err := selectorOptions(leaf.Path, fields, info, cfg)
	if err != nil {
		return nil, err
	}
	c := &column{colSpec: &colSpec{leaf: leaf, top: ti, path: path, keep: structural.KeepNullable(top, path), itemLayers: structural.NullableItemLayers(top, path), info: info, opts: opts, cfg: cfg}}
	if info.kind == values.KindDict {
		c.union = newDictUnion(leaf.Field.Type)
	}
	c.fslScale = structural.ElementsPerRow(path)
	// pylance 14 misreads columns below a structural fixed-size list that
	// span several pages (FORMAT.md §5b); like pylance, write them as one
	// page.
	c.onePage = structural.HasStep(path, structural.StepFSL)
	list := structural.HasStep(path, structural.StepList)
	c.hasLists = list
	if rb := nullRowPayload(info); leaf.Path == top.Name && !c.onePage && !cfg.format.planarMetadata() && selector.CutsNullRuns(rb, opts) {
		// A top-level column of wide fixed-width rows in 2.2: the
		// selector says which null runs get pages of their own.
		c.nullRowBytes = rb
		c.cutWork = selector.NewCutWork()
	}
	if c.onePage && list {
		// Lance 14 reads a structural FSL combined with a list only from
		// sparse structure (FORMAT.md §5b).
		if !cfg.format.planarMetadata() {
			return nil, fmt.Errorf("field %q: a fixed-size list of structs combined with a list needs format 2.3 (Lance's dense reader does not support FSL<...List<...>>): %w", leaf.Path, ErrUnsupportedType)
		}
		c.sparse = true
	}
	return c, nil
}

// coveredBytes estimates the bytes of top-level array a that its slots
// cover: the validity bits, values, offsets and child values of slots
// [offset, offset+len) of each array, following list offsets down, not the
// whole buffers behind a slice (issue #9). It is O(number of arrays in the
// type), not O(values). At least 1.
func coveredBytes(a arrow.Array, full bool) int64 {
	if a.Len() == 0 {
		return 1
	}
	return max(1, (coveredBits(a.Data(), 0, a.Len(), full)+7)/8)
}

// coveredBits is coveredBytes in bits for logical slots [s, e) of d (a
// validated array).
func coveredBits(d arrow.ArrayData, s, e int, full bool) int64 {
	n := int64(e - s)
	if n <= 0 {
		return 0
	}
	off := d.Offset()
	var bits int64
	if validity(d) != nil {
		bits += n
	}
	offsets := func(w int) (int, int) {
		b := d.Buffers()[1].Bytes()
		if w == 32 {
			o := arrow.Int32Traits.CastFromBytes(b)
			return int(o[off+s]), int(o[off+e])
		}
		o := arrow.Int64Traits.CastFromBytes(b)
		return int(o[off+s]), int(o[off+e])
	}
	switch t := storageType(d.DataType()).(type) {
	case *arrow.NullType:
	case *arrow.BooleanType:
		bits += n
	case *arrow.StringType, *arrow.BinaryType, *arrow.LargeStringType, *arrow.LargeBinaryType:
		w := 32
		if t.ID() == arrow.LARGE_STRING || t.ID() == arrow.LARGE_BINARY {
			w = 64
		}
		lo, hi := offsets(w)
		bits += (n+1)*int64(w) + 8*int64(hi-lo)
	case *arrow.ListType, *arrow.LargeListType, *arrow.MapType:
		w := 32
		if t.ID() == arrow.LARGE_LIST {
			w = 64
		}
		lo, hi := offsets(w)
		bits += (n+1)*int64(w) + coveredBits(d.Children()[0], lo, hi, full)
	case *arrow.FixedSizeListType:
		dim := int(t.Len())
		vb := validity(d)
		if full || vb == nil || d.NullN() == 0 {
			bits += coveredBits(d.Children()[0], (off+s)*dim, (off+e)*dim, full)
			break
		}
		// The items of null rows are no data: a page that may be stored
		// sparse holds only the valid rows' items.
		for i := s; i < e; {
			if !bitutil.BitIsSet(vb, off+i) {
				i++
				continue
			}
			j := i + 1
			for j < e && bitutil.BitIsSet(vb, off+j) {
				j++
			}
			bits += coveredBits(d.Children()[0], (off+i)*dim, (off+j)*dim, full)
			i = j
		}
	case *arrow.StructType:
		for _, c := range d.Children() {
			bits += coveredBits(c, off+s, off+e, full)
		}
	case *arrow.DictionaryType:
		bits += n * int64(t.IndexType.(arrow.FixedWidthDataType).BitWidth())
		// The dictionary is stored once per page; n slots reference at most
		// n of its entries.
		if dict := d.Dictionary(); dict.Len() > 0 {
			db := coveredBits(dict, 0, dict.Len(), full)
			if n < int64(dict.Len()) {
				db = db * n / int64(dict.Len())
			}
			bits += db
		}
	case arrow.FixedWidthDataType:
		bits += n * int64(t.BitWidth())
	}
	return bits
}

// settleNullCounts makes the null count of a and of every array inside it
// known. Arrow counts an unknown one on first use and stores it in the
// array's data, which pages encoded side by side share (the leaves of one
// struct, a slice's children): counted here, on the writing goroutine, the
// page jobs only read it.
func settleNullCounts(a arrow.Array) {
	a.NullN()
	switch t := a.(type) {
	case *array.Struct:
		for i := 0; i < t.NumField(); i++ {
			settleNullCounts(t.Field(i))
		}
	case array.ListLike:
		settleNullCounts(t.ListValues())
	case *array.Dictionary:
		settleNullCounts(t.Dictionary())
	case array.ExtensionArray:
		settleNullCounts(t.Storage())
	}
}

// nullRowPayload is the payload bytes a null row of a top-level leaf holds
// in a dense page: its fixed width (0 for other kinds).
func nullRowPayload(info leafInfo) int {
	if info.kind != values.KindFSL && info.kind != values.KindFixed {
		return 0
	}
	return info.rowBits() / 8
}

// append adds a top-level array to the column, cutting pages as it goes.
func (c *column) append(a arrow.Array, w *Writer) error {
	if c.nullRowBytes > 0 {
		return c.appendRuns(a, w)
	}
	return c.appendValid(a, w)
}

// appendValid adds a top-level array to the pending page, cutting pages by
// size.
func (c *column) appendValid(a arrow.Array, w *Writer) error {
	rows := int64(a.Len())
	// Pages that may be stored sparse (2.3, no dense encoding asked) are
	// cut on the items of valid fixed-size-list rows only, as those are
	// what a sparse page stores.
	// Under the lance policy pages are cut as Lance cuts them: arrays are
	// not split (a page ends once it holds the budget, whole arrays, up to
	// pendingArrowFactor budgets of Arrow data), and every row counts at its
	// full Arrow size.
	lance := c.opts.Policy == selector.PolicyLance
	full := lance || !c.cfg.format.planarMetadata() || c.opts.Structural == selector.StructuralMiniBlock || c.opts.Structural == selector.StructuralFullZip
	split := c.cfg.maxPageBytes
	if lance {
		split = pendingArrowFactor * c.cfg.maxPageBytes
	}
	total := coveredBytes(a, full)
	arrowBytes := total
	if !full {
		arrowBytes = coveredBytes(a, true)
	}
	// bytesOf is the share of total of k rows (rounded up, so that every
	// row counts).
	bytesOf := func(k int64) int64 {
		return int64(math.Ceil(float64(total) * float64(k) / float64(rows)))
	}
	for off := int64(0); off < rows; {
		room := int64(float64(split-c.pendBytes) * float64(rows) / float64(total))
		if room < 1 {
			room = 1
		}
		if c.onePage {
			room = rows
		}
		take := min(rows-off, room)
		if err := c.noteDictionary(a, w); err != nil {
			return err
		}
		var part arrow.Array
		if off == 0 && take == rows {
			a.Retain()
			part = a
		} else {
			part = array.NewSlice(a, off, off+take)
		}
		settleNullCounts(part)
		c.pending = append(c.pending, part)
		c.pendBytes += bytesOf(take)
		c.pendArrow += int64(math.Ceil(float64(arrowBytes) * float64(take) / float64(rows)))
		off += take
		// A page also ends when the Arrow data it holds reaches
		// pendingArrowFactor budgets (null rows of wide values that a
		// sparse page does not store still take memory until it is
		// written).
		if (c.pendBytes >= c.cfg.maxPageBytes || c.pendArrow >= pendingArrowFactor*c.cfg.maxPageBytes) && !c.onePage {
			if err := c.flush(w); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *column) release() {
	for _, a := range c.pending {
		a.Release()
	}
	if c.nulls != nil {
		c.nulls.Release()
		c.nulls = nil
	}
	c.pendNull, c.pendNullRows = false, 0
	c.pending = nil
	c.pendDicts = c.pendDicts[:0]
	c.pendDictLen = 0
}

// noteDictionary adds the dictionary of a (a dictionary column's top-level
// array) to the pending page's, first flushing the page when the page
// dictionary would grow past what the column's index type can address (the
// page's keys are offsets into all its arrays' dictionaries back to back).
func (c *column) noteDictionary(a arrow.Array, w *Writer) error {
	if c.info.kind != values.KindDict {
		return nil
	}
	dict := leafDictionary(a, c.path)
	if dict == nil || slices.Contains(c.pendDicts, dict) {
		return nil
	}
	if len(c.pending) > 0 && !c.onePage && uint64(c.pendDictLen+dict.Len()) > maxKeys(c.leaf.Field.Type) {
		if err := c.flush(w); err != nil {
			return err
		}
	}
	c.pendDicts = append(c.pendDicts, dict)
	c.pendDictLen += dict.Len()
	return nil
}

// maxKeys is how many dictionary entries keys of a dictionary type's index
// type can address.
func maxKeys(dt arrow.DataType) uint64 {
	t, ok := storageType(dt).(*arrow.DictionaryType)
	if !ok {
		return math.MaxUint64
	}
	switch t.IndexType.ID() {
	case arrow.INT8:
		return math.MaxInt8 + 1
	case arrow.UINT8:
		return math.MaxUint8 + 1
	case arrow.INT16:
		return math.MaxInt16 + 1
	case arrow.UINT16:
		return math.MaxUint16 + 1
	case arrow.INT32:
		return math.MaxInt32 + 1
	case arrow.UINT32:
		return math.MaxUint32 + 1
	case arrow.INT64:
		return math.MaxInt64
	}
	return math.MaxUint64
}

// encoded is one page ready to be written.
type encoded struct {
	layout *enc21pb.PageLayout   // dense and legacy pages (pb21 form)
	planar *enc23pb.PlanarLayout // pages with no pb21 form (sparse cells)
	bufs   [][]byte
	// parts, when not nil, is buffer 1 (nil in bufs) in pieces written
	// back to back: a chunked page whose chunks are its values as they
	// are, written from where they lie (chunkHeads).
	parts [][]byte
	plan  selector.Plan
	desc  string
	// valueBytes is the size of the value buffers of a chunked page.
	valueBytes int
	// later, when not nil, writes bufs, whose lengths laterLens gives
	// now (pageEnc.deferZip).
	later     func() ([][]byte, error)
	laterLens []int
}

func candidates(p selector.Plan) []Candidate {
	if p.Values != selector.Chunked {
		return nil
	}
	out := make([]Candidate, len(p.Candidates))
	for i, c := range p.Candidates {
		out[i] = Candidate{Codec: c.Codec.Name(), Bytes: c.Bytes, ReadCost: c.ReadCost, WriteCost: c.WriteCost, Cost: c.Cost}
	}
	return out
}

// flush cuts the pending arrays as one page and hands it to the writer's
// pipeline, which encodes it (perhaps concurrently) and writes it in turn.
func (c *column) flush(w *Writer) error {
	if len(c.pending) == 0 {
		return nil
	}
	j := &pageJob{col: c, index: c.cut, firstRow: c.firstRow, arrays: c.pending, enc: w.pipe.encoder(c.colSpec)}
	for _, a := range c.pending {
		c.firstRow += int64(a.Len() * c.fslScale)
	}
	c.pending = nil
	c.pendDicts = c.pendDicts[:0]
	c.pendDictLen = 0
	c.pendBytes, c.pendArrow = 0, 0
	c.pendNull, c.pendNullRows = false, 0
	c.cut++
	if err := w.pipe.submit(j, w); err != nil {
		return err
	}
	return nil
}

// writePage writes an encoded page's buffers and records its metadata.
func (c *column) writePage(j *pageJob, w *Writer) error {
	enc := j.out
	page := &file2pb.ColumnMetadata_Page{Length: uint64(j.rows), Priority: uint64(j.firstRow), Encoding: j.pe}
	total := 0
	var sizes []int
	for i, b := range enc.bufs {
		parts := [][]byte{b}
		if i == 1 && enc.parts != nil {
			parts = enc.parts
		}
		pos, n, err := w.sink.writeBufferParts(parts)
		if err != nil {
			return err
		}
		page.BufferOffsets = append(page.BufferOffsets, pos)
		page.BufferSizes = append(page.BufferSizes, uint64(n))
		total += n
		sizes = append(sizes, n)
	}
	w.report = append(w.report, PageReport{
		Column: c.leaf.Path, Page: j.index, Rows: j.rows,
		Cell:     enc.plan.Structure.String() + " x " + enc.plan.Values.String(),
		Encoding: enc.desc, Bytes: total, Reason: enc.plan.Reason, BufferSizes: sizes,
		Candidates: candidates(enc.plan), ValueBytes: enc.valueBytes,
	})
	if len(enc.plan.Candidates) > 0 && enc.plan.Values == selector.Chunked {
		w.report[len(w.report)-1].EstimatedValueBytes = enc.plan.Candidates[0].Bytes
	}
	c.pages = append(c.pages, page)
	return nil
}

// pageEncoding serializes a page description in the format's metadata
// flavour.
func pageEncoding(enc encoded, f Format) (*file2pb.Encoding, error) {
	var (
		b   []byte
		err error
	)
	l := enc.layout
	switch {
	case enc.planar != nil:
		b, err = format.MarshalAny(format.URLPlanarLayout23, enc.planar)
	case f.planarMetadata():
		p, cerr := format.PlanarFromPB21(l)
		if cerr != nil {
			return nil, cerr
		}
		b, err = format.MarshalAny(format.URLPlanarLayout23, p)
	default:
		b, err = format.MarshalAny(format.URLPageLayout21, l)
	}
	if err != nil {
		return nil, err
	}
	return &file2pb.Encoding{Location: &file2pb.Encoding_Direct{Direct: &file2pb.DirectEncoding{Encoding: b}}}, nil
}

var _ = values.ErrCorrupt

// pendingArrowFactor bounds the Arrow bytes a page may hold, in page
// budgets, when its budget counts only the values a sparse page stores.
const pendingArrowFactor = 32
