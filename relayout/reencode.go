package relayout

import (
	"bytes"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/planarlance/planar/proto/file2pb"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/writer"
)

// freshPage is a page written in place of a re-encoded one.
type freshPage struct {
	col, srcPage int
	page         *file2pb.ColumnMetadata_Page // BufferOffsets set when written
	buffers      [][]byte
	form         string
}

// leafSite locates a physical column in the schema: its top-level field,
// its index among that field's leaves and the elements per row (the product
// of the structural fixed-size-list dimensions on its path).
type leafSite struct {
	field, leaf, leaves int
	dim                 uint64
}

func leafSites(s *arrow.Schema) []leafSite {
	var out []leafSite
	for ti, fld := range s.Fields() {
		paths := structural.LeafPathsField(fld)
		for k, path := range paths {
			out = append(out, leafSite{field: ti, leaf: k, leaves: len(paths), dim: uint64(structural.ElementsPerRow(path))})
		}
	}
	return out
}

// reencodeAll re-encodes every page planned Reencoded, in column and page
// order. Each page's rows are read through reader/ (the page's whole
// top-level field, projected) and written through writer/ in the target
// format as a one-field file; the pages of the column's leaf in that file
// replace the source page. The selector chooses their form, as for any
// write; the writer may cut them into several pages.
func reencodeAll(f *reader.File, c *container, plans []*pagePlan, minor uint16) ([]*freshPage, error) {
	sites := leafSites(f.Schema())
	if len(sites) != len(c.meta) {
		return nil, fmt.Errorf("schema has %d leaves, file %d columns: %w", len(sites), len(c.meta), reader.ErrCorrupt)
	}
	wf := writer.Format2_3
	if minor == 2 {
		wf = writer.Format2_2
	}
	var out []*freshPage
	var pages []reader.PageInfo
	pagesOf := -1
	encoded := map[[3]int64]*tempFile{}
	for _, p := range plans {
		if p.action != Reencoded {
			continue
		}
		site := sites[p.col]
		if pagesOf != p.col {
			pages, pagesOf = f.Pages(p.col), p.col
		}
		src := c.meta[p.col].Pages[p.page]
		first, rows := pages[p.page].FirstRow, pages[p.page].Rows
		if site.dim == 0 || first%site.dim != 0 || rows%site.dim != 0 {
			return nil, fmt.Errorf("column %q, page %d: %d elements from %d are not whole rows of %d: %w",
				p.report.Column, p.page, rows, first, site.dim, ErrNoCounterpart)
		}
		// Sibling leaves often have pages over the same rows (a struct's
		// all-null pages): their field is encoded once.
		key := [3]int64{int64(site.field), int64(first / site.dim), int64(rows / site.dim)}
		tf, ok := encoded[key]
		if !ok {
			var err error
			if tf, err = encodeRows(f, site, key[1], key[2], wf); err != nil {
				return nil, fmt.Errorf("column %q, page %d: re-encoding: %w", p.report.Column, p.page, err)
			}
			encoded[key] = tf
		}
		fresh := tf.leafPages(site.leaf, minor)
		for _, fp := range fresh {
			fp.col, fp.srcPage = p.col, p.page
			fp.page.Priority += src.Priority
		}
		out = append(out, fresh...)
	}
	return out, nil
}

// cannotHold marks a writer's refusal of a page's data (a type or shape the
// target format cannot hold): the page has no counterpart even re-encoded.
func cannotHold(err error) error {
	return fmt.Errorf("the target format cannot hold this data: %w (%w)", err, ErrNoCounterpart)
}

// tempFile is a field's rows encoded in the target format.
type tempFile struct {
	b []byte
	c *container // nil: no rows
}

// encodeRows encodes rows [start, start+n) of the site's field in the
// target format, as a one-field file.
func encodeRows(f *reader.File, site leafSite, start, n int64, wf writer.Format) (*tempFile, error) {
	if n == 0 {
		return &tempFile{}, nil
	}
	field := f.Schema().Field(site.field)
	rr, err := f.NewRecordReader(reader.WithColumns(field.Name), reader.WithRowRange(start, n), reader.WithBatchRows(n))
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	var buf bytes.Buffer
	w, err := writer.New(&buf, rr.Schema(), writer.WithFormat(wf))
	if err != nil {
		return nil, cannotHold(err)
	}
	for rr.Next() {
		if err := w.WriteBatch(rr.RecordBatch()); err != nil {
			w.Close()
			return nil, cannotHold(err)
		}
	}
	if err := rr.Err(); err != nil {
		w.Close()
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, cannotHold(err)
	}
	b := buf.Bytes()
	tc, err := parseContainer(bytes.NewReader(b), int64(len(b)), site.leaves)
	if err != nil {
		return nil, fmt.Errorf("the re-encoded field: %w", err)
	}
	return &tempFile{b: b, c: tc}, nil
}

// leafPages returns the pages of one leaf of the encoded field, their
// buffers sliced from the file and their offsets to be set when written.
func (t *tempFile) leafPages(leaf int, minor uint16) []*freshPage {
	if t.c == nil {
		return nil
	}
	var out []*freshPage
	for _, pg := range t.c.meta[leaf].Pages {
		fp := &freshPage{page: pg, form: "?"}
		for k, off := range pg.BufferOffsets {
			fp.buffers = append(fp.buffers, t.b[off:off+pg.BufferSizes[k]])
		}
		if _, from, _, err := planPage(pg, minor, minor); err == nil {
			fp.form = from
		}
		pg.BufferOffsets = make([]uint64, len(pg.BufferSizes))
		out = append(out, fp)
	}
	return out
}
