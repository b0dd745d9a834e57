package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// Source kinds.
const (
	kindParquet     = "parquet"
	kindArrowFile   = "arrow-file"
	kindArrowStream = "arrow-stream"
	kindCSV         = "csv"
	kindLance       = "lance"
	kindDataset     = "lance-dataset"
)

// errSource marks a source that cannot be read: not a recognised format,
// corrupt, truncated, or a value that does not parse.
var errSource = errors.New("bad source")

// source streams a file's rows as record batches.
type source struct {
	kind   string
	path   string
	schema *arrow.Schema
	rr     array.RecordReader
	// totalRows is the row count when the source's metadata gives it (-1
	// otherwise); size is the file's size and read counts the bytes read.
	totalRows int64
	size      int64
	read      *atomic.Int64
	// colBytes is the source's size per top-level field and colBytesHow says
	// what it measures; the IPC and CSV readers fill it as they read.
	colBytes    map[string]int64
	colBytesHow string
	// rows counts the rows delivered, for messages naming a row.
	rows  int64
	close func() error
}

type sourceOptions struct {
	kind      string // "" = detect
	batchRows int64
	csv       csvOptions
}

// detectKind tells a source's format from its first and last bytes, else its
// extension.
func detectKind(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("source %s: %w", path, err)
	}
	if fi.IsDir() {
		if _, err := os.Stat(filepath.Join(path, "_versions")); err == nil {
			return kindDataset, nil
		}
		return "", fmt.Errorf("source %s is a directory without _versions (not a Lance dataset): %w", path, errSource)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("source %s: %w", path, err)
	}
	defer f.Close()
	head := make([]byte, 8)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	tail := make([]byte, 4)
	if fi.Size() >= 8 {
		if _, err := f.ReadAt(tail, fi.Size()-4); err != nil {
			return "", fmt.Errorf("source %s: %w", path, err)
		}
	}
	ext := strings.ToLower(filepath.Ext(path))
	switch {
	case bytes.HasPrefix(head, []byte("PAR1")):
		return kindParquet, nil
	case bytes.HasPrefix(head, []byte("ARROW1")):
		return kindArrowFile, nil
	case bytes.HasPrefix(head, []byte{0xff, 0xff, 0xff, 0xff}):
		return kindArrowStream, nil
	case string(tail) == "LANC":
		return kindLance, nil
	case ext == ".csv" || ext == ".tsv" || ext == ".txt":
		return kindCSV, nil
	case ext == ".parquet" || ext == ".pq":
		return "", fmt.Errorf("source %s: named .parquet but does not start with PAR1 (truncated or not Parquet): %w", path, errSource)
	case ext == ".arrow" || ext == ".arrows" || ext == ".ipc" || ext == ".feather":
		return "", fmt.Errorf("source %s: named %s but has no Arrow IPC magic: %w", path, ext, errSource)
	}
	return "", fmt.Errorf("source %s: unknown format (not Parquet, Arrow IPC or Lance; name CSV files .csv or pass --from csv): %w", path, errSource)
}

// openSource opens path as a source of the given kind.
func openSource(ctx context.Context, path, kind string, o sourceOptions) (*source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("source %s: %w", path, err)
	}
	cf := &countingFile{f: f}
	s := &source{kind: kind, path: path, size: fi.Size(), read: &cf.n, totalRows: -1, colBytes: map[string]int64{}, close: f.Close}
	switch kind {
	case kindParquet:
		err = s.openParquet(ctx, cf, o)
	case kindArrowFile:
		err = s.openArrowFile(cf)
	case kindArrowStream:
		err = s.openArrowStream(cf)
	case kindCSV:
		err = s.openCSV(cf, o)
	default:
		err = fmt.Errorf("source %s: cannot read %s here: %w", path, kind, errSource)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

func (s *source) Close() error {
	if s.rr != nil {
		s.rr.Release()
	}
	return s.close()
}

// next returns the next batch (owned by the source, valid until the next
// call), nil at the end. A panic of a third-party decoder on corrupt bytes
// becomes an error.
func (s *source) next() (rec arrow.RecordBatch, err error) {
	defer func() {
		if p := recover(); p != nil {
			rec, err = nil, fmt.Errorf("source %s: reading after row %d: %v: %w", s.path, s.rows, p, errSource)
		}
	}()
	if s.rr.Next() {
		rec = s.rr.RecordBatch()
		s.rows += rec.NumRows()
		if s.kind == kindArrowFile || s.kind == kindArrowStream {
			for i, c := range rec.Columns() {
				s.colBytes[rec.Schema().Field(i).Name] += dataBytes(c.Data())
			}
		}
		return rec, nil
	}
	if err := s.rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		if errors.Is(err, errSource) { // a CSV row, named in err
			return nil, fmt.Errorf("source %s: %w", s.path, err)
		}
		return nil, fmt.Errorf("source %s: reading after row %d: %v: %w", s.path, s.rows, err, errSource)
	}
	return nil, nil
}

func (s *source) openParquet(ctx context.Context, cf *countingFile, o sourceOptions) error {
	props := parquet.NewReaderProperties(memory.DefaultAllocator)
	pf, err := file.NewParquetReader(cf, file.WithReadProps(props))
	if err != nil {
		return fmt.Errorf("source %s: not a readable Parquet file (truncated or corrupt?): %v: %w", s.path, err, errSource)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: o.batchRows, Parallel: true}, memory.DefaultAllocator)
	if err != nil {
		return fmt.Errorf("source %s: Parquet schema: %v: %w", s.path, err, errSource)
	}
	rr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return fmt.Errorf("source %s: %v: %w", s.path, err, errSource)
	}
	s.rr, s.schema = rr, rr.Schema()
	// pqarrow's record reader drops the file's key-value metadata (pyarrow
	// keeps its "pandas" entry there); the file reader's schema has it.
	if full, err := fr.Schema(); err == nil && full.Metadata().Len() > 0 {
		md := full.Metadata()
		s.schema = arrow.NewSchema(s.schema.Fields(), &md)
	}
	md := pf.MetaData()
	s.totalRows = md.NumRows
	s.colBytesHow = "Parquet column chunks, compressed (file metadata)"
	for rg := 0; rg < md.NumRowGroups(); rg++ {
		g := md.RowGroup(rg)
		for c := 0; c < g.NumColumns(); c++ {
			cc, err := g.ColumnChunk(c)
			if err != nil {
				return fmt.Errorf("source %s: row group %d column %d metadata: %v: %w", s.path, rg, c, err, errSource)
			}
			path := cc.PathInSchema()
			if len(path) > 0 {
				s.colBytes[path[0]] += cc.TotalCompressedSize()
			}
		}
	}
	return nil
}

func (s *source) openArrowFile(cf *countingFile) error {
	r, err := ipc.NewFileReader(cf, ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return fmt.Errorf("source %s: not a readable Arrow IPC file (truncated or corrupt?): %v: %w", s.path, err, errSource)
	}
	s.rr = &ipcFileRecords{r: r}
	s.schema = r.Schema()
	s.colBytesHow = "Arrow buffers as read from the IPC file (uncompressed)"
	s.close = func() error { r.Close(); return cf.f.Close() }
	return nil
}

func (s *source) openArrowStream(cf *countingFile) error {
	r, err := ipc.NewReader(bufio.NewReaderSize(cf, 1<<20), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return fmt.Errorf("source %s: not a readable Arrow IPC stream: %v: %w", s.path, err, errSource)
	}
	s.rr, s.schema = r, r.Schema()
	s.colBytesHow = "Arrow buffers as read from the IPC stream (uncompressed)"
	return nil
}

// ipcFileRecords reads an IPC file's batches in order as an
// array.RecordReader.
type ipcFileRecords struct {
	r   *ipc.FileReader
	i   int
	cur arrow.RecordBatch
	err error
}

func (x *ipcFileRecords) Retain()                        {}
func (x *ipcFileRecords) Release()                       { x.free() }
func (x *ipcFileRecords) Schema() *arrow.Schema          { return x.r.Schema() }
func (x *ipcFileRecords) RecordBatch() arrow.RecordBatch { return x.cur }
func (x *ipcFileRecords) Record() arrow.RecordBatch      { return x.cur }
func (x *ipcFileRecords) Err() error                     { return x.err }
func (x *ipcFileRecords) free()                          { x.cur = nil }
func (x *ipcFileRecords) Next() bool {
	x.free()
	if x.err != nil || x.i >= x.r.NumRecords() {
		return false
	}
	rec, err := x.r.RecordBatch(x.i)
	if err != nil {
		x.err = fmt.Errorf("batch %d: %w", x.i, err)
		return false
	}
	x.i++
	x.cur = rec
	return true
}

// dataBytes is the size of an array's buffers, children and dictionary
// included.
func dataBytes(d arrow.ArrayData) int64 {
	var n int64
	for _, b := range d.Buffers() {
		if b != nil {
			n += int64(b.Len())
		}
	}
	for _, c := range d.Children() {
		n += dataBytes(c)
	}
	if d.DataType().ID() == arrow.DICTIONARY {
		n += dataBytes(d.Dictionary())
	}
	return n
}

// countingFile counts the bytes read from a file, for progress.
type countingFile struct {
	f *os.File
	n atomic.Int64
}

func (c *countingFile) Read(p []byte) (int, error) {
	n, err := c.f.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (c *countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.f.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

func (c *countingFile) Seek(off int64, whence int) (int64, error) { return c.f.Seek(off, whence) }
