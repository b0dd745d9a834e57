package writer

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/planarlance/planar/internal/atomicfile"
	"github.com/planarlance/planar/internal/format"
	"github.com/planarlance/planar/proto/enc20pb"
	"github.com/planarlance/planar/proto/file2pb"
	"github.com/planarlance/planar/proto/filepb"
	"github.com/planarlance/planar/values"
)

// Writer writes one Lance file. It is not safe for concurrent use.
type Writer struct {
	cfg     config
	schema  *arrow.Schema
	lschema *filepb.Schema
	cols    []*column
	sink    sink
	rows    int64
	closed  bool
	err     error // sticky: set when the destination failed
	report  []PageReport
	onClose func(error) error
	dicts   dictCache // dictionaries validated in earlier batches
	pipe    *pipeline
}

// New returns a writer of schema to dst. Every field's type is checked here:
// an unsupported type fails with ErrUnsupportedType naming the field.
func New(dst io.Writer, schema *arrow.Schema, opts ...Option) (*Writer, error) {
	if dst == nil || schema == nil {
		return nil, fmt.Errorf("nil destination or schema: %w", ErrInvalidOption)
	}
	cfg := config{format: Format2_2, maxPageBytes: DefaultMaxPageBytes}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if cfg.format != Format2_2 {
		warnUnstable(cfg.format)
	}
	ls, leaves, err := format.SchemaToLance(schema)
	if err != nil {
		return nil, err
	}
	w := &Writer{cfg: cfg, schema: schema, lschema: ls, sink: sink{w: dst}, pipe: newPipeline(cfg.concurrency, cfg.pagesInFlight)}
	for _, leaf := range leaves {
		c, err := newColumn(leaf, schema.Field(leaf.Top), leaf.Top, leaf.Steps, &w.cfg)
		if err != nil {
			return nil, err
		}
		w.cols = append(w.cols, c)
	}
	for _, co := range cfg.columnOpts {
		found := false
		for _, c := range w.cols {
			found = found || co.matches(c.leaf.Path)
		}
		if !found {
			return nil, fmt.Errorf("column options for %q: no such column: %w", co.path, ErrInvalidOption)
		}
	}
	return w, nil
}

// Create writes a Lance file at path. Data goes to a temporary file
// ".<name>.tmp-<random>" in the same directory, which Close syncs and renames
// to path, then syncs the directory so that the committed file survives a
// crash or power cut; if anything fails, no file is left at path and the
// temporary file is removed.
//
// The file gets the mode os.Create would give it: 0666 less the umask for a
// new file, and the existing file's permission bits when path is replaced
// (owner and group are the writer's, as with any new file).
//
// A process that dies before Close (a crash, a kill, a power cut) leaves its
// ".<name>.tmp-*" file behind; path itself is untouched. Such files are never
// reused: delete them (for example rm dir/.name.lance.tmp-*) when no writer
// of that path is running.
func Create(path string, schema *arrow.Schema, opts ...Option) (*Writer, error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, err
	}
	w, err := New(f, schema, opts...)
	if err != nil {
		f.Abort()
		return nil, err
	}
	w.onClose = func(werr error) error {
		if werr != nil {
			f.Abort()
			return werr
		}
		return f.Publish()
	}
	return w, nil
}

// Schema returns the writer's Arrow schema.
func (w *Writer) Schema() *arrow.Schema { return w.schema }

// WriteBatch buffers a record batch. Its schema must equal the writer's, and
// it is validated in full before anything of it is buffered or written:
// arrays present (no nil column or child), buffers, offsets and children
// consistent with lengths and offsets, a validity bitmap that agrees with a
// null count of 0, dictionary keys of valid slots inside their dictionary,
// string values (also in dictionaries and nested) valid UTF-8, and no null
// a reader would see in a field declared non-nullable (a null masked by a
// null struct or fixed-size-list slot, or in child values no valid list slot
// reaches, is not seen). A bad batch fails with ErrInvalidBatch naming the
// column path, and the writer stays usable. An array with a null count but no
// validity bitmap has no nulls (Arrow's rule) and is written so.
// Pages are written as columns fill their page budget.
func (w *Writer) WriteBatch(rec arrow.RecordBatch) error {
	if err := w.usable(); err != nil {
		return err
	}
	if err := checkRecord(w.schema, rec); err != nil {
		return err
	}
	n := rec.NumRows()
	cols := rec.Columns()
	checked, own, err := checkColumns(w.schema, cols, n, &w.dicts)
	defer func() {
		for _, a := range own {
			a.Release()
		}
	}()
	if err != nil {
		return err
	}
	fresh := make([][]string, len(w.cols))
	for i, c := range w.cols {
		if c.union == nil {
			continue
		}
		var err error
		if fresh[i], err = c.union.check(leafDictionary(checked[c.top], c.path)); err != nil {
			return fmt.Errorf("column %q: %v: %w", c.leaf.Path, err, ErrInvalidBatch)
		}
	}
	for _, c := range w.cols {
		if c.info.kind == values.KindPacked {
			if err := packedNulls(checked[c.top], c.path); err != nil {
				return fmt.Errorf("column %q: %v: %w", c.leaf.Path, err, ErrInvalidBatch)
			}
		}
	}
	for i, c := range w.cols {
		if c.union != nil {
			c.union.commit(leafDictionary(checked[c.top], c.path), fresh[i])
		}
	}
	if n == 0 {
		return nil
	}
	for _, c := range w.cols {
		// Errors name the column and page they come from (the page
		// written may be another column's).
		if err := c.append(checked[c.top], w); err != nil {
			return w.fail(err)
		}
	}
	w.rows += n
	return nil
}

// CheckBatch runs WriteBatch's checks of rec's columns against schema (the
// schema, lengths, types, offsets, UTF-8, non-nullable fields) without a
// writer: what passes is written by a Writer of that schema, apart from the
// checks that depend on what the file already holds (dictionary keys
// outgrowing their type across batches) and packed-struct nulls. A bad
// batch is ErrInvalidBatch (or ErrSchemaMismatch) naming the column.
func CheckBatch(schema *arrow.Schema, rec arrow.RecordBatch) error {
	if err := checkRecord(schema, rec); err != nil {
		return err
	}
	_, own, err := checkColumns(schema, rec.Columns(), rec.NumRows(), &dictCache{})
	for _, a := range own {
		a.Release()
	}
	return err
}

// checkRecord checks that rec is a batch of schema.
func checkRecord(schema *arrow.Schema, rec arrow.RecordBatch) error {
	if rec == nil {
		return ErrNilRecord
	}
	if !rec.Schema().Equal(schema) {
		return fmt.Errorf("%s: %w", schemaDiff(schema, rec.Schema()), ErrSchemaMismatch)
	}
	return nil
}

// schemaDiff names the first difference between the writer's schema want
// and a batch's schema got (they are not Equal).
func schemaDiff(want, got *arrow.Schema) string {
	if want.NumFields() != got.NumFields() {
		return fmt.Sprintf("the batch has %d fields (%s), the writer's schema %d (%s)", got.NumFields(), fieldList(got), want.NumFields(), fieldList(want))
	}
	for i, w := range want.Fields() {
		g := got.Field(i)
		switch {
		case w.Name != g.Name:
			return fmt.Sprintf("field %d is %q, the writer's schema has %q", i, g.Name, w.Name)
		case !arrow.TypeEqual(w.Type, g.Type):
			return fmt.Sprintf("field %q is %s, the writer's schema has %s", w.Name, g.Type, w.Type)
		case w.Nullable != g.Nullable:
			return fmt.Sprintf("field %q is nullable=%v, the writer's schema has nullable=%v", w.Name, g.Nullable, w.Nullable)
		case !w.Metadata.Equal(g.Metadata):
			return fmt.Sprintf("field %q has metadata %v, the writer's schema %v", w.Name, g.Metadata, w.Metadata)
		}
	}
	return fmt.Sprintf("the batch's schema metadata %v differs from the writer's %v", got.Metadata(), want.Metadata())
}

func fieldList(s *arrow.Schema) string {
	names := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// checkColumns validates a batch's columns; checked are the columns to
// write (new arrays in own where null counts were normalized; the caller
// releases own).
func checkColumns(schema *arrow.Schema, cols []arrow.Array, n int64, dicts *dictCache) (checked, own []arrow.Array, err error) {
	if len(cols) != len(schema.Fields()) {
		return nil, nil, fmt.Errorf("batch has %d columns, schema %d: %w", len(cols), len(schema.Fields()), ErrInvalidBatch)
	}
	for i, a := range cols {
		f := schema.Field(i)
		if isNil(a) {
			return nil, own, fmt.Errorf("column %q: nil array: %w", f.Name, ErrInvalidBatch)
		}
		if int64(a.Len()) != n {
			return nil, own, fmt.Errorf("column %q has %d rows, batch %d: %w", f.Name, a.Len(), n, ErrInvalidBatch)
		}
		if d := a.Data(); !arrow.TypeEqual(a.DataType(), f.Type) || !isNil(d) && !arrow.TypeEqual(d.DataType(), f.Type) {
			return nil, own, fmt.Errorf("column %q holds %s, schema %s: %w", f.Name, a.DataType(), f.Type, ErrInvalidBatch)
		}
		va, err := validateColumn(a, f, dicts)
		if err != nil {
			return nil, own, err
		}
		if va != a {
			if checked == nil {
				checked = slices.Clone(cols)
			}
			checked[i] = va
			own = append(own, va)
		}
	}
	if checked == nil {
		checked = cols
	}
	return checked, own, nil
}

func (w *Writer) usable() error {
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return fmt.Errorf("%w: %v", ErrFailed, w.err)
	}
	return nil
}

func (w *Writer) fail(err error) error {
	if w.err == nil {
		w.err = err
	}
	return err
}

// Close writes the remaining pages, the schema, the column metadata and the
// footer. It returns ErrClosed when called twice.
func (w *Writer) Close() error {
	if w.closed {
		return ErrClosed
	}
	w.closed = true
	err := w.err
	if err == nil {
		err = w.finish()
	}
	w.pipe.stop()
	for _, c := range w.cols {
		c.release()
	}
	w.dicts = dictCache{}
	if w.onClose != nil {
		err = w.onClose(err)
	}
	return err
}

func (w *Writer) finish() error {
	for _, c := range w.cols {
		if err := c.flush(w); err != nil {
			return w.fail(err)
		}
	}
	if err := w.pipe.drain(w); err != nil {
		return w.fail(err)
	}
	fd := &filepb.FileDescriptor{Schema: w.lschema, Length: uint64(w.rows)}
	fdBytes, err := proto.MarshalOptions{Deterministic: true}.Marshal(fd)
	if err != nil {
		return w.fail(err)
	}
	if err := w.sink.pad(); err != nil {
		return w.fail(err)
	}
	schemaPos := w.sink.pos
	if err := w.sink.write(fdBytes); err != nil {
		return w.fail(err)
	}
	colEnc, err := columnEncoding()
	if err != nil {
		return w.fail(err)
	}
	meta := make([][]byte, len(w.cols))
	for i, c := range w.cols {
		cm := &file2pb.ColumnMetadata{Encoding: colEnc, Pages: c.pages}
		if meta[i], err = (proto.MarshalOptions{Deterministic: true}).Marshal(cm); err != nil {
			return w.fail(err)
		}
	}
	major, minor := w.cfg.format.footerVersion()
	gbo := []format.BufferRange{{Position: schemaPos, Size: uint64(len(fdBytes))}}
	if err := w.sink.write(format.AppendTail(nil, w.sink.pos, meta, gbo, major, minor)); err != nil {
		return w.fail(err)
	}
	return nil
}

// columnEncoding is the fixed column-level encoding of every 2.1+ column.
func columnEncoding() (*file2pb.Encoding, error) {
	b, err := format.MarshalAny(format.URLColumnEncoding, &enc20pb.ColumnEncoding{
		ColumnEncoding: &enc20pb.ColumnEncoding_Values{Values: &emptypb.Empty{}},
	})
	if err != nil {
		return nil, err
	}
	return &file2pb.Encoding{Location: &file2pb.Encoding_Direct{Direct: &file2pb.DirectEncoding{Encoding: b}}}, nil
}

// sink tracks the file position and aligns buffers.
type sink struct {
	w     io.Writer
	pos   uint64
	stage []byte // writeBufferParts' small parts, gathered
}

var padding [format.Alignment]byte

func init() {
	for i := range padding {
		padding[i] = format.PadByte
	}
}

func (s *sink) write(b []byte) error {
	n, err := s.w.Write(b)
	s.pos += uint64(n)
	if err == nil && n != len(b) {
		err = io.ErrShortWrite
	}
	return err
}

// pad moves the position to the next 64-byte boundary.
func (s *sink) pad() error {
	if p := format.PadLen(s.pos, format.Alignment); p > 0 {
		return s.write(padding[:p])
	}
	return nil
}

// writeBuffer writes one aligned buffer and returns its position.
func (s *sink) writeBuffer(b []byte) (uint64, error) {
	if err := s.pad(); err != nil {
		return 0, err
	}
	pos := s.pos
	return pos, s.write(b)
}

// writeBufferParts is writeBuffer of the parts written back to back as
// one buffer; it returns its position and size. Small parts are gathered
// into writes of up to stageBytes (the writer may be a file, each write a
// system call); a part of stageBytes or more is written as it is.
func (s *sink) writeBufferParts(parts [][]byte) (uint64, int, error) {
	if len(parts) == 1 {
		pos, err := s.writeBuffer(parts[0])
		return pos, len(parts[0]), err
	}
	if err := s.pad(); err != nil {
		return 0, 0, err
	}
	pos, n := s.pos, 0
	flush := func() error {
		err := s.write(s.stage)
		s.stage = s.stage[:0]
		return err
	}
	for _, b := range parts {
		n += len(b)
		if len(b) >= stageBytes {
			if err := flush(); err != nil {
				return 0, 0, err
			}
			if err := s.write(b); err != nil {
				return 0, 0, err
			}
			continue
		}
		if len(s.stage)+len(b) > stageBytes {
			if err := flush(); err != nil {
				return 0, 0, err
			}
		}
		if s.stage == nil {
			s.stage = make([]byte, 0, stageBytes)
		}
		s.stage = append(s.stage, b...)
	}
	if err := flush(); err != nil {
		return 0, 0, err
	}
	return pos, n, nil
}

// stageBytes is the most a sink gathers of small parts into one write.
const stageBytes = 1 << 20
