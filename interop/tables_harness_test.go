package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	lds "github.com/planarlance/planar/dataset"
)

// The harness of the table interop tests (tables_test.go,
// tables_differential_test.go): tables that pylance 14 and LanceDB 0.40
// (Lance 13) edit, and planar reads and edits, every read compared row by
// row with pylance's view of the same version.
//
// Clients run in one long-lived tables_worker.py process, shared by the
// tests of the package run and stopped by TestMain.

// tblWorker is one tables_worker.py process.
type tblWorker struct {
	mu      sync.Mutex
	py      string
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	stderr  *bytes.Buffer
	version string
}

func startTblWorker(py string) (*tblWorker, error) {
	w := &tblWorker{py: py, stderr: &bytes.Buffer{}}
	w.cmd = exec.Command(py, "tables_worker.py")
	w.cmd.Stderr = w.stderr
	var err error
	if w.in, err = w.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := w.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	w.out = bufio.NewReader(out)
	if err := w.cmd.Start(); err != nil {
		return nil, err
	}
	var hello struct {
		Ready   bool   `json:"ready"`
		Pylance string `json:"pylance"`
		LanceDB string `json:"lancedb"`
		PyArrow string `json:"pyarrow"`
	}
	line, err := w.out.ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(line, &hello)
	}
	if err != nil || !hello.Ready {
		w.stop()
		return nil, fmt.Errorf("tables_worker.py did not start (is lancedb installed? run `sh interop/setup.sh`): %v\n%s", err, w.stderr.String())
	}
	w.version = fmt.Sprintf("pylance %s, lancedb %s, pyarrow %s", hello.Pylance, hello.LanceDB, hello.PyArrow)
	return w, nil
}

func (w *tblWorker) stop() {
	w.in.Close()
	_ = w.cmd.Process.Kill()
	_ = w.cmd.Wait()
}

// tblField is a field of the schema pylance reports.
type tblField struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Nullable bool   `json:"nullable"`
}

// tblReply is the worker's answer (the fields of every op in one struct).
type tblReply struct {
	OK          bool              `json:"ok"`
	Stage       string            `json:"stage"`
	Error       string            `json:"error"`
	Trace       string            `json:"trace"`
	Version     uint64            `json:"version"`
	Storage     string            `json:"storage"`
	Count       int64             `json:"count"`
	Rows        int64             `json:"rows"`
	Schema      []tblField        `json:"schema"`
	Versions    []uint64          `json:"versions"`
	Config      map[string]string `json:"config"`
	Indices     []string          `json:"indices"`
	TakeOffsets [][]int64         `json:"take_offsets"`
	RowIDs      [][2]uint64       `json:"rowids"`
	RowIDUnique bool              `json:"rowid_unique"`
	Counts      map[string]int64  `json:"counts"`
	Validate    *string           `json:"validate"`
	LDB         *string           `json:"ldb"`
	Changed     bool              `json:"changed"`
	UpdatedRows int64             `json:"rows_updated"`
	// Crash is set when the process died on the request.
	Crash bool `json:"-"`
}

func (r tblReply) err() error {
	if r.OK {
		return nil
	}
	msg := r.Error
	if r.Stage != "" {
		msg = r.Stage + ": " + msg
	}
	if r.Crash {
		msg = "worker crashed: " + msg
	}
	return errors.New(msg)
}

// call sends one request; if the process dies it is restarted and the reply
// says Crash.
func (w *tblWorker) call(req map[string]any) tblReply {
	w.mu.Lock()
	defer w.mu.Unlock()
	b, err := json.Marshal(req)
	if err != nil {
		return tblReply{Stage: "request", Error: err.Error()}
	}
	w.stderr.Reset()
	if _, err := w.in.Write(append(b, '\n')); err == nil {
		if line, err := w.out.ReadBytes('\n'); err == nil {
			var r tblReply
			if err := json.Unmarshal(line, &r); err == nil {
				return r
			} else {
				return tblReply{Stage: "reply", Error: fmt.Sprintf("%v: %s", err, line)}
			}
		}
	}
	msg := strings.TrimSpace(w.stderr.String())
	if len(msg) > 2000 {
		msg = "..." + msg[len(msg)-2000:]
	}
	w.stop()
	nw, err := startTblWorker(w.py)
	if err != nil {
		msg += "; restart failed: " + err.Error()
	} else {
		w.cmd, w.in, w.out, w.stderr = nw.cmd, nw.in, nw.out, nw.stderr
	}
	return tblReply{Stage: fmt.Sprint(req["op"]), Error: "process died: " + msg, Crash: true}
}

var tblShared struct {
	sync.Mutex
	w   *tblWorker
	err error
}

// sharedTblWorker starts the package's worker once (python(t) fails under
// CI=true, skips loudly otherwise, when the venv is missing).
func sharedTblWorker(t testing.TB) *tblWorker {
	t.Helper()
	py := python(t)
	tblShared.Lock()
	defer tblShared.Unlock()
	if tblShared.w == nil && tblShared.err == nil {
		tblShared.w, tblShared.err = startTblWorker(py)
	}
	if tblShared.err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI: " + tblShared.err.Error())
		}
		t.Skip("!!!!! SKIPPING TABLE INTEROP TESTS: " + tblShared.err.Error() + " !!!!!")
	}
	t.Logf("tables worker: %s", tblShared.w.version)
	return tblShared.w
}

func stopSharedTblWorker() {
	tblShared.Lock()
	defer tblShared.Unlock()
	if tblShared.w != nil {
		tblShared.w.stop()
		tblShared.w = nil
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	stopSharedTblWorker()
	os.Exit(code)
}

// tblSchema is the tables' starting schema.
var tblSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "vector", Type: arrow.FixedSizeListOf(8, arrow.PrimitiveTypes.Float32), Nullable: true},
	{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "cat", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "val", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

// tblGen builds rows for any schema of the tables: every value is a function
// of the row's id, the column's name and salt (so that merge_insert and
// update change values visibly). Non-nullable fields get no nulls; "id" is
// the id.
func tblGen(s *arrow.Schema, ids []int64, salt int64) (arrow.RecordBatch, error) {
	mem := memory.DefaultAllocator
	cols := make([]arrow.Array, 0, s.NumFields())
	release := func() {
		for _, c := range cols {
			c.Release()
		}
	}
	for _, f := range s.Fields() {
		b := array.NewBuilder(mem, f.Type)
		null := func(id int64, m, r int64) bool { return f.Nullable && f.Name != "id" && ((id+salt)%m+m)%m == r }
		for _, id := range ids {
			switch bb := b.(type) {
			case *array.Int64Builder:
				switch {
				case f.Name == "id":
					bb.Append(id)
				case null(id, 9, 4):
					bb.AppendNull()
				default:
					bb.Append(id*7 + salt)
				}
			case *array.Int32Builder:
				if null(id, 9, 4) {
					bb.AppendNull()
				} else {
					bb.Append(int32(id*3 + salt))
				}
			case *array.Float64Builder:
				if null(id, 13, 5) {
					bb.AppendNull()
				} else {
					bb.Append(float64(id)*0.5 + float64(salt))
				}
			case *array.Float32Builder:
				if null(id, 13, 5) {
					bb.AppendNull()
				} else {
					bb.Append(float32(id)*0.5 + float32(salt))
				}
			case *array.StringBuilder:
				switch {
				case f.Name == "cat":
					bb.Append(fmt.Sprintf("c%d", (id+salt)%5))
				case null(id, 11, 3):
					bb.AppendNull()
				default:
					bb.Append(fmt.Sprintf("%s-%d-%d", f.Name, id, salt))
				}
			case *array.LargeStringBuilder:
				if null(id, 11, 3) {
					bb.AppendNull()
				} else {
					bb.Append(fmt.Sprintf("%s-%d-%d", f.Name, id, salt))
				}
			case *array.FixedSizeListBuilder:
				vb, ok := bb.ValueBuilder().(*array.Float32Builder)
				if !ok {
					b.Release()
					release()
					return nil, fmt.Errorf("tblGen: no generator for %s %s", f.Name, f.Type)
				}
				if null(id, 7, 1) {
					bb.AppendNull()
					continue
				}
				bb.Append(true)
				for k := 0; k < int(f.Type.(*arrow.FixedSizeListType).Len()); k++ {
					vb.Append(float32(id) + float32(k)/8 + float32(salt))
				}
			default:
				if !f.Nullable {
					b.Release()
					release()
					return nil, fmt.Errorf("tblGen: no generator for non-nullable %s %s", f.Name, f.Type)
				}
				b.AppendNull()
			}
		}
		cols = append(cols, b.NewArray())
		b.Release()
	}
	rec := array.NewRecordBatch(s, cols, int64(len(ids)))
	release()
	return rec, nil
}

func tblIDs(first int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = first + int64(i)
	}
	return out
}

// tblWriteIPC writes rec to an Arrow IPC file.
func tblWriteIPC(path string, rec arrow.RecordBatch) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(rec.Schema()))
	if err != nil {
		return err
	}
	if err := w.Write(rec); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return f.Close()
}

// tblReadIPC reads an Arrow IPC file into one batch.
func tblReadIPC(path string) (arrow.RecordBatch, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := ipc.NewFileReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer r.Close()
	var recs []arrow.RecordBatch
	for i := 0; i < r.NumRecords(); i++ {
		rec, err := r.Record(i)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		rec.Retain()
		recs = append(recs, rec)
	}
	return tblConcat(r.Schema(), recs)
}

// tblConcat joins batches of one schema into one (releasing them).
func tblConcat(s *arrow.Schema, recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	var n int64
	for _, r := range recs {
		n += r.NumRows()
	}
	cols := make([]arrow.Array, s.NumFields())
	for c := range cols {
		if len(recs) == 0 {
			cols[c] = array.MakeArrayOfNull(memory.DefaultAllocator, s.Field(c).Type, 0)
			continue
		}
		parts := make([]arrow.Array, len(recs))
		for i, r := range recs {
			parts[i] = r.Column(c)
		}
		a, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			return nil, err
		}
		cols[c] = a
	}
	out := array.NewRecordBatch(s, cols, n)
	for _, a := range cols {
		a.Release()
	}
	return out, nil
}

// tblDiffSchema compares planar's schema with pylance's: names, types and
// nullability of the top-level fields, in order.
func tblDiffSchema(what string, got, want *arrow.Schema) []string {
	var out []string
	if got.NumFields() != want.NumFields() {
		return []string{fmt.Sprintf("%s: columns %v, want %v", what, tblNames(got), tblNames(want))}
	}
	for i, w := range want.Fields() {
		g := got.Field(i)
		switch {
		case g.Name != w.Name:
			out = append(out, fmt.Sprintf("%s: columns %v, want %v", what, tblNames(got), tblNames(want)))
			return out
		case g.Nullable != w.Nullable:
			out = append(out, fmt.Sprintf("%s: column %s nullable %v, want %v", what, w.Name, g.Nullable, w.Nullable))
		}
		if d := typeDiff(g.Type, w.Type, w.Name); d != "" {
			out = append(out, fmt.Sprintf("%s: type %s", what, d))
		}
	}
	return out
}

func tblNames(s *arrow.Schema) []string {
	out := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		out[i] = f.Name + ":" + f.Type.String()
	}
	return out
}

// tblDiffBatch compares got with want row by row, after their schemas.
func tblDiffBatch(what string, got, want arrow.RecordBatch, max int) []string {
	out := tblDiffSchema(what, got.Schema(), want.Schema())
	if len(out) > 0 {
		for _, d := range out {
			if !strings.Contains(d, "nullable") {
				return out
			}
		}
	}
	if got.NumRows() != want.NumRows() {
		msg := fmt.Sprintf("%s: %d rows, want %d", what, got.NumRows(), want.NumRows())
		if gi, wi := tblColumn(got, "id"), tblColumn(want, "id"); gi != nil && wi != nil {
			for i := 0; i < gi.Len() && i < wi.Len(); i++ {
				if d := diffSlot(gi, i, wi, i); d != "" {
					msg += fmt.Sprintf("; first differing row %d: id %s, want %s", i, slotString(gi, i), slotString(wi, i))
					break
				}
			}
		}
		return append(out, msg)
	}
	idx := make([]int, want.NumRows())
	for i := range idx {
		idx[i] = i
	}
	for i, f := range want.Schema().Fields() {
		for _, d := range diffColumns(f.Name, rowsOf([]arrow.Array{got.Column(i)}), rowsOf([]arrow.Array{want.Column(i)}), idx, max) {
			out = append(out, what+": "+d)
		}
		if len(out) >= max {
			break
		}
	}
	return out
}

func tblColumn(rec arrow.RecordBatch, name string) arrow.Array {
	k := rec.Schema().FieldIndices(name)
	if len(k) != 1 {
		return nil
	}
	return rec.Column(k[0])
}

// tblProject is want's columns in the order of names.
func tblProject(rec arrow.RecordBatch, names []string) arrow.RecordBatch {
	fields := make([]arrow.Field, len(names))
	cols := make([]arrow.Array, len(names))
	for i, n := range names {
		k := rec.Schema().FieldIndices(n)[0]
		fields[i], cols[i] = rec.Schema().Field(k), rec.Column(k)
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
}

// tblEnv is one test's tables: a directory holding <name>.lance datasets
// (LanceDB opens them as tables of that directory) and the worker.
type tblEnv struct {
	t   testing.TB
	w   *tblWorker
	dir string
	ctx context.Context
	n   int
}

func newTblEnv(t testing.TB) *tblEnv {
	t.Helper()
	w := sharedTblWorker(t)
	return &tblEnv{t: t, w: w, dir: t.TempDir(), ctx: context.Background()}
}

func (e *tblEnv) uri(name string) string { return filepath.Join(e.dir, name+".lance") }

// tmp is a fresh file path in the env's directory.
func (e *tblEnv) tmp(what string) string {
	e.n++
	return filepath.Join(e.dir, fmt.Sprintf("%s-%d", what, e.n))
}

// do runs one worker request and returns the reply (errors in the reply).
func (e *tblEnv) do(req map[string]any) tblReply {
	r := e.w.call(req)
	if !r.OK && r.Trace != "" {
		r.Error += "\n" + r.Trace
	}
	return r
}

// must runs a client request that has to succeed.
func (e *tblEnv) must(req map[string]any) tblReply {
	e.t.Helper()
	r := e.do(req)
	if err := r.err(); err != nil {
		e.t.Fatalf("%s %v: %v", req["op"], tblReqString(req), err)
	}
	return r
}

func tblReqString(req map[string]any) string {
	var parts []string
	for _, k := range []string{"client", "where", "values", "exprs", "field", "columns", "alterations", "column", "version", "target_rows"} {
		if v, ok := req[k]; ok {
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// ipcOf writes rows to a fresh IPC file for the worker.
func (e *tblEnv) ipcOf(rec arrow.RecordBatch) (string, error) {
	p := e.tmp("rows") + ".arrow"
	return p, tblWriteIPC(p, rec)
}

// tblCreate says how a test table is made.
type tblCreate struct {
	Client       string // "planar" or "pylance"
	Storage      string // "" for the client's default (2.2)
	StableRowIDs bool   // pylance only
	V1Names      bool   // pylance only: enable_v2_manifest_paths=False
	Rows         int
	MaxRows      int
}

// create makes the table name with rows 0..Rows-1 of tblSchema.
func (e *tblEnv) create(name string, c tblCreate) (string, error) {
	uri := e.uri(name)
	rec, err := tblGen(tblSchema, tblIDs(0, c.Rows), 0)
	if err != nil {
		return "", err
	}
	defer rec.Release()
	switch c.Client {
	case "planar":
		if c.StableRowIDs || c.V1Names {
			return "", fmt.Errorf("planar cannot create %+v", c)
		}
		opts := []lds.Option{lds.WithMaxRowsPerFile(int64(c.MaxRows))}
		if c.Storage != "" {
			opts = append(opts, lds.WithStorageVersion(c.Storage))
		}
		w, err := lds.Create(e.ctx, uri, tblSchema, opts...)
		if err != nil {
			return "", err
		}
		if err := w.Write(rec); err != nil {
			return "", err
		}
		if _, err := w.Commit(e.ctx); err != nil {
			return "", err
		}
	case "pylance":
		p, err := e.ipcOf(rec)
		if err != nil {
			return "", err
		}
		storage := c.Storage
		if storage == "" {
			storage = "2.2"
		}
		r := e.do(map[string]any{"op": "create", "uri": uri, "ipc": p, "storage": storage,
			"stable_row_ids": c.StableRowIDs, "v2_paths": !c.V1Names, "max_rows_per_file": c.MaxRows})
		if err := r.err(); err != nil {
			return "", fmt.Errorf("pylance create: %w", err)
		}
	default:
		return "", fmt.Errorf("unknown creator %q", c.Client)
	}
	return uri, nil
}

// mustCreate is create for the deterministic tests.
func (e *tblEnv) mustCreate(name string, c tblCreate) string {
	e.t.Helper()
	uri, err := e.create(name, c)
	if err != nil {
		e.t.Fatalf("create %s %+v: %v", name, c, err)
	}
	return uri
}

// tblCheck says what check compares besides the whole table.
type tblCheck struct {
	Version  uint64      // 0: the latest
	Takes    [][]int64   // offsets for Take
	Fracs    [][]float64 // offsets as fractions of the row count
	Validate bool        // pylance validate() must pass
	LDB      bool        // LanceDB to_arrow() must equal pylance's to_table()
	RowIDs   bool
	Counts   map[string]string // pylance count_rows(filter) for each name
	// Project: NewRecordReader's columns (nil: every column in reverse
	// order); names the version does not have are left out.
	Project []string
}

// tblResult is the outcome of one check.
type tblResult struct {
	View tblReply
	Want arrow.RecordBatch // pylance's to_table()
	// PlanarErr is the first error planar returned (Open, ReadAll, Scan,
	// NewRecordReader, Take), Stage where.
	PlanarErr error
	Stage     string
	// Diffs are wrong results of planar: data, counts, schema, batches
	// yielded before an error.
	Diffs []string
	// ViewErr: pylance could not read the table at all.
	ViewErr error
	// ClientDiffs are the clients' complaints: validate() failing, LanceDB
	// reading other rows than pylance, _rowid not unique.
	ClientDiffs []string
	// Notes are checks left out, and why.
	Notes []string
}

func (r *tblResult) fail(stage string, err error) {
	if r.PlanarErr == nil {
		r.PlanarErr, r.Stage = err, stage
	}
}

func (r *tblResult) diff(format string, args ...any) {
	r.Diffs = append(r.Diffs, fmt.Sprintf(format, args...))
}

// Refused reports whether planar refused the table with ErrUnsupported.
func (r *tblResult) Refused() bool { return errors.Is(r.PlanarErr, lds.ErrUnsupported) }

// Failed reports any planar error, difference or client complaint.
func (r *tblResult) Failed() bool {
	return r.PlanarErr != nil || len(r.Diffs) > 0 || r.ViewErr != nil || len(r.ClientDiffs) > 0
}

// String lists the differences first, then the errors.
func (r *tblResult) String() string {
	var lines []string
	for i, d := range r.Diffs {
		if i == 12 {
			lines = append(lines, fmt.Sprintf("... %d more", len(r.Diffs)-i))
			break
		}
		lines = append(lines, d)
	}
	lines = append(lines, r.ClientDiffs...)
	if r.ViewErr != nil {
		lines = append(lines, fmt.Sprintf("pylance cannot read the table: %v", r.ViewErr))
	}
	if r.PlanarErr != nil {
		lines = append(lines, fmt.Sprintf("planar %s: %v", r.Stage, r.PlanarErr))
	}
	return strings.Join(lines, "\n  ")
}

// check compares every planar read of the table with pylance's view of the
// same version: CountRows, Schema, ReadAll, Scan, NewRecordReader with a
// projection, Take at the given offsets, Take past the end (an error, no
// rows). A read that fails must fail before its first batch. The view's
// error (pylance cannot read the table) is a diff.
func (e *tblEnv) check(uri string, c tblCheck) *tblResult {
	res := &tblResult{}
	out := e.tmp("view")
	req := map[string]any{"op": "view", "uri": uri, "out": out, "takes": c.Takes, "take_fracs": c.Fracs,
		"validate": c.Validate, "ldb": c.LDB, "rowids": c.RowIDs, "counts": c.Counts}
	if c.Version > 0 {
		req["version"] = c.Version
	}
	if req["takes"] == nil {
		req["takes"] = [][]int64{}
	}
	v := e.do(req)
	res.View = v
	if err := v.err(); err != nil {
		res.ViewErr = err
		return res
	}
	if v.Validate != nil {
		res.ClientDiffs = append(res.ClientDiffs, "pylance validate(): "+*v.Validate)
	}
	switch {
	case v.LDB != nil && v.Storage == "2.3" && strings.Contains(*v.LDB, "encodings23"):
		// Lance 13 (LanceDB 0.40) reads no 2.3 data file, pylance 14's
		// own included.
		res.Notes = append(res.Notes, "LanceDB 0.40 cannot read storage 2.3 data files")
	case v.LDB != nil:
		res.ClientDiffs = append(res.ClientDiffs, "LanceDB: "+*v.LDB)
	}
	if c.RowIDs && !v.RowIDUnique {
		res.ClientDiffs = append(res.ClientDiffs, "pylance _rowid is not unique")
	}
	want, err := tblReadIPC(out + ".all.arrow")
	if err != nil {
		res.diff("reading pylance's to_table: %v", err)
		return res
	}
	res.Want = want
	if want.NumRows() != v.Count {
		res.diff("pylance to_table has %d rows, count_rows %d", want.NumRows(), v.Count)
	}
	var d *lds.Dataset
	if c.Version > 0 {
		d, err = lds.OpenVersion(e.ctx, uri, c.Version)
	} else {
		d, err = lds.Open(e.ctx, uri)
	}
	if err != nil {
		res.fail("Open", err)
		return res
	}
	if d.Version() != v.Version {
		res.diff("planar opened version %d, pylance %d", d.Version(), v.Version)
	}
	if n := d.CountRows(); n != v.Count {
		res.diff("CountRows %d, pylance count_rows %d", n, v.Count)
	}
	res.Diffs = append(res.Diffs, tblDiffSchema("Schema", d.Schema(), want.Schema())...)

	if got, err := d.ReadAll(e.ctx); err != nil {
		res.fail("ReadAll", err)
	} else {
		res.Diffs = append(res.Diffs, tblDiffBatch("ReadAll", got, want, 8)...)
		got.Release()
	}

	// Scan in small batches; an error must come before the first batch.
	var recs []arrow.RecordBatch
	var scanRows int64
	scanFailed := false
	for rec, err := range d.Scan(e.ctx, 97) {
		if err != nil {
			if len(recs) > 0 {
				res.diff("Scan yielded %d batches (%d rows) before failing: %v", len(recs), scanRows, err)
			}
			res.fail("Scan", err)
			for _, r := range recs {
				r.Release()
			}
			recs, scanFailed = nil, true
			break
		}
		scanRows += rec.NumRows()
		recs = append(recs, rec)
	}
	if !scanFailed {
		if got, err := tblConcat(d.Schema(), recs); err != nil {
			res.diff("Scan: concatenating batches: %v", err)
		} else {
			res.Diffs = append(res.Diffs, tblDiffBatch("Scan", got, want, 4)...)
			got.Release()
		}
	}

	// NewRecordReader with a projection.
	var proj []string
	for _, n := range c.Project {
		if len(want.Schema().FieldIndices(n)) == 1 {
			proj = append(proj, n)
		}
	}
	if len(proj) == 0 {
		for i := want.Schema().NumFields() - 1; i >= 0; i-- {
			proj = append(proj, want.Schema().Field(i).Name)
		}
	}
	if rr, err := d.NewRecordReader(e.ctx, 131, proj...); err != nil {
		res.fail("NewRecordReader", err)
	} else {
		var recs []arrow.RecordBatch
		for rr.Next() {
			rec := rr.RecordBatch()
			rec.Retain()
			recs = append(recs, rec)
		}
		if err := rr.Err(); err != nil {
			if len(recs) > 0 {
				res.diff("NewRecordReader yielded %d batches before failing: %v", len(recs), err)
			}
			res.fail("NewRecordReader", err)
			for _, r := range recs {
				r.Release()
			}
		} else if got, err := tblConcat(rr.Schema(), recs); err != nil {
			res.diff("NewRecordReader: concatenating batches: %v", err)
		} else {
			wp := tblProject(want, proj)
			res.Diffs = append(res.Diffs, tblDiffBatch(fmt.Sprintf("NewRecordReader(%v)", proj), got, wp, 4)...)
			got.Release()
			wp.Release()
		}
		rr.Release()
	}

	// Take at pylance's offsets.
	all := append(append([][]int64{}, c.Takes...), v.TakeOffsets...)
	for k, offs := range all {
		if len(offs) == 0 {
			continue
		}
		wt, err := tblReadIPC(fmt.Sprintf("%s.take%d.arrow", out, k))
		if err != nil {
			res.diff("reading pylance's take: %v", err)
			continue
		}
		got, err := d.Take(e.ctx, offs)
		if err != nil {
			res.fail(fmt.Sprintf("Take(%v)", tblShort(offs)), err)
		} else {
			res.Diffs = append(res.Diffs, tblDiffBatch(fmt.Sprintf("Take(%v)", tblShort(offs)), got, wt, 4)...)
			got.Release()
		}
		wt.Release()
	}
	// Past the end: an error and no rows.
	if n := v.Count; res.PlanarErr == nil {
		for _, offs := range [][]int64{{n}, {0, n}} {
			if n == 0 {
				offs = offs[:1]
			}
			got, err := d.Take(e.ctx, offs)
			switch {
			case err == nil && got != nil:
				res.diff("Take(%v) of a table of %d rows returned %d rows and no error", offs, n, got.NumRows())
			case err == nil:
				res.diff("Take(%v) of a table of %d rows returned no error", offs, n)
			case got != nil:
				res.diff("Take(%v) of a table of %d rows returned rows with its error %v", offs, n, err)
			}
			if got != nil {
				got.Release()
			}
		}
	}
	return res
}

func tblShort(offs []int64) string {
	if len(offs) <= 8 {
		return fmt.Sprint(offs)
	}
	return fmt.Sprintf("%v...(%d)", offs[:8], len(offs))
}

// mustMatch checks the table and fails the test on any planar error or
// difference.
func (e *tblEnv) mustMatch(what, uri string, c tblCheck) *tblResult {
	e.t.Helper()
	r := e.check(uri, c)
	if r.Failed() {
		e.t.Errorf("%s: planar differs from pylance:\n  %s", what, r)
		e.logManifest(uri)
	}
	return r
}

// afterCommit checks a table right after a planar commit: pylance reads it
// as planar does, validate() passes and LanceDB reads the same rows.
func (e *tblEnv) afterCommit(what, uri string, c tblCheck) *tblResult {
	e.t.Helper()
	c.Validate, c.LDB = true, true
	return e.mustMatch(what+" (after planar's commit)", uri, c)
}

func (e *tblEnv) logManifest(uri string) {
	e.t.Helper()
	if m, err := tblLatestRawManifest(uri); err == nil {
		e.t.Logf("latest manifest of %s:\n%s", filepath.Base(uri), m)
	}
}

// planarAppend appends n rows with ids first.. in the table's schema.
func (e *tblEnv) planarAppend(uri string, first int64, n int, salt int64) (*lds.Dataset, error) {
	w, err := lds.Append(e.ctx, uri)
	if err != nil {
		return nil, err
	}
	rec, err := tblGen(w.Schema(), tblIDs(first, n), salt)
	if err != nil {
		_ = w.Abort()
		return nil, err
	}
	defer rec.Release()
	if err := w.Write(rec); err != nil {
		_ = w.Abort()
		return nil, err
	}
	return w.Commit(e.ctx)
}

// planarCommitAppend appends n rows through WriteFragments + CommitAppend.
func (e *tblEnv) planarCommitAppend(uri string, first int64, n int, salt int64) (*lds.Dataset, error) {
	d, err := lds.Open(e.ctx, uri)
	if err != nil {
		return nil, err
	}
	rec, err := tblGen(d.Schema(), tblIDs(first, n), salt)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	frags, err := lds.WriteFragments(e.ctx, uri, d.Schema(), []arrow.RecordBatch{rec})
	if err != nil {
		return nil, err
	}
	return lds.CommitAppend(e.ctx, uri, frags)
}

// planarOverwrite replaces the table with n rows of tblSchema.
func (e *tblEnv) planarOverwrite(uri string, first int64, n int) (*lds.Dataset, error) {
	w, err := lds.Overwrite(e.ctx, uri, tblSchema)
	if err != nil {
		return nil, err
	}
	rec, err := tblGen(tblSchema, tblIDs(first, n), 0)
	if err != nil {
		_ = w.Abort()
		return nil, err
	}
	defer rec.Release()
	if err := w.Write(rec); err != nil {
		_ = w.Abort()
		return nil, err
	}
	return w.Commit(e.ctx)
}

// tblNewCol is a column planar's AddColumns adds: int64 values
// id*Mul+Add, null where id%11 == 0.
type tblNewCol struct {
	Name     string
	Mul, Add int64
}

// Filter is a pylance filter true on every row where the column is right.
func (c tblNewCol) Filter() string {
	return fmt.Sprintf("(%s = id * %d + %d) OR (%s IS NULL AND id %% 11 = 0)", c.Name, c.Mul, c.Add, c.Name)
}

// planarAddColumns adds cols to the table; ids are the table's ids in scan
// order (pylance's), one per live row.
func (e *tblEnv) planarAddColumns(uri string, ids []int64, cols ...tblNewCol) (*lds.Dataset, error) {
	fields := make([]arrow.Field, len(cols))
	arrs := make([]arrow.Array, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.Name, Type: arrow.PrimitiveTypes.Int64, Nullable: true}
		b := array.NewInt64Builder(memory.DefaultAllocator)
		for _, id := range ids {
			if id%11 == 0 {
				b.AppendNull()
			} else {
				b.Append(id*c.Mul + c.Add)
			}
		}
		arrs[i] = b.NewArray()
		b.Release()
	}
	s := arrow.NewSchema(fields, nil)
	// Two batches, so that batches do not line up with fragments.
	var recs []arrow.RecordBatch
	cut := int64(len(ids) / 3)
	full := array.NewRecordBatch(s, arrs, int64(len(ids)))
	for _, a := range arrs {
		a.Release()
	}
	recs = append(recs, full.NewSlice(0, cut), full.NewSlice(cut, int64(len(ids))))
	full.Release()
	rr, err := array.NewRecordReader(s, recs)
	if err != nil {
		return nil, err
	}
	defer rr.Release()
	for _, r := range recs {
		r.Release()
	}
	return lds.AddColumns(e.ctx, uri, rr)
}

// tblIDsOf is the id column of pylance's view, in scan order.
func tblIDsOf(rec arrow.RecordBatch) []int64 {
	a, ok := tblColumn(rec, "id").(*array.Int64)
	if !ok {
		return nil
	}
	out := make([]int64, a.Len())
	for i := range out {
		out[i] = a.Value(i)
	}
	return out
}

// view asks pylance for the table's latest state (no planar read).
func (e *tblEnv) view(uri string, c tblCheck) (tblReply, arrow.RecordBatch, error) {
	out := e.tmp("view")
	req := map[string]any{"op": "view", "uri": uri, "out": out, "takes": [][]int64{}, "rowids": c.RowIDs,
		"counts": c.Counts, "validate": c.Validate, "ldb": c.LDB}
	if c.Version > 0 {
		req["version"] = c.Version
	}
	v := e.do(req)
	if err := v.err(); err != nil {
		return v, nil, err
	}
	rec, err := tblReadIPC(out + ".all.arrow")
	return v, rec, err
}

func (e *tblEnv) mustView(uri string, c tblCheck) (tblReply, arrow.RecordBatch) {
	e.t.Helper()
	v, rec, err := e.view(uri, c)
	if err != nil {
		e.t.Fatalf("pylance view of %s: %v", filepath.Base(uri), err)
	}
	return v, rec
}
