package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/planarlance/planar/internal/bulk"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/writer"
)

// classesWorkerFlag, as the first argument, makes the binary run one
// measurement of the classes suite (a classJob in JSON as the second
// argument) with planar or pqarrow and print a classMeasurement as JSON.
const classesWorkerFlag = "-classes-worker"

// classJob is one measurement of the classes suite; pylance_bench.py's
// "classes" command takes the same JSON.
type classJob struct {
	Kind        string `json:"kind"` // planar, pylance, parquet or raw (writeRaw)
	IPC         string `json:"ipc"`
	Out         string `json:"out"`
	Takes       string `json:"takes"` // JSON file of the take indices (takeSets)
	Policy      string `json:"policy,omitempty"`
	Version     string `json:"version"`
	Concurrency int    `json:"concurrency,omitempty"`
}

// classMeasurement is what one process measured: the write, a ReadAll and
// the two takes, each with the writer's own reader; times in seconds.
type classMeasurement struct {
	FileBytes   int64   `json:"file_bytes"`
	WriteSec    float64 `json:"write_s"`     // wall time of the write alone
	WriteCPUSec float64 `json:"write_cpu_s"` // user+sys CPU time of the process during the write
	ReadAllSec  float64 `json:"readall_s"`   // open and read every row
	Take100Sec  float64 `json:"take100_s"`   // the take alone, on a freshly opened file
	Take10kSec  float64 `json:"take10k_s"`
	// CPU time (user+sys) of the same, less noisy than the wall time on a
	// shared machine.
	ReadAllCPUSec float64 `json:"readall_cpu_s"`
	Take100CPUSec float64 `json:"take100_cpu_s"`
	Take10kCPUSec float64 `json:"take10k_cpu_s"`
	// ReadBack and TakeBack are "ok" when the rows read equal the input's.
	ReadBack string `json:"read_back"`
	TakeBack string `json:"take_back"`
	MaxRSSKB int64  `json:"max_rss_kb,omitempty"`
	Error    string `json:"error,omitempty"`
}

func classesWorkerMain(args []string, stdout io.Writer) int {
	return runWorker(classesWorkerFlag, args, stdout, func(j classJob) any {
		m, err := measureClassJob(j)
		if err != nil {
			m.Error = err.Error()
		}
		m.MaxRSSKB = maxRSSKB()
		return m
	})
}

// tableFile is a written file opened with its writer's reader.
type tableFile interface {
	// ReadAll reads every row; the chunks are the reader's own.
	ReadAll() (arrow.Table, error)
	Take(indices []int64) (arrow.RecordBatch, error)
	Close() error
}

func measureClassJob(j classJob) (classMeasurement, error) {
	var m classMeasurement
	if j.Concurrency > 0 {
		// The one-core side runs on one core: the writer's goroutines,
		// the reader's and the Go runtime's (the collector too), so that
		// "all cores ÷ 1 core" is the scaling the issue asks for.
		// (writer.WithConcurrency(1) alone left the collector and the
		// writer's background work on the other core: about 1.5 cores.)
		runtime.GOMAXPROCS(j.Concurrency)
	}
	schema, recs, release, err := readIPC(j.IPC)
	if err != nil {
		return m, err
	}
	defer release()
	b, err := os.ReadFile(j.Takes)
	if err != nil {
		return m, err
	}
	var takes takeSets
	if err := json.Unmarshal(b, &takes); err != nil {
		return m, fmt.Errorf("%s: %w", j.Takes, err)
	}
	var write func() error
	var open func() (tableFile, error)
	switch j.Kind {
	case "planar":
		opts, err := planarOptions(j)
		if err != nil {
			return m, err
		}
		write = func() error { return writeFile(j.Out, schema, recs, opts) }
		open = func() (tableFile, error) {
			f, err := reader.OpenPath(j.Out)
			if err != nil {
				return nil, err
			}
			return planarFile{f}, nil
		}
	case "parquet":
		write = func() error { return writeParquet(j.Out, schema, recs) }
		open = func() (tableFile, error) { return openParquet(j.Out) }
	case "raw":
		write = func() error { return writeRaw(j.Out, recs) }
	default:
		return m, fmt.Errorf("kind %q", j.Kind)
	}

	runtime.GC()
	cpu0, t0 := cpuSeconds(), time.Now()
	if err := write(); err != nil {
		return m, fmt.Errorf("write: %w", err)
	}
	m.WriteSec, m.WriteCPUSec = time.Since(t0).Seconds(), cpuSeconds()-cpu0
	st, err := os.Stat(j.Out)
	if err != nil {
		return m, err
	}
	m.FileBytes = st.Size()
	if open == nil {
		return m, nil // (the raw copy: a write alone)
	}

	runtime.GC()
	cpu0, t0 = cpuSeconds(), time.Now()
	f, err := open()
	if err != nil {
		return m, fmt.Errorf("open: %w", err)
	}
	tbl, err := f.ReadAll()
	m.ReadAllSec, m.ReadAllCPUSec = time.Since(t0).Seconds(), cpuSeconds()-cpu0
	f.Close()
	if err != nil {
		return m, fmt.Errorf("read all: %w", err)
	}
	m.ReadBack = compareTable(tbl, recs)
	tbl.Release()

	input, err := concatRecords(schema, recs)
	if err != nil {
		return m, err
	}
	defer input.Release()
	m.TakeBack = "ok"
	for _, t := range []struct {
		rows     []int64
		sec, cpu *float64
	}{{takes.Small, &m.Take100Sec, &m.Take100CPUSec}, {takes.Large, &m.Take10kSec, &m.Take10kCPUSec}} {
		f, err := open()
		if err != nil {
			return m, fmt.Errorf("open: %w", err)
		}
		runtime.GC()
		cpu0, t0 = cpuSeconds(), time.Now()
		got, err := f.Take(t.rows)
		*t.sec, *t.cpu = time.Since(t0).Seconds(), cpuSeconds()-cpu0
		f.Close()
		if err != nil {
			return m, fmt.Errorf("take of %d rows: %w", len(t.rows), err)
		}
		if d := compareTake(got, input, t.rows); d != "ok" && m.TakeBack == "ok" {
			m.TakeBack = d
		}
		got.Release()
	}
	return m, nil
}

// writeRaw is the raw limit of a write (issue 26): every buffer of the
// batches' arrays, children's included, copied into fresh memory a batch at
// a time and written to path as planar's files are (writeBuffered). No
// encoder can write the batches faster on this machine.
func writeRaw(path string, recs []arrow.RecordBatch) error {
	return writeBuffered(path, func(out io.Writer) error {
		var bufs [][]byte
		var walk func(d arrow.ArrayData)
		walk = func(d arrow.ArrayData) {
			for _, b := range d.Buffers() {
				if b != nil && b.Len() > 0 {
					bufs = append(bufs, b.Bytes())
				}
			}
			for _, c := range d.Children() {
				walk(c)
			}
		}
		for _, r := range recs {
			bufs = bufs[:0]
			for _, col := range r.Columns() {
				walk(col.Data())
			}
			n := 0
			for _, b := range bufs {
				n += len(b)
			}
			dst := bulk.Make(n)
			for _, b := range bufs {
				dst = bulk.Append(dst, b)
			}
			if _, err := out.Write(dst); err != nil {
				return err
			}
		}
		return nil
	})
}

func planarOptions(j classJob) ([]writer.Option, error) {
	var opts []writer.Option
	switch j.Policy {
	case "cost":
		opts = append(opts, writer.WithPolicy(selector.PolicyCost))
	case "lance":
		opts = append(opts, writer.WithPolicy(selector.PolicyLance))
	default:
		return nil, fmt.Errorf("policy %q", j.Policy)
	}
	format, err := writer.ParseFormat(j.Version)
	if err != nil {
		return nil, err
	}
	opts = append(opts, writer.WithFormat(format))
	if j.Concurrency > 0 {
		opts = append(opts, writer.WithConcurrency(j.Concurrency))
	}
	return opts, nil
}

// planarFile is planar's reader.
type planarFile struct{ *reader.File }

func (f planarFile) ReadAll() (arrow.Table, error) {
	rec, err := f.File.ReadAll()
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	return array.NewTableFromRecords(rec.Schema(), []arrow.RecordBatch{rec}), nil
}

// writeParquet writes recs with pqarrow, one row group per batch, zstd at
// its default level, the Arrow schema stored so that the types read back,
// through a 1 MiB buffer (no fsync, like the other sides).
func writeParquet(path string, schema *arrow.Schema, recs []arrow.RecordBatch) error {
	return writeBuffered(path, func(out io.Writer) error {
		props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd))
		w, err := pqarrow.NewFileWriter(schema, out, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				w.Close()
				return err
			}
		}
		return w.Close()
	})
}

// parquetFile is pqarrow's reader over a file read with pread.
type parquetFile struct {
	fh *os.File
	pf *file.Reader
	fr *pqarrow.FileReader
}

func openParquet(path string) (*parquetFile, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	pf, err := file.NewParquetReader(fh)
	if err != nil {
		fh.Close()
		return nil, err
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: batchRows}, memory.DefaultAllocator)
	if err != nil {
		pf.Close()
		fh.Close()
		return nil, err
	}
	return &parquetFile{fh: fh, pf: pf, fr: fr}, nil
}

func (p *parquetFile) ReadAll() (arrow.Table, error) { return p.fr.ReadTable(context.Background()) }

func (p *parquetFile) Close() error {
	p.pf.Close()
	return p.fh.Close()
}

// Take reads the row groups that hold the indices, then takes the rows
// from their columns (pqarrow has no row-level take).
func (p *parquetFile) Take(indices []int64) (arrow.RecordBatch, error) {
	md := p.pf.MetaData()
	starts := make([]int64, md.NumRowGroups()+1)
	for g := range md.NumRowGroups() {
		starts[g+1] = starts[g] + md.RowGroup(g).NumRows()
	}
	// The row groups needed, and each one's first row in what is read.
	need := make([]bool, md.NumRowGroups())
	group := make([]int, len(indices))
	for k, i := range indices {
		if i < 0 || i >= starts[len(starts)-1] {
			return nil, fmt.Errorf("row %d of %d", i, starts[len(starts)-1])
		}
		g := 0
		if k > 0 && indices[k-1] <= i {
			g = group[k-1] // sorted indices: continue from the last group
		}
		for starts[g+1] <= i {
			g++
		}
		group[k], need[g] = g, true
	}
	var groups []int
	local := make([]int64, md.NumRowGroups())
	var n int64
	for g, ok := range need {
		if ok {
			groups = append(groups, g)
			local[g] = n
			n += starts[g+1] - starts[g]
		}
	}
	leaves := make([]int, md.Schema.NumColumns())
	for i := range leaves {
		leaves[i] = i
	}
	tbl, err := p.fr.ReadRowGroups(context.Background(), leaves, groups)
	if err != nil {
		return nil, err
	}
	defer tbl.Release()
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	defer ib.Release()
	ib.Reserve(len(indices))
	for k, i := range indices {
		ib.UnsafeAppend(local[group[k]] + i - starts[group[k]])
	}
	idx := ib.NewArray()
	defer idx.Release()
	cols := make([]arrow.Array, 0, tbl.NumCols())
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for c := range int(tbl.NumCols()) {
		a, err := takeChunked(tbl.Column(c).Data().Chunks(), idx)
		if err != nil {
			return nil, err
		}
		cols = append(cols, a)
	}
	return array.NewRecordBatch(tbl.Schema(), cols, int64(len(indices))), nil
}

// takeChunked takes rows idx of the chunks read as one array.
func takeChunked(chunks []arrow.Array, idx arrow.Array) (arrow.Array, error) {
	var whole arrow.Array
	if len(chunks) == 1 {
		whole = chunks[0]
		whole.Retain()
	} else {
		var err error
		if whole, err = array.Concatenate(chunks, memory.DefaultAllocator); err != nil {
			return nil, err
		}
	}
	defer whole.Release()
	return compute.TakeArray(context.Background(), whole, idx)
}

// concatRecords is the input as one batch (the expected rows of a take).
func concatRecords(schema *arrow.Schema, recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, schema.NumFields())
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	for c := range cols {
		chunks := make([]arrow.Array, len(recs))
		for k, r := range recs {
			chunks[k] = r.Column(c)
		}
		a, err := array.Concatenate(chunks, memory.DefaultAllocator)
		if err != nil {
			for _, d := range cols[:c] {
				d.Release()
			}
			return nil, err
		}
		cols[c] = a
	}
	rec := array.NewRecordBatch(schema, cols, rows)
	for _, c := range cols {
		c.Release()
	}
	return rec, nil
}

// compareTable says "ok" if tbl holds the rows of recs, else where it
// differs.
func compareTable(tbl arrow.Table, recs []arrow.RecordBatch) string {
	tr := array.NewTableReader(tbl, -1)
	defer tr.Release()
	var got []arrow.RecordBatch
	for tr.Next() {
		r := tr.RecordBatch()
		r.Retain()
		got = append(got, r)
	}
	defer func() {
		for _, r := range got {
			r.Release()
		}
	}()
	all, err := concatRecords(tbl.Schema(), got)
	if err != nil {
		return err.Error()
	}
	defer all.Release()
	return compare(all, recs)
}

// compareTake says "ok" if got holds the rows rows of input.
func compareTake(got, input arrow.RecordBatch, rows []int64) string {
	if got.NumRows() != int64(len(rows)) {
		return fmt.Sprintf("take of %d rows returned %d", len(rows), got.NumRows())
	}
	ib := array.NewInt64Builder(memory.DefaultAllocator)
	defer ib.Release()
	ib.AppendValues(rows, nil)
	idx := ib.NewArray()
	defer idx.Release()
	for c := range int(input.NumCols()) {
		want, err := compute.TakeArray(context.Background(), input.Column(c), idx)
		if err != nil {
			return err.Error()
		}
		g := sameTypeAs(got.Column(c), want.DataType())
		eq := array.Equal(g, want)
		g.Release()
		want.Release()
		if !eq {
			return fmt.Sprintf("take of %d rows: column %q differs", len(rows), input.ColumnName(c))
		}
	}
	return "ok"
}

// sameTypeAs returns a (retained) typed as t when the two types differ only
// in the nullability of nested fields (Lance stores none for a list's item:
// both Lance readers return a nullable item), else a itself, retained.
func sameTypeAs(a arrow.Array, t arrow.DataType) arrow.Array {
	d, ok := retype(a.Data(), t)
	if !ok {
		a.Retain()
		return a
	}
	defer d.Release()
	return array.MakeFromData(d)
}

func retype(d arrow.ArrayData, t arrow.DataType) (arrow.ArrayData, bool) {
	if arrow.TypeEqual(d.DataType(), t) {
		d.Retain()
		return d, true
	}
	have, ok1 := d.DataType().(arrow.NestedType)
	want, ok2 := t.(arrow.NestedType)
	if !ok1 || !ok2 || have.ID() != want.ID() || len(have.Fields()) != len(want.Fields()) || len(d.Children()) != len(want.Fields()) {
		return nil, false
	}
	if fsl, ok := t.(*arrow.FixedSizeListType); ok && fsl.Len() != have.(*arrow.FixedSizeListType).Len() {
		return nil, false
	}
	children := make([]arrow.ArrayData, 0, len(d.Children()))
	defer func() {
		for _, c := range children {
			c.Release()
		}
	}()
	for i, f := range want.Fields() {
		if have.Fields()[i].Name != f.Name {
			return nil, false
		}
		c, ok := retype(d.Children()[i], f.Type)
		if !ok {
			return nil, false
		}
		children = append(children, c)
	}
	return array.NewData(t, d.Len(), d.Buffers(), children, d.NullN(), d.Offset()), true
}
