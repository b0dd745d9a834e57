package relayout

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/internal/atomicfile"
	"github.com/planarlance/planar/proto/file2pb"
	"github.com/planarlance/planar/reader"
)

var (
	// ErrNoCounterpart is wrapped, with the column path and page index,
	// when a page has no metadata-only form in the target version and
	// Options.Reencode is not set.
	ErrNoCounterpart = errors.New("planar/relayout: page has no counterpart in the target version")
	// ErrInvalidOption is wrapped for bad Options.
	ErrInvalidOption = errors.New("planar/relayout: invalid option")
)

// Target versions.
const (
	V2_2 = "2.2"
	V2_3 = "2.3"
)

// Options configure a conversion.
type Options struct {
	// Target is the output version: "2.2" or "2.3".
	Target string
	// Reencode re-encodes, through reader/ and writer/, the pages that have
	// no counterpart in the target instead of failing.
	Reencode bool
}

// Action says what happened to a page.
type Action string

const (
	// Kept: the page's description bytes and buffers are copied as they
	// are (it is already in the target form).
	Kept Action = "kept"
	// Reexpressed: the buffers are copied, the description is rewritten
	// in the target grammar.
	Reexpressed Action = "re-expressed"
	// Reencoded: the page's rows were decoded and encoded again.
	Reencoded Action = "re-encoded"
)

// PageReport describes one source page.
type PageReport struct {
	Column   string // dotted column path
	Index    int    // physical column index
	Page     int    // page index within the column
	Rows     uint64 // the page's length (rows, or elements below a fixed-size list of structs)
	From, To string // form in the source and in the output, e.g. "2.2 mini-block", "2.3 dense x chunked"
	Action   Action
	Bytes    uint64 // the source page's buffer bytes
	NewBytes uint64 // bytes of the page(s) written in its place (Reencoded only)
	NewPages int    // pages written in its place (1 unless Reencoded)
	Reason   string // why a re-encoded page had no counterpart
	// NewFormat are the forms of the pages written in place of a
	// re-encoded one, in order (To is the first; "" when the page had no
	// rows and was dropped).
	NewFormat []string
}

// Report summarizes a conversion.
type Report struct {
	From, To string // versions, e.g. "2.3" and "2.2"
	Pages    []PageReport
	// Page counts by action.
	Kept, Reexpressed, Reencoded int
	// BytesCopied are the buffer bytes of kept and re-expressed pages, at
	// the same positions in the output as in the source.
	BytesCopied uint64
	// BytesReencoded are the source bytes of re-encoded pages and
	// BytesWritten the bytes of the pages that replace them.
	BytesReencoded, BytesWritten uint64
	// Moved is set when pages were re-encoded: the data region was then
	// rebuilt without the re-encoded pages' old bytes, and the copied
	// buffers (still byte for byte the same) have new positions.
	Moved bool
	// InputSize and OutputSize are the file sizes.
	InputSize, OutputSize uint64
}

func parseTarget(t string) (uint16, error) {
	switch t {
	case V2_2:
		return 2, nil
	case V2_3:
		return 3, nil
	}
	return 0, fmt.Errorf("target %q (want %q or %q): %w", t, V2_2, V2_3, ErrInvalidOption)
}

// Convert writes the file src (of srcSize bytes) to dst in the target
// version. Errors from reading src wrap reader's sentinels (reader.ErrCorrupt,
// reader.ErrNotLance, reader.ErrUnsupportedVersion, reader.ErrUnsupported);
// a page without counterpart wraps ErrNoCounterpart. Every check and every
// re-encoding happens before the first byte is written to dst; after that
// only dst's or src's I/O can fail.
func Convert(src io.ReaderAt, srcSize int64, dst io.Writer, opts Options) (Report, error) {
	return convert(src, srcSize, dst, opts, func(w io.Writer, n int64) error {
		_, err := io.Copy(w, io.NewSectionReader(src, 0, n))
		return err
	})
}

// ConvertPath converts the file at src into a new file at dst, replacing
// dst if it exists (whether to allow that is the caller's decision). The
// output is written to a temporary file ".<name>.tmp-*" in dst's directory,
// synced and renamed to dst, and the directory is synced; on any error dst
// is untouched (absent, or the file it was) and the temporary file is
// removed. Errors are Convert's, prefixed with src.
func ConvertPath(src, dst string, opts Options) (rep Report, err error) {
	in, err := os.Open(src)
	if err != nil {
		return Report{}, err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return Report{}, err
	}
	out, err := atomicfile.Create(dst)
	if err != nil {
		return Report{}, err
	}
	defer func() {
		if err != nil {
			out.Abort()
		}
	}()
	rep, err = convert(in, st.Size(), out.File, opts, func(w io.Writer, n int64) error {
		// A LimitedReader over the file lets the kernel copy the data
		// region (copy_file_range) when w is the output file itself.
		if _, err := in.Seek(0, io.SeekStart); err != nil {
			return err
		}
		_, err := io.Copy(w, &io.LimitedReader{R: in, N: n})
		return err
	})
	if err != nil {
		return rep, fmt.Errorf("%s: %w", src, err)
	}
	if err = out.Publish(); err != nil {
		return rep, err
	}
	return rep, nil
}

func convert(src io.ReaderAt, size int64, dst io.Writer, opts Options, copyPrefix func(io.Writer, int64) error) (Report, error) {
	minor, err := parseTarget(opts.Target)
	if err != nil {
		return Report{}, err
	}
	if src == nil || dst == nil {
		return Report{}, fmt.Errorf("nil source or destination: %w", ErrInvalidOption)
	}
	f, err := reader.Open(src, size)
	if err != nil {
		return Report{}, err
	}
	c, err := parseContainer(src, size, f.NumColumns())
	if err != nil {
		return Report{}, err
	}
	srcMajor, srcMinor := f.Version()
	rep := Report{From: fmt.Sprintf("%d.%d", srcMajor, srcMinor), To: opts.Target, InputSize: uint64(size)}
	plans, err := planPages(f, c, minor, opts.Reencode)
	if err != nil {
		return Report{}, err
	}
	// Re-encode first: nothing is written before every page has its form.
	var fresh []*freshPage
	reencode := false
	for _, p := range plans {
		reencode = reencode || p.action == Reencoded
	}
	if reencode {
		if fresh, err = reencodeAll(f, c, plans, minor); err != nil {
			return Report{}, err
		}
	}
	globals := c.globals
	var w *countingWriter
	var bw *bufio.Writer
	var moved reloc
	if !reencode {
		// The data region as it is: no buffer moves.
		prefix := c.footer.ColumnMetaStart
		if err := copyPrefix(dst, int64(prefix)); err != nil {
			return Report{}, err
		}
		bw = bufio.NewWriterSize(dst, 1<<16)
		w = &countingWriter{w: bw, n: prefix}
	} else {
		bw = bufio.NewWriterSize(dst, 1<<16)
		w = &countingWriter{w: bw}
		if moved, err = writeCompact(src, c, plans, fresh, w); err != nil {
			return Report{}, err
		}
		globals = moved.globals(globals)
	}
	meta, err := columnMetadata(c, plans, fresh, moved)
	if err != nil {
		return Report{}, err
	}
	if err := writeTail(w, meta, globals, 2, minor); err != nil {
		return Report{}, err
	}
	if err := bw.Flush(); err != nil {
		return Report{}, err
	}
	rep.OutputSize = w.n
	rep.Moved = moved != nil
	for _, p := range plans {
		pr := p.report
		switch p.action {
		case Kept:
			rep.Kept++
			rep.BytesCopied += pr.Bytes
		case Reexpressed:
			rep.Reexpressed++
			rep.BytesCopied += pr.Bytes
		case Reencoded:
			rep.Reencoded++
			rep.BytesReencoded += pr.Bytes
		}
		rep.Pages = append(rep.Pages, pr)
	}
	for _, fp := range fresh {
		for _, b := range fp.buffers {
			rep.BytesWritten += uint64(len(b))
		}
	}
	// fresh is in column and page order, as the report.
	fi := 0
	for i := range rep.Pages {
		pr := &rep.Pages[i]
		for ; fi < len(fresh) && fresh[fi].col == pr.Index && fresh[fi].srcPage == pr.Page; fi++ {
			pr.NewPages++
			for _, b := range fresh[fi].buffers {
				pr.NewBytes += uint64(len(b))
			}
			pr.NewFormat = append(pr.NewFormat, fresh[fi].form)
		}
		if len(pr.NewFormat) > 0 {
			pr.To = pr.NewFormat[0]
		}
	}
	return rep, nil
}

// columnMetadata serializes every column's metadata for the output: the
// stored bytes when no page of the column changes, else the message with
// the new page descriptions and the re-encoded pages in place of theirs.
func columnMetadata(c *container, plans []*pagePlan, fresh []*freshPage, moved reloc) ([][]byte, error) {
	changed := make([]bool, len(c.meta))
	for i := range changed {
		changed[i] = moved != nil
	}
	for _, p := range plans {
		if p.action != Kept {
			changed[p.col] = true
		}
	}
	out := make([][]byte, len(c.meta))
	pi := 0
	fi := 0
	for col, cm := range c.meta {
		if !changed[col] {
			out[col] = c.metaRaw[col]
			pi += len(cm.Pages)
			for fi < len(fresh) && fresh[fi].col == col {
				fi++
			}
			continue
		}
		nm := &file2pb.ColumnMetadata{Encoding: cm.Encoding, BufferOffsets: moved.offsets(cm.BufferOffsets, cm.BufferSizes), BufferSizes: cm.BufferSizes}
		for j := range cm.Pages {
			p := plans[pi]
			pi++
			if p.col != col || p.page != j {
				return nil, fmt.Errorf("relayout: page plans out of order")
			}
			switch p.action {
			case Kept, Reexpressed:
				np := proto.Clone(cm.Pages[j]).(*file2pb.ColumnMetadata_Page)
				if p.action == Reexpressed {
					np.Encoding = &file2pb.Encoding{Location: &file2pb.Encoding_Direct{Direct: &file2pb.DirectEncoding{Encoding: p.encoding}}}
				}
				np.BufferOffsets = moved.offsets(np.BufferOffsets, np.BufferSizes)
				nm.Pages = append(nm.Pages, np)
			case Reencoded:
				for fi < len(fresh) && fresh[fi].col == col && fresh[fi].srcPage == j {
					nm.Pages = append(nm.Pages, fresh[fi].page)
					fi++
				}
			}
		}
		b, err := marshalOrdered(nm)
		if err != nil {
			return nil, err
		}
		out[col] = b
	}
	return out, nil
}

// pageBytes is the sum of a page's buffer sizes.
func pageBytes(p *file2pb.ColumnMetadata_Page) uint64 {
	var n uint64
	for _, s := range p.BufferSizes {
		n += s
	}
	return n
}
