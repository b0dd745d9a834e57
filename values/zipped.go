package values

import (
	"encoding/binary"
	"fmt"
	mbits "math/bits"

	"github.com/planarlance/planar/internal/bulk"
)

// Zipped pages (Lance "full-zip" bytes) store one record per rep/def entry:
// a small control word packing the entry's repetition and definition levels,
// followed by the entry's value bytes when it is visible. Page buffer 0 holds
// the records back to back; page buffer 1, when present, is the repetition
// index (byte offset of every row start).

// zipMaxLevelBits bounds BitsRep and BitsDef: levels are u16.
const zipMaxLevelBits = 16

// ZipLevels describes the control words of a zipped page.
type ZipLevels struct {
	// BitsRep and BitsDef are the level widths recorded in the protobuf
	// (FullZipLayout.bits_rep / bits_def). The control word is 0 bytes when
	// their sum is 0, 1 byte when it is ≤ 8, 2 bytes when ≤ 16, else 4.
	BitsRep, BitsDef int
	// MaxRep is R, the number of list layers. With BitsRep > 0 an entry
	// starts a new row iff its rep level equals MaxRep; with BitsRep == 0
	// every entry is a row and MaxRep is ignored.
	MaxRep int
	// MaxVisibleDef is max_visible_level: with BitsRep > 0 an entry is
	// visible iff its def level is ≤ MaxVisibleDef. Without repetition every
	// entry is visible and MaxVisibleDef is ignored.
	MaxVisibleDef int
}

// WordBytes returns the size in bytes of one control word.
func (l ZipLevels) WordBytes() int {
	switch t := l.BitsRep + l.BitsDef; {
	case t <= 0:
		return 0
	case t <= 8:
		return 1
	case t <= 16:
		return 2
	default:
		return 4
	}
}

// check validates the widths and limits; the caller wraps the error.
func (l ZipLevels) check() error {
	if l.BitsRep < 0 || l.BitsRep > zipMaxLevelBits || l.BitsDef < 0 || l.BitsDef > zipMaxLevelBits {
		return fmt.Errorf("control word widths rep %d / def %d bits out of range 0..%d", l.BitsRep, l.BitsDef, zipMaxLevelBits)
	}
	if l.BitsRep > 0 && (l.MaxRep < 1 || l.MaxRep >= 1<<l.BitsRep) {
		return fmt.Errorf("max repetition level %d does not fit %d rep bits", l.MaxRep, l.BitsRep)
	}
	if l.BitsRep > 0 && l.MaxVisibleDef < 0 {
		return fmt.Errorf("max visible definition level %d is negative", l.MaxVisibleDef)
	}
	return nil
}

// LevelWidths returns the control word widths (bitsRep, bitsDef) Lance writes
// for the given level streams: the bit length of the largest level present,
// 0 when a stream is absent (nil) or all zero.
func LevelWidths(rep, def []uint16) (int, int) {
	return zipMaxBits(rep), zipMaxBits(def)
}

func zipMaxBits(levels []uint16) int {
	var m uint16
	for _, v := range levels {
		m = max(m, v)
	}
	return mbits.Len16(m)
}

// LegacyPhantomControlWords reports whether a fixed-width zipped page whose
// protobuf says bits_rep = bits_def = 0 was written by a pre-fix Lance writer
// (before lance-format/lance PR #9018) that nevertheless put a 1-byte 0x00
// control word in front of every value: its data buffer is
// numItems × (width + 1) bytes instead of numItems × width. Call it only for
// pages with BitsRep+BitsDef == 0; the sizes of the two forms never coincide
// when numItems > 0. Such a page can be salvaged by parsing it with
// ZipLevels{BitsDef: 1} and ignoring the (all-zero) Def levels.
func LegacyPhantomControlWords(dataLen, numItems, width int) bool {
	if dataLen <= 0 || numItems <= 0 || width <= 0 || width == int(^uint(0)>>1) {
		return false
	}
	rec := width + 1
	return dataLen%rec == 0 && dataLen/rec == numItems
}

// zipIndexWidth returns the byte width Lance's byte packer picks for a
// repetition index whose largest value is bounded by maxVal (0: no index).
func zipIndexWidth(maxVal uint64) int {
	switch {
	case maxVal == 0:
		return 0
	case maxVal <= 0xFF:
		return 1
	case maxVal <= 0xFFFF:
		return 2
	case maxVal <= 0xFFFFFFFF:
		return 4
	default:
		return 8
	}
}

func zipPutUint(b []byte, w int, v uint64) {
	switch w {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, v)
	}
}

func zipGetUint(b []byte, w int) uint64 {
	switch w {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	default:
		return binary.LittleEndian.Uint64(b)
	}
}

func zipAppendWord(dst []byte, cw int, word uint32) []byte {
	switch cw {
	case 1:
		return append(dst, byte(word))
	case 2:
		return binary.LittleEndian.AppendUint16(dst, uint16(word))
	case 4:
		return binary.LittleEndian.AppendUint32(dst, word)
	}
	return dst
}

// zipEncPlan is the validated shape of the entries an encoder is handed.
type zipEncPlan struct {
	entries, visible, valid, rows int
}

// zipPlan validates the levels against l and counts entries, visible
// entries, valid visible entries and rows. n is the entry count when both
// streams are nil; otherwise it must be 0 or equal the stream length.
func zipPlan(l ZipLevels, rep, def []uint16, n int) (zipEncPlan, error) {
	var p zipEncPlan
	if err := l.check(); err != nil {
		return p, fmt.Errorf("%v: %w", err, ErrNotApplicable)
	}
	if l.BitsRep > 0 && rep == nil {
		return p, fmt.Errorf("%d rep bits but no repetition levels: %w", l.BitsRep, ErrNotApplicable)
	}
	if l.BitsDef > 0 && def == nil {
		return p, fmt.Errorf("%d def bits but no definition levels: %w", l.BitsDef, ErrNotApplicable)
	}
	switch {
	case rep != nil && def != nil && len(rep) != len(def):
		return p, fmt.Errorf("%d repetition levels but %d definition levels: %w", len(rep), len(def), ErrNotApplicable)
	case rep != nil:
		p.entries = len(rep)
	case def != nil:
		p.entries = len(def)
	default:
		if n < 0 {
			return p, fmt.Errorf("negative entry count %d: %w", n, ErrNotApplicable)
		}
		p.entries = n
	}
	if (rep != nil || def != nil) && n != 0 && n != p.entries {
		return p, fmt.Errorf("entry count %d disagrees with %d levels: %w", n, p.entries, ErrNotApplicable)
	}
	if l.BitsRep == 0 {
		for i, r := range rep {
			if r != 0 {
				return p, fmt.Errorf("repetition level %d at entry %d with 0 rep bits: %w", r, i, ErrNotApplicable)
			}
		}
	} else {
		for i, r := range rep {
			if int(r) > l.MaxRep {
				return p, fmt.Errorf("repetition level %d at entry %d exceeds max %d: %w", r, i, l.MaxRep, ErrNotApplicable)
			}
		}
		if len(rep) > 0 && int(rep[0]) != l.MaxRep {
			return p, fmt.Errorf("first entry has repetition level %d, a page must start a row (%d): %w", rep[0], l.MaxRep, ErrNotApplicable)
		}
	}
	defLimit := uint16(1<<l.BitsDef - 1)
	for i, d := range def {
		if d > defLimit {
			return p, fmt.Errorf("definition level %d at entry %d does not fit %d def bits: %w", d, i, l.BitsDef, ErrNotApplicable)
		}
	}
	if l.BitsRep == 0 {
		p.visible, p.rows = p.entries, p.entries
		p.valid = p.entries
		if l.BitsDef > 0 {
			for _, d := range def {
				if d != 0 {
					p.valid--
				}
			}
		}
		return p, nil
	}
	for i := 0; i < p.entries; i++ {
		if int(rep[i]) == l.MaxRep {
			p.rows++
		}
		var d uint16
		if l.BitsDef > 0 {
			d = def[i]
		}
		if int(d) <= l.MaxVisibleDef {
			p.visible++
			if d == 0 {
				p.valid++
			}
		}
	}
	return p, nil
}

// zipWord returns entry i's control word and whether it starts a row, is
// visible and is valid.
func zipWord(l ZipLevels, rep, def []uint16, i int) (word uint32, row, visible, valid bool) {
	var r, d uint16
	if l.BitsRep > 0 {
		r = rep[i]
	}
	if l.BitsDef > 0 {
		d = def[i]
	}
	word = uint32(r)<<l.BitsDef | uint32(d)
	row = l.BitsRep == 0 || int(r) == l.MaxRep
	visible = l.BitsRep == 0 || int(d) <= l.MaxVisibleDef
	return word, row, visible, d == 0
}

// AppendZippedFixed appends the data buffer of a fixed-width zipped page to
// data. Entries come from rep / def (nil when a stream is absent); when both
// are nil there are n entries, otherwise n must be 0 or the stream length.
// Every entry gets its control word (none at all when BitsRep+BitsDef == 0)
// followed, when visible, by the next width bytes of vals; null visible items
// carry their bytes too. vals must hold exactly width bytes per visible
// entry.
//
// With BitsRep > 0 it also returns the repetition index (rows+1 byte-packed
// offsets relative to the start of this page's data, Lance's width choice);
// the index is nil without repetition and for an empty page.
func AppendZippedFixed(data []byte, l ZipLevels, rep, def []uint16, vals []byte, width int, n int) (outData, repIndex []byte, err error) {
	p, total, w, err := zipFixedShape(l, rep, def, len(vals), width, n)
	if err != nil {
		return data, nil, err
	}
	cw := l.WordBytes()
	if cw == 0 {
		return append(data, vals...), nil, nil
	}
	base := len(data)
	data = bulk.Grow(data, total)
	if w > 0 {
		repIndex = make([]byte, (p.rows+1)*w)
	}
	row, vpos := 0, 0
	for i := 0; i < p.entries; i++ {
		word, isRow, visible, _ := zipWord(l, rep, def, i)
		if isRow && w > 0 {
			zipPutUint(repIndex[row*w:], w, uint64(len(data)-base))
			row++
		}
		data = zipAppendWord(data, cw, word)
		if visible {
			data = append(data, vals[vpos:vpos+width]...)
			vpos += width
		}
	}
	if w > 0 {
		zipPutUint(repIndex[row*w:], w, uint64(len(data)-base))
	}
	return data, repIndex, nil
}

// ZippedFixedLen returns the lengths of the data and of the repetition
// index AppendZippedFixed would append for the same arguments (with
// valsLen value bytes), or its error, without writing them.
func ZippedFixedLen(l ZipLevels, rep, def []uint16, valsLen, width, n int) (dataLen, indexLen int, err error) {
	p, total, w, err := zipFixedShape(l, rep, def, valsLen, width, n)
	if err != nil {
		return 0, 0, err
	}
	if w > 0 {
		indexLen = (p.rows + 1) * w
	}
	return total, indexLen, nil
}

// zipFixedShape checks AppendZippedFixed's arguments and returns the
// page's plan, its data bytes and its repetition index width (0: none).
func zipFixedShape(l ZipLevels, rep, def []uint16, valsLen, width, n int) (p zipEncPlan, total, w int, err error) {
	if width < 1 {
		return p, 0, 0, fmt.Errorf("zipped fixed width %d bytes: %w", width, ErrNotApplicable)
	}
	if p, err = zipPlan(l, rep, def, n); err != nil {
		return p, 0, 0, err
	}
	if valsLen%width != 0 || valsLen/width != p.visible {
		return p, 0, 0, fmt.Errorf("%d value bytes for %d visible entries of %d bytes: %w", valsLen, p.visible, width, ErrNotApplicable)
	}
	total = l.WordBytes()*p.entries + valsLen
	if l.BitsRep > 0 && l.WordBytes() > 0 {
		w = zipIndexWidth(uint64(total))
	}
	return p, total, w, nil
}

// AppendZippedVariable appends the data buffer of a variable-width zipped
// page to data and returns its repetition index (always present; empty for a
// page without entries). Values are given as offsets (one per visible entry
// plus one, non-decreasing, indexing bytes; may be empty when there are no
// visible entries) and bytes. When both rep and def are nil there is one
// entry per value. Every entry gets its control word; a visible valid entry
// (def == 0) then gets an offBits/8-byte length (offBits 32 or 64) and its
// bytes. Visible nulls and invisible entries carry no length; their value
// bytes, if any, are dropped.
//
// The index width is chosen from Lance's estimate of the buffer size: the
// value byte span offsets[last]-offsets[0], plus a control word per entry,
// plus a length per visible entry.
func AppendZippedVariable(data []byte, l ZipLevels, rep, def []uint16, offsets []uint64, bytes []byte, offBits int) (outData, repIndex []byte, err error) {
	if offBits != 32 && offBits != 64 {
		return data, nil, fmt.Errorf("zipped length prefix of %d bits (want 32 or 64): %w", offBits, ErrNotApplicable)
	}
	numValues := 0
	if len(offsets) > 0 {
		numValues = len(offsets) - 1
	}
	n := 0
	if rep == nil && def == nil {
		n = numValues
	}
	p, err := zipPlan(l, rep, def, n)
	if err != nil {
		return data, nil, err
	}
	if numValues != p.visible {
		return data, nil, fmt.Errorf("%d offsets for %d visible entries: %w", len(offsets), p.visible, ErrNotApplicable)
	}
	var span uint64
	if len(offsets) > 0 {
		for i := 1; i < len(offsets); i++ {
			if offsets[i] < offsets[i-1] {
				return data, nil, fmt.Errorf("offset %d (%d) below its predecessor %d: %w", i, offsets[i], offsets[i-1], ErrNotApplicable)
			}
			if offBits == 32 && offsets[i]-offsets[i-1] > 0xFFFFFFFF {
				return data, nil, fmt.Errorf("value %d of %d bytes does not fit a 32-bit length: %w", i-1, offsets[i]-offsets[i-1], ErrNotApplicable)
			}
		}
		if last := offsets[len(offsets)-1]; last > uint64(len(bytes)) {
			return data, nil, fmt.Errorf("offsets reach %d of %d value bytes: %w", last, len(bytes), ErrNotApplicable)
		}
		span = offsets[len(offsets)-1] - offsets[0]
	}
	cw := l.WordBytes()
	ob := offBits / 8
	estimate := span + uint64(cw)*uint64(p.entries) + uint64(ob)*uint64(p.visible)
	w := zipIndexWidth(estimate)
	repIndex = make([]byte, (p.rows+1)*w)

	// Exact output size: lengths and bytes of valid visible values only.
	var total uint64 = uint64(cw) * uint64(p.entries)
	v := 0
	for i := 0; i < p.entries; i++ {
		_, _, visible, valid := zipWord(l, rep, def, i)
		if visible {
			if valid {
				total += uint64(ob) + offsets[v+1] - offsets[v]
			}
			v++
		}
	}
	if total > uint64(int(^uint(0)>>1)-len(data)) {
		return data, nil, fmt.Errorf("zipped page of %d bytes: %w", total, ErrNotApplicable)
	}
	base := len(data)
	data = bulk.Grow(data, int(total))
	row := 0
	v = 0
	for i := 0; i < p.entries; i++ {
		word, isRow, visible, valid := zipWord(l, rep, def, i)
		if isRow && w > 0 {
			zipPutUint(repIndex[row*w:], w, uint64(len(data)-base))
			row++
		}
		data = zipAppendWord(data, cw, word)
		if visible {
			if valid {
				s, e := offsets[v], offsets[v+1]
				if ob == 4 {
					data = binary.LittleEndian.AppendUint32(data, uint32(e-s))
				} else {
					data = binary.LittleEndian.AppendUint64(data, e-s)
				}
				data = append(data, bytes[s:e]...)
			}
			v++
		}
	}
	if w > 0 {
		zipPutUint(repIndex[row*w:], w, uint64(len(data)-base))
	}
	return data, repIndex, nil
}

// ZipRepIndex is a validated repetition index of a zipped page.
type ZipRepIndex struct {
	b    []byte
	w    int
	rows int
}

// ParseZipRepIndex validates a repetition index for numRows rows over a data
// buffer of dataLen bytes: its entry width len(index)/(numRows+1) must be 1,
// 2, 4 or 8 bytes, and its entries non-decreasing and ≤ dataLen. An empty
// index is accepted for a page without rows (Lance writes one for an empty
// variable-width page).
func ParseZipRepIndex(index []byte, numRows, dataLen int) (ZipRepIndex, error) {
	if numRows < 0 || dataLen < 0 {
		return ZipRepIndex{}, fmt.Errorf("repetition index for %d rows over %d bytes: %w", numRows, dataLen, ErrCorrupt)
	}
	if len(index) == 0 && numRows == 0 {
		return ZipRepIndex{}, nil
	}
	if numRows >= len(index) || len(index)%(numRows+1) != 0 {
		return ZipRepIndex{}, fmt.Errorf("repetition index of %d bytes for %d rows: %w", len(index), numRows, ErrCorrupt)
	}
	w := len(index) / (numRows + 1)
	if w != 1 && w != 2 && w != 4 && w != 8 {
		return ZipRepIndex{}, fmt.Errorf("repetition index of %d bytes for %d rows has %d-byte entries: %w", len(index), numRows, w, ErrCorrupt)
	}
	var prev uint64
	for r := 0; r <= numRows; r++ {
		v := zipGetUint(index[r*w:], w)
		if v < prev || v > uint64(dataLen) {
			return ZipRepIndex{}, fmt.Errorf("repetition index entry %d is %d (previous %d, %d data bytes): %w", r, v, prev, dataLen, ErrCorrupt)
		}
		prev = v
	}
	return ZipRepIndex{b: index, w: w, rows: numRows}, nil
}

// Width returns the byte width of one entry (0 for an empty index).
func (x ZipRepIndex) Width() int { return x.w }

// NumRows returns the number of rows the index covers.
func (x ZipRepIndex) NumRows() int { return x.rows }

// Offset returns the data offset where row r begins, for 0 ≤ r ≤ NumRows
// (r == NumRows gives the end of the last row). An empty index yields 0.
func (x ZipRepIndex) Offset(r int) uint64 {
	if x.w == 0 {
		return 0
	}
	return zipGetUint(x.b[r*x.w:], x.w)
}

// Zipped is a parsed zipped page.
type Zipped struct {
	// Rep and Def hold one level per entry; each is nil when its width is 0.
	Rep, Def []uint16
	// NumRows is the number of entries that start a row.
	NumRows int
	// Values (fixed-width pages) holds the visible values back to back,
	// width bytes each, null visible items included. It aliases the input
	// when the page has no control words.
	Values []byte
	// Offsets (variable-width pages) holds numVisible+1 offsets into
	// VarData starting at 0; visible nulls have zero length.
	Offsets []uint64
	VarData []byte
}

// zipDec walks control words.
type zipDec struct {
	l       ZipLevels
	cw      int
	defMask uint32
	total   int // BitsRep + BitsDef
}

func newZipDec(l ZipLevels) (zipDec, error) {
	if err := l.check(); err != nil {
		return zipDec{}, fmt.Errorf("%v: %w", err, ErrCorrupt)
	}
	return zipDec{l: l, cw: l.WordBytes(), defMask: 1<<l.BitsDef - 1, total: l.BitsRep + l.BitsDef}, nil
}

// word decodes the control word at b (len(b) ≥ d.cw).
func (d *zipDec) word(b []byte) (rep, def uint16, ok bool) {
	var w uint32
	switch d.cw {
	case 0:
		return 0, 0, true
	case 1:
		w = uint32(b[0])
	case 2:
		w = uint32(binary.LittleEndian.Uint16(b))
	default:
		w = binary.LittleEndian.Uint32(b)
	}
	if d.total < 32 && w>>d.total != 0 {
		return 0, 0, false
	}
	return uint16(w >> d.l.BitsDef), uint16(w & d.defMask), true
}

// classify returns whether an entry starts a row and is visible, or an error
// when its rep level is out of range.
func (d *zipDec) classify(i int, rep, def uint16) (row, visible bool, err error) {
	if d.l.BitsRep == 0 {
		return true, true, nil
	}
	if int(rep) > d.l.MaxRep {
		return false, false, fmt.Errorf("entry %d has repetition level %d above max %d: %w", i, rep, d.l.MaxRep, ErrCorrupt)
	}
	row = int(rep) == d.l.MaxRep
	if i == 0 && !row {
		return false, false, fmt.Errorf("first entry has repetition level %d, not a row start (%d): %w", rep, d.l.MaxRep, ErrCorrupt)
	}
	return row, int(def) <= d.l.MaxVisibleDef, nil
}

// checkCounts validates the item counts shared by both page kinds.
func (d *zipDec) checkCounts(numItems, numVisible int) error {
	if numItems < 0 || numVisible < 0 || numVisible > numItems {
		return fmt.Errorf("zipped page with %d items, %d visible: %w", numItems, numVisible, ErrCorrupt)
	}
	if d.l.BitsRep == 0 && numVisible != numItems {
		return fmt.Errorf("zipped page without repetition has %d items but %d visible: %w", numItems, numVisible, ErrCorrupt)
	}
	return nil
}

// ParseZippedFixed parses the data buffer of a fixed-width zipped page with
// numItems entries, numVisible of them visible, width value bytes each. The
// buffer must be consumed exactly.
func ParseZippedFixed(data []byte, l ZipLevels, numItems, numVisible, width int) (Zipped, error) {
	var z Zipped
	d, err := newZipDec(l)
	if err != nil {
		return z, err
	}
	if err := d.checkCounts(numItems, numVisible); err != nil {
		return z, err
	}
	if width < 1 {
		return z, fmt.Errorf("zipped fixed width %d bytes: %w", width, ErrCorrupt)
	}
	cw := d.cw
	if (cw > 0 && numItems > len(data)/cw) || numVisible > len(data)/width ||
		cw*numItems+width*numVisible != len(data) {
		return z, fmt.Errorf("zipped fixed page of %d bytes for %d items (%d visible) of %d+%d bytes: %w",
			len(data), numItems, numVisible, cw, width, ErrCorrupt)
	}
	if cw == 0 {
		z.NumRows = numItems
		z.Values = data[:len(data):len(data)]
		return z, nil
	}
	if l.BitsRep > 0 {
		z.Rep = make([]uint16, 0, numItems)
	}
	if l.BitsDef > 0 {
		z.Def = make([]uint16, 0, numItems)
	}
	z.Values = make([]byte, 0, numVisible*width)
	pos, visibles := 0, 0
	for i := 0; i < numItems; i++ {
		if len(data)-pos < cw {
			return z, fmt.Errorf("zipped fixed entry %d truncated at %d of %d bytes: %w", i, pos, len(data), ErrCorrupt)
		}
		rep, def, ok := d.word(data[pos:])
		if !ok {
			return z, fmt.Errorf("zipped fixed entry %d: control word at %d exceeds %d bits: %w", i, pos, d.total, ErrCorrupt)
		}
		pos += cw
		row, visible, err := d.classify(i, rep, def)
		if err != nil {
			return z, err
		}
		if row {
			z.NumRows++
		}
		if z.Rep != nil {
			z.Rep = append(z.Rep, rep)
		}
		if z.Def != nil {
			z.Def = append(z.Def, def)
		}
		if visible {
			if visibles == numVisible || len(data)-pos < width {
				return z, fmt.Errorf("zipped fixed entry %d: visible value %d at %d overruns %d bytes (%d visible declared): %w",
					i, visibles, pos, len(data), numVisible, ErrCorrupt)
			}
			z.Values = append(z.Values, data[pos:pos+width]...)
			pos += width
			visibles++
		}
	}
	if visibles != numVisible || pos != len(data) {
		return z, fmt.Errorf("zipped fixed page: %d visible entries (%d declared), %d of %d bytes used: %w",
			visibles, numVisible, pos, len(data), ErrCorrupt)
	}
	return z, nil
}

// ParseZippedVariable parses the data buffer of a variable-width zipped page
// with numItems entries (numVisible visible) forming numRows rows, with
// offBits-bit length prefixes (32 or 64). repIndex is the page's repetition
// index; when non-nil it is validated and every row start is checked against
// it (pass nil to skip the check). The buffer must be consumed exactly.
func ParseZippedVariable(data, repIndex []byte, l ZipLevels, numItems, numVisible, numRows, offBits int) (Zipped, error) {
	var z Zipped
	d, err := newZipDec(l)
	if err != nil {
		return z, err
	}
	if err := d.checkCounts(numItems, numVisible); err != nil {
		return z, err
	}
	if offBits != 32 && offBits != 64 {
		return z, fmt.Errorf("zipped length prefix of %d bits (want 32 or 64): %w", offBits, ErrCorrupt)
	}
	ob := offBits / 8
	cw := d.cw
	minRec := cw
	if cw == 0 {
		minRec = ob // without control words every entry is a valid value
	}
	if numItems > len(data)/minRec {
		return z, fmt.Errorf("zipped variable page of %d bytes cannot hold %d items: %w", len(data), numItems, ErrCorrupt)
	}
	if numRows < 0 || numRows > numItems || (numItems > 0 && numRows == 0) || (l.BitsRep == 0 && numRows != numItems) {
		return z, fmt.Errorf("zipped variable page with %d rows for %d items: %w", numRows, numItems, ErrCorrupt)
	}
	var idx ZipRepIndex
	check := repIndex != nil
	if check {
		if idx, err = ParseZipRepIndex(repIndex, numRows, len(data)); err != nil {
			return z, err
		}
		if numRows > 0 && idx.Offset(numRows) != uint64(len(data)) {
			return z, fmt.Errorf("repetition index ends at %d, data has %d bytes: %w", idx.Offset(numRows), len(data), ErrCorrupt)
		}
	}
	if l.BitsRep > 0 {
		z.Rep = make([]uint16, 0, numItems)
	}
	if l.BitsDef > 0 {
		z.Def = make([]uint16, 0, numItems)
	}
	z.Offsets = make([]uint64, 1, numVisible+1)
	framing := cw * numItems
	if cw == 0 {
		framing = ob * numItems
	}
	z.VarData = make([]byte, 0, len(data)-framing)
	pos, visibles := 0, 0
	for i := 0; i < numItems; i++ {
		if len(data)-pos < cw {
			return z, fmt.Errorf("zipped variable entry %d truncated at %d of %d bytes: %w", i, pos, len(data), ErrCorrupt)
		}
		rep, def, ok := d.word(data[pos:])
		if !ok {
			return z, fmt.Errorf("zipped variable entry %d: control word at %d exceeds %d bits: %w", i, pos, d.total, ErrCorrupt)
		}
		row, visible, err := d.classify(i, rep, def)
		if err != nil {
			return z, err
		}
		if row {
			if z.NumRows == numRows {
				return z, fmt.Errorf("zipped variable entry %d starts row %d of %d: %w", i, z.NumRows, numRows, ErrCorrupt)
			}
			if check && idx.Offset(z.NumRows) != uint64(pos) {
				return z, fmt.Errorf("row %d starts at byte %d, repetition index says %d: %w", z.NumRows, pos, idx.Offset(z.NumRows), ErrCorrupt)
			}
			z.NumRows++
		}
		pos += cw
		if z.Rep != nil {
			z.Rep = append(z.Rep, rep)
		}
		if z.Def != nil {
			z.Def = append(z.Def, def)
		}
		if !visible {
			continue
		}
		if visibles == numVisible {
			return z, fmt.Errorf("zipped variable entry %d: more than %d visible entries: %w", i, numVisible, ErrCorrupt)
		}
		visibles++
		if def == 0 {
			if len(data)-pos < ob {
				return z, fmt.Errorf("zipped variable entry %d: length prefix at %d overruns %d bytes: %w", i, pos, len(data), ErrCorrupt)
			}
			var n uint64
			if ob == 4 {
				n = uint64(binary.LittleEndian.Uint32(data[pos:]))
			} else {
				n = binary.LittleEndian.Uint64(data[pos:])
			}
			pos += ob
			if n > uint64(len(data)-pos) {
				return z, fmt.Errorf("zipped variable entry %d: value of %d bytes at %d overruns %d bytes: %w", i, n, pos, len(data), ErrCorrupt)
			}
			z.VarData = append(z.VarData, data[pos:pos+int(n)]...)
			pos += int(n)
		}
		z.Offsets = append(z.Offsets, uint64(len(z.VarData)))
	}
	if visibles != numVisible || z.NumRows != numRows || pos != len(data) {
		return z, fmt.Errorf("zipped variable page: %d visible entries (%d declared), %d rows (%d declared), %d of %d bytes used: %w",
			visibles, numVisible, z.NumRows, numRows, pos, len(data), ErrCorrupt)
	}
	return z, nil
}
