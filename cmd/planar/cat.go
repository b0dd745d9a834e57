package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/planarlance/planar/dataset"
	"github.com/planarlance/planar/reader"
)

const catHead = `Usage: planar cat [-n N | --rows A:B] [-c col1,col2] [--json] [-w] PATH

Prints rows of a Lance file or dataset (PATH a directory with _versions; its
latest version or --version N): the first N rows (-n, default 20; -n 0 for
all), or rows A to B-1 (--rows A:B; A: runs to the end), of the named
top-level columns (-c, default all). Output is an aligned table, nested
values written as [list items], {struct: fields} and {map: entries}; with
--json it is one JSON object per row. Rows are streamed in batches: only the
rows asked for are decoded from a file (a dataset is read from its first
row to B).
`

func runCat(args []string, out io.Writer) error {
	fs := newFlags("cat", catHead, out)
	head := fs.Int64("n", 20, "print the first N rows (0: all)")
	rows := fs.String("rows", "", "print rows `A:B` (A inclusive, B exclusive; A: to the end)")
	cols := fs.String("c", "", "comma-separated top-level `columns` to print (default all)")
	asJSON := fs.Bool("json", false, "one JSON object per row")
	wide := fs.Bool("w", false, "do not shorten long table cells")
	version := fs.Uint64("version", 0, "dataset version (default the latest)")
	pos, help, err := parseFlags(fs, args, 1)
	if help || err != nil {
		return err
	}
	start, n := int64(0), *head
	if n < 0 {
		return fmt.Errorf("-n %d: want 0 or more: %w", n, errUsage)
	}
	if n == 0 {
		n = -1
	}
	if *rows != "" {
		a, b, ok := strings.Cut(*rows, ":")
		start, err = strconv.ParseInt(a, 10, 64)
		end := int64(-1)
		if err == nil && b != "" {
			end, err = strconv.ParseInt(b, 10, 64)
		}
		if !ok || err != nil || start < 0 || (end >= 0 && end < start) {
			return fmt.Errorf("--rows %q: want A:B with 0 <= A <= B, or A:: %w", *rows, errUsage)
		}
		n = -1
		if end >= 0 {
			n = end - start
		}
	}
	var columns []string
	if *cols != "" {
		for _, c := range strings.Split(*cols, ",") {
			columns = append(columns, strings.TrimSpace(c))
		}
	}
	rr, err := openRows(pos[0], *version, start, n, columns)
	if err != nil {
		return err
	}
	defer rr.Release()
	bw := bufio.NewWriter(out)
	p := rowPrinter{out: bw, json: *asJSON, wide: *wide}
	if err := p.print(rr); err != nil {
		return err
	}
	return bw.Flush()
}

// openRows returns a reader of rows [start, start+n) (n < 0: to the end) of
// the given columns of a Lance file or dataset.
func openRows(path string, version uint64, start, n int64, columns []string) (array.RecordReader, error) {
	batch := int64(8192)
	if n >= 0 && n < batch {
		batch = max(n, 1)
	}
	if isDataset(path) {
		ctx := context.Background()
		var d *dataset.Dataset
		var err error
		if version == 0 {
			d, err = dataset.Open(ctx, path)
		} else {
			d, err = dataset.OpenVersion(ctx, path, version)
		}
		if err != nil {
			return nil, err
		}
		if start > 0 {
			return newTakeReader(ctx, d, start, n, batch, columns)
		}
		r, err := d.NewRecordReader(ctx, batch, columns...)
		if err != nil {
			return nil, err
		}
		return &windowReader{RecordReader: r, left: n}, nil
	}
	if version != 0 {
		return nil, fmt.Errorf("--version applies to datasets only: %w", errUsage)
	}
	f, err := openFile(path)
	if err != nil {
		return nil, err
	}
	if start > f.NumRows() {
		start = f.NumRows()
	}
	if n < 0 || start+n > f.NumRows() {
		n = f.NumRows() - start
	}
	opts := []reader.ReadOption{reader.WithRowRange(start, n), reader.WithBatchRows(batch)}
	if columns != nil {
		opts = append(opts, reader.WithColumns(columns...))
	}
	r, err := f.NewRecordReader(opts...)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &closingReader{RecordReader: r, close: f.Close}, nil
}

// closingReader closes the file when released.
type closingReader struct {
	array.RecordReader
	close func() error
}

func (c *closingReader) Release() {
	c.RecordReader.Release()
	c.close()
}

// windowReader skips the first skip rows of a reader and stops after left
// rows (left < 0: no limit).
type windowReader struct {
	array.RecordReader
	skip, left int64
	cur        arrow.RecordBatch
}

func (w *windowReader) Next() bool {
	if w.cur != nil {
		w.cur.Release()
		w.cur = nil
	}
	for w.left != 0 && w.RecordReader.Next() {
		rec := w.RecordReader.RecordBatch()
		n := rec.NumRows()
		if w.skip >= n {
			w.skip -= n
			continue
		}
		end := n
		if w.left >= 0 && w.skip+w.left < end {
			end = w.skip + w.left
		}
		w.cur = rec.NewSlice(w.skip, end)
		if w.left > 0 {
			w.left -= end - w.skip
		}
		w.skip = 0
		return true
	}
	return false
}

func (w *windowReader) RecordBatch() arrow.RecordBatch { return w.cur }
func (w *windowReader) Record() arrow.RecordBatch      { return w.cur }
func (w *windowReader) Release() {
	if w.cur != nil {
		w.cur.Release()
		w.cur = nil
	}
	w.RecordReader.Release()
}

// rowPrinter prints batches as an aligned table or JSON lines.
type rowPrinter struct {
	out  *bufio.Writer
	json bool
	wide bool
	buf  []byte
}

// maxCell is the width a table cell is shortened to without -w.
const maxCell = 48

// tableBlock is how many rows are aligned together; a long listing is
// printed in blocks so memory stays bounded.
const tableBlock = 1000

func (p *rowPrinter) print(rr array.RecordReader) error {
	schema := rr.Schema()
	var tw *tabwriter.Writer
	inBlock := 0
	newBlock := func() {
		tw = tabwriter.NewWriter(p.out, 0, 4, 2, ' ', 0)
		for i, f := range schema.Fields() {
			if i > 0 {
				fmt.Fprint(tw, "\t")
			}
			fmt.Fprint(tw, f.Name)
		}
		fmt.Fprintln(tw)
	}
	if !p.json {
		newBlock()
	}
	for rr.Next() {
		rec := rr.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			if p.json {
				if err := p.jsonRow(schema, rec, i); err != nil {
					return err
				}
				continue
			}
			if inBlock == tableBlock {
				tw.Flush()
				newBlock()
				inBlock = 0
			}
			for c, col := range rec.Columns() {
				if c > 0 {
					tw.Write([]byte{'\t'})
				}
				p.buf = appendValue(p.buf[:0], col, i)
				if !p.wide && len([]rune(string(p.buf))) > maxCell {
					p.buf = append([]byte(string([]rune(string(p.buf))[:maxCell-1])), "…"...)
				}
				tw.Write(cleanCell(p.buf))
			}
			tw.Write([]byte{'\n'})
			inBlock++
		}
	}
	if tw != nil {
		tw.Flush()
	}
	return rr.Err()
}

// cleanCell keeps tabs and newlines of values from breaking the table.
func cleanCell(b []byte) []byte {
	for i, c := range b {
		if c == '\t' || c == '\n' || c == '\r' {
			b[i] = ' '
		}
	}
	return b
}

func (p *rowPrinter) jsonRow(schema *arrow.Schema, rec arrow.RecordBatch, i int) error {
	p.buf = append(p.buf[:0], '{')
	for c, col := range rec.Columns() {
		if c > 0 {
			p.buf = append(p.buf, ',')
		}
		k, _ := json.Marshal(schema.Field(c).Name)
		p.buf = append(p.buf, k...)
		p.buf = append(p.buf, ':')
		v, err := json.Marshal(col.GetOneForMarshal(i))
		if err != nil {
			return fmt.Errorf("column %q row %d: %w", schema.Field(c).Name, i, err)
		}
		p.buf = append(p.buf, v...)
	}
	p.buf = append(p.buf, '}', '\n')
	_, err := p.out.Write(p.buf)
	return err
}

// appendValue writes a readable text form of a[i]: null, scalars as
// arrow-go prints them, lists and fixed-size lists as [a, b], structs as
// {name: value, ...}, maps as {key: value, ...}.
func appendValue(b []byte, a arrow.Array, i int) []byte {
	if a.IsNull(i) {
		return append(b, "null"...)
	}
	switch a := a.(type) {
	case *array.Map:
		s, e := a.ValueOffsets(i)
		b = append(b, '{')
		for k := s; k < e; k++ {
			if k > s {
				b = append(b, ", "...)
			}
			b = appendValue(b, a.Keys(), int(k))
			b = append(b, ": "...)
			b = appendValue(b, a.Items(), int(k))
		}
		return append(b, '}')
	case array.ListLike:
		s, e := a.ValueOffsets(i)
		vals := a.ListValues()
		b = append(b, '[')
		for k := s; k < e; k++ {
			if k > s {
				b = append(b, ", "...)
			}
			b = appendValue(b, vals, int(k))
		}
		return append(b, ']')
	case *array.Struct:
		st := a.DataType().(*arrow.StructType)
		b = append(b, '{')
		for k := 0; k < a.NumField(); k++ {
			if k > 0 {
				b = append(b, ", "...)
			}
			b = append(b, st.Field(k).Name...)
			b = append(b, ": "...)
			b = appendValue(b, a.Field(k), i)
		}
		return append(b, '}')
	case *array.Dictionary:
		return appendValue(b, a.Dictionary(), a.GetValueIndex(i))
	case *array.String:
		return append(b, a.Value(i)...)
	case *array.LargeString:
		return append(b, a.Value(i)...)
	}
	return append(b, a.ValueStr(i)...)
}
