package format

import "fmt"

// The container's tail: after the data region, every column's metadata,
// the column-metadata offset table, the global-buffer offset table and the
// footer. It is written by AppendTail and read by ParseTail, for the
// writer, the reader and relayout alike.

// Tail is a file's parsed tail.
type Tail struct {
	Footer Footer
	// Globals are the global buffers (the first holds the schema).
	Globals []BufferRange
	// Columns are the ranges of every column's metadata, inside
	// [Footer.ColumnMetaStart, ColumnTable).
	Columns []BufferRange
	// ColumnTable is the position of the column-metadata offset table.
	ColumnTable uint64
}

// AppendTail appends the tail of a file whose data region ends at pos:
// meta[i] is column i's serialized metadata, globals the global buffers
// (already in the data region).
func AppendTail(dst []byte, pos uint64, meta [][]byte, globals []BufferRange, major, minor uint16) []byte {
	start := pos
	cols := make([]BufferRange, len(meta))
	for i, b := range meta {
		cols[i] = BufferRange{Position: pos, Size: uint64(len(b))}
		dst = append(dst, b...)
		pos += uint64(len(b))
	}
	cmoPos := pos
	dst = AppendOffsetTable(dst, cols)
	gboPos := cmoPos + 16*uint64(len(cols))
	dst = AppendOffsetTable(dst, globals)
	return AppendFooter(dst, Footer{
		ColumnMetaStart: start, ColumnMetaOffset: cmoPos, GlobalBufOffset: gboPos,
		NumGlobalBuffers: uint32(len(globals)), NumColumns: uint32(len(meta)), Major: major, Minor: minor,
	})
}

// ParseTail reads and checks the tail of a file of size bytes through
// read (which returns exactly n bytes at off, or an error): the footer
// (ErrNotLance without one), both offset tables inside the file and in
// order, every column's metadata range inside the metadata region. It does
// not check the footer's version nor read the metadata.
func ParseTail(size uint64, read func(off, n uint64) ([]byte, error)) (Tail, error) {
	if size < FooterSize {
		return Tail{}, fmt.Errorf("%d bytes, shorter than a Lance footer (40): %w", size, ErrNotLance)
	}
	fb, err := read(size-FooterSize, FooterSize)
	if err != nil {
		return Tail{}, err
	}
	ft, err := ParseFooter(fb)
	if err != nil {
		return Tail{}, err
	}
	t := Tail{Footer: ft}
	tail := size - FooterSize
	g, n := uint64(ft.NumGlobalBuffers), uint64(ft.NumColumns)
	if ft.GlobalBufOffset > tail || g > (tail-ft.GlobalBufOffset)/16 {
		return t, fmt.Errorf("global buffer table at %d with %d entries overruns the footer: %w", ft.GlobalBufOffset, g, ErrCorruptFile)
	}
	if n > ft.GlobalBufOffset/16 {
		return t, fmt.Errorf("%d columns do not fit before position %d: %w", n, ft.GlobalBufOffset, ErrCorruptFile)
	}
	gb, err := read(ft.GlobalBufOffset, 16*g)
	if err != nil {
		return t, err
	}
	if t.Globals, err = ParseOffsetTable(gb, int(g), size); err != nil {
		return t, err
	}
	t.ColumnTable = ft.GlobalBufOffset - 16*n
	if t.ColumnTable < ft.ColumnMetaStart {
		return t, fmt.Errorf("column metadata table at %d starts before column metadata %d: %w", t.ColumnTable, ft.ColumnMetaStart, ErrCorruptFile)
	}
	cb, err := read(t.ColumnTable, 16*n)
	if err != nil {
		return t, err
	}
	if t.Columns, err = ParseOffsetTable(cb, int(n), size); err != nil {
		return t, err
	}
	for i, r := range t.Columns {
		if r.Position < ft.ColumnMetaStart || r.Position+r.Size > t.ColumnTable {
			return t, fmt.Errorf("column %d metadata [%d, +%d) outside the metadata region: %w", i, r.Position, r.Size, ErrCorruptFile)
		}
	}
	return t, nil
}
