package writer

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/file2pb"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/stats"
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
}

// Report returns one entry per written page, in file order per column.
func (w *Writer) Report() []PageReport { return w.report }

// column buffers one leaf column and cuts it into pages.
type column struct {
	leaf      format.Column
	bits      int // physical width of one value
	cfg       *config
	pending   []arrow.Array
	pendBytes int64
	firstRow  int64 // row number of the first pending row
	pages     []*file2pb.ColumnMetadata_Page

	// scratch reused across pages
	def    []uint16
	vals   []byte
	meta   []byte
	data   []byte
	levels []byte
}

// fixedWidthBits returns the physical width of types written as flat
// fixed-width values, or 0.
func fixedWidthBits(dt arrow.DataType) int {
	switch dt.ID() {
	case arrow.INT8, arrow.UINT8:
		return 8
	case arrow.INT16, arrow.UINT16:
		return 16
	case arrow.INT32, arrow.UINT32, arrow.FLOAT32, arrow.DATE32:
		return 32
	case arrow.INT64, arrow.UINT64, arrow.FLOAT64, arrow.TIMESTAMP:
		return 64
	}
	return 0
}

func newColumn(leaf format.Column, cfg *config) (*column, error) {
	bits := fixedWidthBits(leaf.Field.Type)
	if bits == 0 {
		return nil, fmt.Errorf("field %q of type %s: %w", leaf.Path, leaf.Field.Type, ErrUnsupportedType)
	}
	return &column{leaf: leaf, bits: bits, cfg: cfg}, nil
}

// validateArray checks that an array's buffers are large enough for its
// length and offset, so encoding it cannot read out of bounds.
func validateArray(a arrow.Array, name string) error {
	d := a.Data()
	bits := fixedWidthBits(d.DataType())
	if bits == 0 {
		return fmt.Errorf("column %q: array type %s: %w", name, d.DataType(), ErrInvalidBatch)
	}
	bufs := d.Buffers()
	if len(bufs) < 2 || bufs[1] == nil {
		if d.Len() == 0 {
			return nil
		}
		return fmt.Errorf("column %q: missing value buffer: %w", name, ErrInvalidBatch)
	}
	end := (d.Offset() + d.Len()) * bits / 8
	if bufs[1].Len() < end {
		return fmt.Errorf("column %q: value buffer of %d bytes, offset %d + length %d needs %d: %w", name, bufs[1].Len(), d.Offset(), d.Len(), end, ErrInvalidBatch)
	}
	if bufs[0] != nil && a.NullN() > 0 && bufs[0].Len() < int(bitutil.BytesForBits(int64(d.Offset()+d.Len()))) {
		return fmt.Errorf("column %q: validity bitmap too short: %w", name, ErrInvalidBatch)
	}
	return nil
}

func (c *column) append(a arrow.Array, w *Writer) error {
	rowBytes := int64(c.bits / 8)
	budgetRows := c.cfg.maxPageBytes / rowBytes
	if budgetRows < 1 {
		budgetRows = 1
	}
	for off := 0; off < a.Len(); {
		room := budgetRows - c.pendBytes/rowBytes
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
		c.pending = append(c.pending, part)
		c.pendBytes += take * rowBytes
		off += int(take)
		if c.pendBytes >= budgetRows*rowBytes {
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
}

// flush encodes the pending arrays as one page and writes its buffers.
func (c *column) flush(w *Writer) error {
	if len(c.pending) == 0 {
		return nil
	}
	defer c.release()
	dense := structural.FlatLeaf(c.pending, c.def)
	c.def = dense.Def
	st := stats.FixedWidth(c.pending, c.bits)
	plan := selector.Choose(st, selector.Options{})
	layout, bufs, err := c.encodeChunked(dense, plan)
	if err != nil {
		return fmt.Errorf("page %d: %w", len(c.pages), err)
	}
	enc, err := pageEncoding(layout, w.cfg.format)
	if err != nil {
		return fmt.Errorf("page %d: %w", len(c.pages), err)
	}
	page := &file2pb.ColumnMetadata_Page{Length: uint64(dense.NumRows), Priority: uint64(c.firstRow), Encoding: enc}
	total := 0
	var sizes []int
	for _, b := range bufs {
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
		Cell:     plan.Structure.String() + " x " + plan.Values.String(),
		Encoding: describePlan(plan, dense), Bytes: total, Reason: plan.Reason, BufferSizes: sizes,
	})
	c.pages = append(c.pages, page)
	c.firstRow += int64(dense.NumRows)
	c.pendBytes = 0
	return nil
}

func describePlan(p selector.Plan, d structural.Dense) string {
	s := "values=" + p.ValueComp.String()
	if d.Def != nil {
		s += " def=" + p.LevelComp.String() + "16"
	}
	return s
}

// encodeChunked writes the page as dense x chunked (mini-block bytes) with
// flat values and flat levels, and returns its pb21 description (the planar
// description is derived from it without touching the bytes).
func (c *column) encodeChunked(d structural.Dense, _ selector.Plan) (*enc21pb.PageLayout, [][]byte, error) {
	bw := c.bits / 8
	c.vals = c.vals[:0]
	row := 0
	vals := c.vals
	if len(c.pending) == 1 && c.pending[0].NullN() == 0 {
		// One array without nulls: chunk straight from the Arrow buffer.
		data := c.pending[0].Data()
		vals = data.Buffers()[1].Bytes()[data.Offset()*bw : (data.Offset()+data.Len())*bw]
	}
	for _, a := range c.pending {
		if len(c.pending) == 1 && a.NullN() == 0 {
			break
		}
		data := a.Data()
		buf := data.Buffers()[1].Bytes()
		start := len(c.vals)
		c.vals = append(c.vals, buf[data.Offset()*bw:(data.Offset()+data.Len())*bw]...)
		if a.NullN() > 0 {
			// Null slots are zeroed: readers ignore them, and zeros keep the
			// bytes deterministic and compressible.
			for i := 0; i < a.Len(); i++ {
				if a.IsNull(i) {
					clear(c.vals[start+i*bw : start+(i+1)*bw])
				}
			}
		}
		row += a.Len()
		vals = c.vals
	}
	n := d.NumVisible
	lg := values.FlatChunkLog2(c.bits)
	per := 1 << lg
	cl := values.ChunkLayout{HasDef: d.Def != nil, NumBuffers: 1, Large: true}
	c.meta, c.data = c.meta[:0], c.data[:0]
	if need := n*bw + (n/per+1)*16 + len(d.Def)*2; cap(c.data) < need {
		c.data = make([]byte, 0, need)
	}
	for start := 0; start < n; start += per {
		cnt := per
		log := lg
		if n-start < per {
			cnt = n - start
			log = 0
		}
		parts := values.ChunkParts{LogNumValues: log, Values: [][]byte{vals[start*bw : (start+cnt)*bw]}}
		if d.Def != nil {
			c.levels = values.AppendFlatLevels(c.levels[:0], d.Def[start:start+cnt])
			parts.Def = c.levels
			parts.NumLevels = cnt
		}
		var err error
		c.meta, c.data, err = values.AppendChunk(c.meta, c.data, cl, parts)
		if err != nil {
			return nil, nil, err
		}
	}
	mb := &enc21pb.MiniBlockLayout{
		ValueCompression: values.FlatEncoding(c.bits),
		Layers:           d.Layers,
		NumBuffers:       1,
		NumItems:         uint64(n),
		HasLargeChunk:    true,
	}
	if d.Def != nil {
		mb.DefCompression = values.FlatEncoding(16)
	}
	layout := &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_MiniBlockLayout{MiniBlockLayout: mb}}
	return layout, [][]byte{c.meta, c.data}, nil
}

// pageEncoding serializes a page description in the format's metadata
// flavour.
func pageEncoding(l *enc21pb.PageLayout, f Format) (*file2pb.Encoding, error) {
	var (
		b   []byte
		err error
	)
	if f.planarMetadata() {
		p, cerr := format.PlanarFromPB21(l)
		if cerr != nil {
			return nil, cerr
		}
		b, err = format.MarshalAny(format.URLPlanarLayout23, p)
	} else {
		b, err = format.MarshalAny(format.URLPageLayout21, l)
	}
	if err != nil {
		return nil, err
	}
	return &file2pb.Encoding{Location: &file2pb.Encoding_Direct{Direct: &file2pb.DirectEncoding{Encoding: b}}}, nil
}

var _ = proto.Marshal
