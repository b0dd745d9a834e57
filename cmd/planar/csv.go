package main

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// CSV sources are read with encoding/csv into arrow-go builders rather than
// arrow-go's csv reader, whose errors name neither the row nor the column of
// a value that does not parse, and which infers types from the first row
// only. Here types are inferred from the first csvOptions.inferRows rows (or
// given with --schema) and a bad value fails with a csvError naming its row,
// line, column and value.

type csvOptions struct {
	header    bool
	delim     rune
	schema    string   // "name:type,..." or "" to infer
	nulls     []string // values read as null in non-string columns
	inferRows int
}

// csvTypes are the types --schema accepts, by name.
var csvTypes = map[string]arrow.DataType{
	"int32":     arrow.PrimitiveTypes.Int32,
	"int64":     arrow.PrimitiveTypes.Int64,
	"float32":   arrow.PrimitiveTypes.Float32,
	"float64":   arrow.PrimitiveTypes.Float64,
	"bool":      arrow.FixedWidthTypes.Boolean,
	"string":    arrow.BinaryTypes.String,
	"date32":    arrow.FixedWidthTypes.Date32,
	"timestamp": &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"},
}

func csvTypeNames() string {
	names := make([]string, 0, len(csvTypes))
	for k := range csvTypes {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// pyarrowNulls are the values pyarrow's CSV reader reads as null in
// non-string columns by default (ConvertOptions().null_values of pyarrow
// 23): R and pandas write NA, spreadsheets #N/A, databases NULL.
var pyarrowNulls = []string{"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "N/A", "NA", "NULL", "NaN", "n/a", "nan", "null"}

// timeUnits are the units --schema accepts in timestamp[unit].
var timeUnits = map[string]arrow.TimeUnit{"s": arrow.Second, "ms": arrow.Millisecond, "us": arrow.Microsecond, "ns": arrow.Nanosecond}

// parseCSVSchema parses "id:int64 not null,name:string,t:timestamp[ms]".
func parseCSVSchema(s string) (*arrow.Schema, error) {
	var fields []arrow.Field
	for _, part := range strings.Split(s, ",") {
		name, typ, ok := strings.Cut(strings.TrimSpace(part), ":")
		typ = strings.TrimSpace(typ)
		nullable := true
		if t, cut := strings.CutSuffix(strings.ToLower(typ), "not null"); cut {
			typ, nullable = strings.TrimSpace(typ[:len(t)]), false
		}
		dt, known := csvTypes[typ]
		if u, isTS := strings.CutPrefix(typ, "timestamp["); isTS && strings.HasSuffix(u, "]") {
			unit, okUnit := timeUnits[strings.TrimSuffix(u, "]")]
			dt, known = &arrow.TimestampType{Unit: unit, TimeZone: "UTC"}, okUnit
		}
		if !ok || name == "" || !known {
			return nil, fmt.Errorf("--schema entry %q: want name:type [not null] with type one of %s, or timestamp[s|ms|us|ns] (UTC): %w", part, csvTypeNames(), errUsage)
		}
		fields = append(fields, arrow.Field{Name: strings.TrimSpace(name), Type: dt, Nullable: nullable})
	}
	return arrow.NewSchema(fields, nil), nil
}

// csvError is a value that does not parse as its column's type.
type csvError struct {
	row, line int64
	column    string
	value     string
	typ       arrow.DataType
	null      bool // a null in a not-null column
}

func (e *csvError) Error() string {
	if e.null {
		return fmt.Sprintf("row %d (line %d), column %q: %q reads as null, and the column is not null", e.row, e.line, e.column, e.value)
	}
	return fmt.Sprintf("row %d (line %d), column %q: %q is not a valid %s", e.row, e.line, e.column, e.value, e.typ)
}

func (e *csvError) Unwrap() error { return errSource }

type csvRow struct {
	fields []string
	line   int64
}

var errNullInNotNull = errors.New("a null in a not-null column")

// csvRecords reads CSV rows into record batches: an array.RecordReader.
type csvRecords struct {
	r         *csv.Reader
	schema    *arrow.Schema
	nulls     []string
	pending   []csvRow // rows read for inference, not yet delivered
	batch     int
	row       int64 // data rows delivered
	bld       *array.RecordBuilder
	cur       arrow.RecordBatch
	err       error
	colBytes  map[string]int64 // the source's, updated per batch
	textBytes []int64          // per column, this batch
}

func (s *source) openCSV(cf *countingFile, o sourceOptions) error {
	r := csv.NewReader(bufio.NewReaderSize(cf, 1<<20))
	r.Comma = o.csv.delim
	r.ReuseRecord = true
	r.FieldsPerRecord = -1 // counted here, to name the row
	x := &csvRecords{r: r, nulls: o.csv.nulls, batch: int(o.batchRows), colBytes: s.colBytes}
	var names []string
	if o.csv.header {
		rec, err := r.Read()
		if err != nil {
			return fmt.Errorf("source %s: reading the CSV header: %v: %w", s.path, err, errSource)
		}
		names = slices.Clone(rec)
	}
	if o.csv.schema != "" {
		sc, err := parseCSVSchema(o.csv.schema)
		if err != nil {
			return err
		}
		if names != nil && len(names) != sc.NumFields() {
			return fmt.Errorf("source %s: the header has %d columns, --schema %d: %w", s.path, len(names), sc.NumFields(), errSource)
		}
		x.schema = sc
	} else {
		for len(x.pending) < o.csv.inferRows {
			rec, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("source %s: %v: %w", s.path, err, errSource)
			}
			line, _ := r.FieldPos(0)
			x.pending = append(x.pending, csvRow{fields: slices.Clone(rec), line: int64(line)})
		}
		n := len(names)
		if n == 0 && len(x.pending) > 0 {
			n = len(x.pending[0].fields)
		}
		if n == 0 {
			return fmt.Errorf("source %s: empty CSV, no columns: %w", s.path, errSource)
		}
		fields := make([]arrow.Field, n)
		for c := range fields {
			name := fmt.Sprintf("c%d", c)
			if names != nil {
				name = names[c]
			}
			fields[c] = arrow.Field{Name: name, Type: x.infer(c), Nullable: true}
		}
		x.schema = arrow.NewSchema(fields, nil)
	}
	x.bld = array.NewRecordBuilder(memory.DefaultAllocator, x.schema)
	x.textBytes = make([]int64, x.schema.NumFields())
	s.rr, s.schema = x, x.schema
	if o.csv.schema != "" {
		s.colBytesHow = "CSV text of the column's fields"
	} else {
		s.colBytesHow = fmt.Sprintf("CSV text of the column's fields; types inferred from the first %d rows", o.csv.inferRows)
	}
	return nil
}

// infer picks the narrowest type every non-null value of column c in the
// buffered rows parses as: int64, float64, bool, date32, timestamp, else
// string.
func (x *csvRecords) infer(c int) arrow.DataType {
	order := []arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Boolean, arrow.FixedWidthTypes.Date32, csvTypes["timestamp"]}
	k, seen := 0, false
	for _, row := range x.pending {
		if c >= len(row.fields) || x.isNull(row.fields[c]) {
			continue
		}
		seen = true
		for k < len(order) && !parses(order[k], row.fields[c]) {
			k++
		}
		if k == len(order) {
			break
		}
	}
	if !seen || k == len(order) {
		return arrow.BinaryTypes.String
	}
	return order[k]
}

func (x *csvRecords) isNull(v string) bool { return slices.Contains(x.nulls, v) }

func parses(dt arrow.DataType, v string) bool {
	switch dt.ID() {
	case arrow.INT64:
		_, err := strconv.ParseInt(v, 10, 64)
		return err == nil
	case arrow.FLOAT64:
		_, err := strconv.ParseFloat(v, 64)
		return err == nil
	case arrow.BOOL:
		_, err := strconv.ParseBool(v)
		return err == nil
	case arrow.DATE32:
		_, err := time.Parse(time.DateOnly, v)
		return err == nil
	case arrow.TIMESTAMP:
		_, err := parseTime(v)
		return err == nil
	}
	return true
}

func parseTime(v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		t, err = time.Parse("2006-01-02 15:04:05.999999999", v)
	}
	return t, err
}

func (x *csvRecords) Retain()                        {}
func (x *csvRecords) Release()                       { x.drop(); x.bld.Release() }
func (x *csvRecords) Schema() *arrow.Schema          { return x.schema }
func (x *csvRecords) RecordBatch() arrow.RecordBatch { return x.cur }
func (x *csvRecords) Record() arrow.RecordBatch      { return x.cur }
func (x *csvRecords) Err() error                     { return x.err }

func (x *csvRecords) drop() {
	if x.cur != nil {
		x.cur.Release()
		x.cur = nil
	}
}

// Next reads up to a batch of rows. A bad row stops the reader with a
// csvError and nothing of its batch is delivered.
func (x *csvRecords) Next() bool {
	x.drop()
	if x.err != nil {
		return false
	}
	n := 0
	for n < x.batch {
		var fields []string
		var line int64
		if len(x.pending) > 0 {
			fields, line = x.pending[0].fields, x.pending[0].line
			x.pending = x.pending[1:]
		} else {
			rec, err := x.r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				x.fail(fmt.Errorf("row %d: %v: %w", x.row+int64(n)+1, err, errSource))
				return false
			}
			l, _ := x.r.FieldPos(0)
			fields, line = rec, int64(l)
		}
		if len(fields) != x.schema.NumFields() {
			x.fail(fmt.Errorf("row %d (line %d): %d fields, want %d: %w", x.row+int64(n)+1, line, len(fields), x.schema.NumFields(), errSource))
			return false
		}
		for c, v := range fields {
			if err := x.append(c, v); err != nil {
				x.fail(&csvError{row: x.row + int64(n) + 1, line: line, column: x.schema.Field(c).Name, value: v, typ: x.schema.Field(c).Type,
					null: errors.Is(err, errNullInNotNull)})
				return false
			}
		}
		n++
	}
	if n == 0 {
		return false
	}
	x.row += int64(n)
	x.cur = x.bld.NewRecordBatch()
	for c, b := range x.textBytes {
		x.colBytes[x.schema.Field(c).Name] += b
		x.textBytes[c] = 0
	}
	return true
}

func (x *csvRecords) fail(err error) {
	x.err = err
	// Builders hold a partial batch; start afresh so nothing of it leaks.
	x.bld.Release()
	x.bld = array.NewRecordBuilder(memory.DefaultAllocator, x.schema)
}

// append parses v into column c's builder.
func (x *csvRecords) append(c int, v string) error {
	f := x.schema.Field(c)
	x.textBytes[c] += int64(len(v)) + 1
	b := x.bld.Field(c)
	if f.Type.ID() != arrow.STRING && x.isNull(v) {
		if !f.Nullable {
			return errNullInNotNull
		}
		b.AppendNull()
		return nil
	}
	switch b := b.(type) {
	case *array.Int64Builder:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return err
		}
		b.Append(n)
	case *array.Int32Builder:
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return err
		}
		b.Append(int32(n))
	case *array.Float64Builder:
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return err
		}
		b.Append(n)
	case *array.Float32Builder:
		n, err := strconv.ParseFloat(v, 32)
		if err != nil {
			return err
		}
		b.Append(float32(n))
	case *array.BooleanBuilder:
		n, err := strconv.ParseBool(v)
		if err != nil {
			return err
		}
		b.Append(n)
	case *array.Date32Builder:
		t, err := time.Parse(time.DateOnly, v)
		if err != nil {
			return err
		}
		b.Append(arrow.Date32FromTime(t))
	case *array.TimestampBuilder:
		t, err := parseTime(v)
		if err != nil {
			return err
		}
		ts, err := arrow.TimestampFromTime(t, f.Type.(*arrow.TimestampType).Unit)
		if err != nil {
			return err
		}
		b.Append(ts)
	case *array.StringBuilder:
		b.Append(v)
	default:
		return errors.New("unsupported CSV column type")
	}
	return nil
}
