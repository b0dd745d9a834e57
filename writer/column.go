package writer

import (
	"fmt"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

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

// column buffers one leaf column (the arrays of its top-level field) and cuts
// it into pages.
type column struct {
	leaf      format.Column
	top       int // index of the top-level field
	path      []structural.Step
	keep      []bool // layers kept nullable in every page (structural.KeepNullable)
	info      leafInfo
	opts      selector.Options
	cfg       *config
	pending   []arrow.Array // top-level arrays
	pendBytes int64
	pendDict  int   // dictionary items of the pending arrays (kindDict)
	firstRow  int64 // element number of the first pending element
	onePage   bool  // never cut pages (columns below a structural FSL)
	sparse    bool  // sparse cells only (a structural FSL and a list on the path)
	pages     []*file2pb.ColumnMetadata_Page

	// scratch reused across pages
	vals, meta, data, rep, def []byte
	offsets                    []uint64
	chunkBufs                  [][]byte
	sampleData                 []byte
	sampleOffs                 []uint64
	zvals                      []byte
	zoffs                      []uint64
	nulls                      []bool
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
	c := &column{leaf: leaf, top: ti, path: path, keep: structural.KeepNullable(top, path), info: info, opts: opts, cfg: cfg}
	list := false
	for _, st := range path {
		if st.Kind == structural.StepFSL {
			// pylance 14 misreads columns below a structural fixed-size
			// list that span several pages (FORMAT.md §5b); like pylance,
			// write them as one page.
			c.onePage = true
		}
		list = list || st.Kind == structural.StepList
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

// rowBytes estimates the leaf bytes of one top-level row of a.
func (c *column) rowBytes(a arrow.Array) int64 {
	if a.Len() == 0 {
		return 1
	}
	n := int64(0)
	var walk func(d arrow.ArrayData)
	walk = func(d arrow.ArrayData) {
		for _, b := range d.Buffers() {
			if b != nil {
				n += int64(b.Len())
			}
		}
		for _, ch := range d.Children() {
			walk(ch)
		}
	}
	walk(a.Data())
	per := n / int64(a.Len())
	if per < 1 {
		per = 1
	}
	return per
}

func (c *column) append(a arrow.Array, w *Writer) error {
	per := c.rowBytes(a)
	for off := 0; off < a.Len(); {
		room := (c.cfg.maxPageBytes - c.pendBytes) / per
		if room < 1 {
			room = 1
		}
		if c.onePage {
			room = int64(a.Len())
		}
		take := int64(a.Len() - off)
		if take > room {
			take = room
		}
		var part arrow.Array
		if off == 0 && take == int64(a.Len()) {
			a.Retain()
			part = a
		} else {
			part = array.NewSlice(a, int64(off), int64(off)+take)
		}
		if c.info.kind == kindDict && len(c.pending) > 0 && !c.onePage {
			// A page's dictionary is its arrays' dictionaries back to
			// back: start a new page before the keys would overflow
			// the index type.
			if n := leafDictLen(part.Data(), c.path); c.pendDict+n > dictKeys(c.leaf.Field.Type) {
				if err := c.flush(w); err != nil {
					part.Release()
					return err
				}
			}
		}
		if c.info.kind == kindDict {
			c.pendDict += leafDictLen(part.Data(), c.path)
		}
		c.pending = append(c.pending, part)
		c.pendBytes += take * per
		off += int(take)
		if c.pendBytes >= c.cfg.maxPageBytes && !c.onePage {
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
	c.pending = nil
	c.pendDict = 0
}

// leafDictLen is the dictionary length of the leaf array reached from d by
// path (0 if there is none).
func leafDictLen(d arrow.ArrayData, path []structural.Step) int {
	for _, st := range path {
		ch := d.Children()
		switch {
		case st.Kind == structural.StepLeaf:
		case st.Kind == structural.StepStruct && st.Child < len(ch):
			d = ch[st.Child]
			continue
		case st.Kind != structural.StepStruct && len(ch) > 0:
			d = ch[0]
			continue
		default:
			return 0
		}
		break
	}
	if dict := d.Dictionary(); dict != nil {
		return dict.Len()
	}
	return 0
}

// dictKeys is how many dictionary items the index type of a dictionary
// type can address (the largest int when dt is not a dictionary).
func dictKeys(dt arrow.DataType) int {
	t, ok := dt.(*arrow.DictionaryType)
	if !ok {
		return math.MaxInt
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
	}
	return math.MaxInt
}

// encoded is one page ready to be written.
type encoded struct {
	layout *enc21pb.PageLayout   // dense and legacy pages (pb21 form)
	planar *enc23pb.PlanarLayout // pages with no pb21 form (sparse cells)
	bufs   [][]byte
	plan   selector.Plan
	desc   string
	// valueBytes is the size of the value buffers of a chunked page.
	valueBytes int
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

// flush encodes the pending arrays as one page and writes its buffers.
func (c *column) flush(w *Writer) error {
	if len(c.pending) == 0 {
		return nil
	}
	defer c.release()
	dense, segs, err := structural.BuildDenseKeep(c.pending, c.path, c.keep)
	if err != nil {
		return fmt.Errorf("page %d: %v: %w", len(c.pages), err, ErrInvalidBatch)
	}
	enc, err := c.encode(dense, segs, w.cfg.format)
	if err != nil {
		return fmt.Errorf("page %d: %w", len(c.pages), err)
	}
	pe, err := pageEncoding(enc, w.cfg.format)
	if err != nil {
		return fmt.Errorf("page %d: %w", len(c.pages), err)
	}
	page := &file2pb.ColumnMetadata_Page{Length: uint64(dense.NumRows), Priority: uint64(c.firstRow), Encoding: pe}
	total := 0
	var sizes []int
	for _, b := range enc.bufs {
		pos, err := w.sink.writeBuffer(b)
		if err != nil {
			return fmt.Errorf("page %d: %w", len(c.pages), err)
		}
		page.BufferOffsets = append(page.BufferOffsets, pos)
		page.BufferSizes = append(page.BufferSizes, uint64(len(b)))
		total += len(b)
		sizes = append(sizes, len(b))
	}
	w.report = append(w.report, PageReport{
		Column: c.leaf.Path, Page: len(c.pages), Rows: dense.NumRows,
		Cell:     enc.plan.Structure.String() + " x " + enc.plan.Values.String(),
		Encoding: enc.desc, Bytes: total, Reason: enc.plan.Reason, BufferSizes: sizes,
		Candidates: candidates(enc.plan), ValueBytes: enc.valueBytes,
	})
	if len(enc.plan.Candidates) > 0 && enc.plan.Values == selector.Chunked {
		w.report[len(w.report)-1].EstimatedValueBytes = enc.plan.Candidates[0].Bytes
	}
	c.pages = append(c.pages, page)
	c.firstRow += int64(dense.NumRows)
	c.pendBytes = 0
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
