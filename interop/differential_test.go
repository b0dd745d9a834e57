package interop

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/writer"
)

// The differential fuzzer: random schemas x null patterns x batch splits x
// slices x page budgets (corpus.RandomCase), written by planar and read by
// pylance, and written by pylance (2.1, 2.2, 2.3) and read by planar, all
// compared exactly with the data given. `go test ./interop -run
// Differential` runs the CI seeds; -diff.n and -diff.start run a campaign
// (use -timeout 0), -diff.save keeps minimised failures as regression cases.
var (
	diffN       = flag.Int("diff.n", 400, "differential cases to run")
	diffStart   = flag.Uint64("diff.start", 1, "first differential seed")
	diffWorkers = flag.Int("diff.workers", 2, "pylance worker processes")
	diffMin     = flag.Bool("diff.minimise", true, "minimise failing cases")
	diffSave    = flag.String("diff.save", "", "directory to save minimised failures in (IPC stream + settings)")
	diffVerbose = flag.Bool("diff.v", false, "log every case")
)

// pyWorker is one long-lived diffworker.py process.
type pyWorker struct {
	py     string
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *bytes.Buffer
	// lance13 is a worker on pylance 13.0.0 (LanceDB 0.40's Lance), which
	// reads every 2.2 file planar writes in the differential; nil only
	// outside CI when its venv is missing.
	lance13 *pyWorker
}

func startWorker(py string) (*pyWorker, error) {
	w := &pyWorker{py: py, stderr: &bytes.Buffer{}}
	w.cmd = exec.Command(py, "diffworker.py")
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
	var hello map[string]any
	line, err := w.out.ReadBytes('\n')
	if err == nil {
		err = json.Unmarshal(line, &hello)
	}
	if err != nil {
		w.stop()
		return nil, fmt.Errorf("diffworker did not start: %v\n%s", err, w.stderr.String())
	}
	return w, nil
}

func (w *pyWorker) stop() {
	w.in.Close()
	w.cmd.Process.Kill()
	w.cmd.Wait()
	if w.lance13 != nil {
		w.lance13.stop()
	}
}

// startWorkers starts a pylance 14 worker with its Lance 13 companion
// (when py13 is not empty).
func startWorkers(py, py13 string) (*pyWorker, error) {
	w, err := startWorker(py)
	if err != nil || py13 == "" {
		return w, err
	}
	if w.lance13, err = startWorker(py13); err != nil {
		w.stop()
		return nil, err
	}
	return w, nil
}

type pyReply struct {
	OK    bool   `json:"ok"`
	Stage string `json:"stage"`
	Error string `json:"error"`
	// Notes are pylance limitations met on the way (a read done column
	// by column).
	Notes []string `json:"notes"`
	// Crash is set when the process died on the request (pylance aborted).
	Crash bool `json:"-"`
}

// call sends one request; if the process dies it is restarted and the
// reply says Crash.
func (w *pyWorker) call(req map[string]any) pyReply {
	b, _ := json.Marshal(req)
	w.stderr.Reset()
	if _, err := w.in.Write(append(b, '\n')); err == nil {
		if line, err := w.out.ReadBytes('\n'); err == nil {
			var r pyReply
			if err := json.Unmarshal(line, &r); err == nil {
				return r
			}
		}
	}
	msg := strings.TrimSpace(w.stderr.String())
	if i := strings.LastIndex(msg, "\n"); i >= 0 && len(msg)-i < 400 {
		msg = msg[i+1:] + " (" + firstLine(msg) + ")"
	}
	l13 := w.lance13
	w.lance13 = nil
	w.stop()
	nw, err := startWorker(w.py)
	if err == nil {
		*w = *nw
	}
	w.lance13 = l13
	return pyReply{Crash: true, Stage: "process", Error: "pylance process died: " + trunc(msg, 600)}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// diffOutcome is what one case found.
type diffOutcome struct {
	failures    []string // planar defects (or unknown): each "kind: detail"
	limitations []string // what pylance cannot do with its own files
	// shared are planar files pylance cannot read where pylance cannot
	// read its own file of the same data and version either, with the
	// same error: Lance limitations, counted apart (not passes).
	shared []string
	// open are failures matching a known open defect (knownOpen):
	// reported and counted, not failing the test.
	open   []string
	checks int // comparisons made
}

func (o *diffOutcome) fail(kind, format string, args ...any) {
	o.failures = append(o.failures, kind+": "+fmt.Sprintf(format, args...))
}

// signatures are the failures without numbers, names and the read that
// met them: what the minimiser must keep.
func (o *diffOutcome) signatures() map[string]bool {
	m := map[string]bool{}
	for _, f := range o.failures {
		kind, detail, _ := strings.Cut(f, ": ")
		if op, rest, ok := strings.Cut(detail, ": "); ok && (strings.HasPrefix(op, "read_") || strings.HasPrefix(op, "take") ||
			strings.HasSuffix(op, ".arrows")) {
			detail = rest
		}
		if i := strings.Index(detail, " ["); i >= 0 {
			detail = detail[:i]
		}
		m[kind+": "+errorClass(detail)] = true
	}
	return m
}

func writeStream(path string, schema *arrow.Schema, recs []arrow.RecordBatch) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := ipc.NewWriter(f, ipc.WithSchema(schema))
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			f.Close()
			return err
		}
	}
	if err := w.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// readStream returns the columns of an IPC stream as chunks.
func readStream(path string) (*arrow.Schema, [][]arrow.Array, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	r, err := ipc.NewReader(f)
	if err != nil {
		return nil, nil, err
	}
	defer r.Release()
	cols := make([][]arrow.Array, r.Schema().NumFields())
	for r.Next() {
		rec := r.RecordBatch()
		for i := range cols {
			a := rec.Column(i)
			a.Retain()
			cols[i] = append(cols[i], a)
		}
	}
	return r.Schema(), cols, r.Err()
}

func caseColumns(c *corpus.RandCase) [][]arrow.Array {
	cols := make([][]arrow.Array, c.Schema.NumFields())
	for _, b := range c.Batches {
		for i := range cols {
			cols[i] = append(cols[i], b.Column(i))
		}
	}
	return cols
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// compareTo compares got columns with the case's rows wantIdx.
func compareTo(schema *arrow.Schema, got [][]arrow.Array, want [][]arrow.Array, names []string, wantIdx []int) []string {
	var out []string
	if schema != nil && len(names) != schema.NumFields() {
		return []string{fmt.Sprintf("%d columns, want %d", schema.NumFields(), len(names))}
	}
	for i, name := range names {
		if schema != nil && schema.Field(i).Name != name {
			out = append(out, fmt.Sprintf("column %d named %q, want %q", i, schema.Field(i).Name, name))
			continue
		}
		out = append(out, diffColumns(name, rowsOf(got[i]), rowsOf(want[i]), wantIdx, 3)...)
	}
	return out
}

// readChecks are the reads every file gets: whole, three ranges, two takes.
type readChecks struct {
	ranges [][2]int64
	takes  [][]int64
}

func checksFor(seed uint64, n int64) readChecks {
	r := rand.New(rand.NewPCG(seed, 77))
	rc := readChecks{}
	if n == 0 {
		return rc
	}
	rc.ranges = append(rc.ranges, [2]int64{0, min(n, 1)}, [2]int64{n / 3, min(n-n/3, 1000)})
	s := r.Int64N(n)
	rc.ranges = append(rc.ranges, [2]int64{s, 1 + r.Int64N(n-s)})
	set := map[int64]bool{0: true, n - 1: true, n / 2: true}
	for k := 0; k < 5; k++ {
		set[r.Int64N(n)] = true
	}
	var idx []int64
	for i := range set {
		idx = append(idx, i)
	}
	sort.Slice(idx, func(a, b int) bool { return idx[a] < idx[b] })
	rc.takes = append(rc.takes, idx, []int64{r.Int64N(n)})
	return rc
}

func rangeIdx(s, n int64) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = int(s) + i
	}
	return out
}

func takeIdx(idx []int64) []int {
	out := make([]int, len(idx))
	for i, x := range idx {
		out[i] = int(x)
	}
	return out
}

// planarReads checks planar's reader on path against the case.
func planarReads(path string, c *corpus.RandCase, want [][]arrow.Array, names []string, rc readChecks) (errs []string) {
	defer func() {
		if p := recover(); p != nil {
			errs = append(errs, fmt.Sprintf("panic: %v\n%s", p, trunc(string(debug.Stack()), 1500)))
		}
	}()
	f, err := reader.OpenPath(path)
	if err != nil {
		return []string{"open: " + err.Error()}
	}
	defer f.Close()
	n := c.Rows()
	if f.NumRows() != n {
		return []string{fmt.Sprintf("%d rows, want %d", f.NumRows(), n)}
	}
	check := func(what string, rec arrow.RecordBatch, err error, idx []int) {
		if err != nil {
			errs = append(errs, what+": "+err.Error())
			return
		}
		defer rec.Release()
		got := make([][]arrow.Array, rec.NumCols())
		for i := range got {
			got[i] = []arrow.Array{rec.Column(i)}
		}
		for _, d := range compareTo(rec.Schema(), got, want, names, idx) {
			errs = append(errs, what+": "+d)
		}
	}
	rec, err := f.ReadAll()
	check("read_all", rec, err, seq(int(n)))
	for _, r := range rc.ranges {
		rec, err := f.ReadRange(r[0], r[1])
		check(fmt.Sprintf("read_range(%d,%d)", r[0], r[1]), rec, err, rangeIdx(r[0], r[1]))
	}
	for _, t := range rc.takes {
		rec, err := f.Take(t)
		check(fmt.Sprintf("take(%v)", trunc(fmt.Sprint(t), 60)), rec, err, takeIdx(t))
	}
	return errs
}

func policyOf(s string) selector.Policy {
	if s == "lance" {
		return selector.PolicyLance
	}
	return selector.PolicyCost
}

func formatOfString(s string) writer.Format {
	if s == "2.2" {
		return writer.Format2_2
	}
	return writer.Format2_3
}

// writePlanarCase writes the case with planar.
func writePlanarCase(path string, c *corpus.RandCase) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, trunc(string(debug.Stack()), 1500))
		}
	}()
	opts := []writer.Option{writer.WithFormat(formatOfString(c.Format)), writer.WithPolicy(policyOf(c.Policy))}
	if c.PageBytes > 0 {
		opts = append(opts, writer.WithMaxPageBytes(c.PageBytes))
	}
	w, err := writer.Create(path, c.Schema, opts...)
	if err != nil {
		return err
	}
	for i, b := range c.Batches {
		if err := w.WriteBatch(b); err != nil {
			w.Close()
			return fmt.Errorf("batch %d: %w", i, err)
		}
	}
	return w.Close()
}

// pylanceVersions are the file versions pylance writes for planar to read.
var pylanceVersions = []string{"2.1", "2.2", "2.3"}

// runCase runs one case through both directions.
func runCase(w *pyWorker, dir string, c *corpus.RandCase) diffOutcome {
	var o diffOutcome
	if err := os.MkdirAll(dir, 0o755); err != nil {
		o.fail("setup", "%v", err)
		return o
	}
	names := make([]string, c.Schema.NumFields())
	for i := range names {
		names[i] = c.Schema.Field(i).Name
	}
	want := caseColumns(c)
	rc := checksFor(c.Seed, c.Rows())
	in := filepath.Join(dir, "in.arrows")
	if err := writeStream(in, c.Schema, c.Batches); err != nil {
		o.fail("setup", "ipc: %v", err)
		return o
	}

	// pylance -> planar: planar must read pylance's file as the data
	// pylance was given, or at least as pylance itself reads it back.
	own := map[string]string{}    // version -> what pylance could not do
	ownErr := map[string]string{} // version -> pylance's error reading its own file
	for _, v := range pylanceVersions {
		lf := filepath.Join(dir, "pylance-"+v+".lance")
		rep := w.call(map[string]any{"op": "write", "ipc": in, "file": lf, "version": v})
		if !rep.OK {
			own[v] = rep.Stage + ": " + rep.Error
			if rep.Stage == "self_read" {
				ownErr[v] = rep.Error
			}
			o.limitations = append(o.limitations, fmt.Sprintf("pylance %s %s: %s", v, rep.Stage, rep.Error))
			continue
		}
		for _, n := range rep.Notes {
			o.limitations = append(o.limitations, fmt.Sprintf("pylance %s own file: %s", v, n))
		}
		schema, self, err := readStream(lf + ".self.arrows")
		if err != nil {
			o.fail("setup", "pylance %s self read: %v", v, err)
			continue
		}
		errs := planarReads(lf, c, want, names, rc)
		if d := compareTo(schema, self, want, names, seq(int(c.Rows()))); len(d) > 0 {
			own[v] = "self_mismatch: " + d[0]
			o.limitations = append(o.limitations, fmt.Sprintf("pylance %s self_mismatch: %s", v, d[0]))
			if len(errs) > 0 && len(planarReads(lf, c, self, names, rc)) == 0 {
				errs = nil // planar reads what pylance reads
			}
		}
		for _, e := range errs {
			o.fail("planar-reads-pylance-"+v, "%s", e)
		}
		o.checks++
	}

	// planar -> pylance (and planar's own reader).
	pf := filepath.Join(dir, "planar.lance")
	if err := writePlanarCase(pf, c); err != nil {
		if errors.Is(err, writer.ErrUnsupportedType) && (own[c.Format] != "" || strings.Contains(err.Error(), "needs format 2.3")) {
			// planar refuses, with a typed error before writing, what
			// Lance cannot store in this version either (a fixed-size
			// list of structs with a list: Lance 14's dense reader has
			// no support, its 2.2 writer panics; FORMAT.md §5b).
			o.limitations = append(o.limitations, fmt.Sprintf("planar refuses %s (pylance's own file: %s): %v", c.Format, trunc(own[c.Format], 120), err))
		} else {
			o.fail("planar-write", "%v", err)
		}
	} else {
		for _, e := range planarReads(pf, c, want, names, rc) {
			o.fail("planar-reads-planar", "%s", e)
		}
		o.checks++
		req := map[string]any{"op": "read", "file": pf, "out": pf}
		var rs [][2]int64
		rs = append(rs, rc.ranges...)
		req["ranges"] = rs
		req["takes"] = rc.takes
		rep := w.call(req)
		switch {
		case !rep.OK && ownErr[c.Format] != "" && sameLimit(rep.Error, ownErr[c.Format]):
			o.shared = append(o.shared, fmt.Sprintf("pylance %s reads neither planar's nor its own file: %s", c.Format, rep.Error))
		case !rep.OK:
			o.fail("pylance-reads-planar", "%s: %s%s", rep.Stage, rep.Error, ownNote(own, c.Format))
		default:
			for _, n := range rep.Notes {
				o.limitations = append(o.limitations, fmt.Sprintf("pylance %s planar's file: %s", c.Format, n))
			}
			o.compareReads("pylance-reads-planar", pf, pf, c, rc, want, names, ownNote(own, c.Format))
		}
		if l13 := w.lance13; l13 != nil && c.Format == "2.2" {
			// Lance 13 (LanceDB 0.40) reads 2.2 files, planar's included.
			out := pf + ".l13"
			req["out"] = out
			rep := l13.call(req)
			switch {
			case !rep.OK:
				// A limitation of Lance 13 only if it cannot read its
				// own 2.2 file of the data either.
				lf := filepath.Join(dir, "lance13-2.2.lance")
				self := l13.call(map[string]any{"op": "write", "ipc": in, "file": lf, "version": "2.2"})
				if !self.OK && (self.Stage != "self_read" || sameLimit(rep.Error, self.Error)) {
					o.shared = append(o.shared, fmt.Sprintf("Lance 13 reads neither planar's 2.2 file nor its own: %s (own: %s: %s)", rep.Error, self.Stage, self.Error))
				} else {
					o.fail("lance13-reads-planar", "%s: %s", rep.Stage, rep.Error)
				}
			default:
				o.compareReads("lance13-reads-planar", pf, out, c, rc, want, names, "")
			}
		}
	}

	o.triage(c)
	return o
}

// compareReads compares what a Lance read of planar's file pf wrote under
// prefix out (the whole file, the ranges, the takes) with the data.
func (o *diffOutcome) compareReads(stage, pf, out string, c *corpus.RandCase, rc readChecks, want [][]arrow.Array, names []string, note string) {
	type got struct {
		file string
		idx  []int
	}
	gots := []got{{out + ".all.arrows", seq(int(c.Rows()))}}
	for k, r := range rc.ranges {
		gots = append(gots, got{fmt.Sprintf("%s.range%d.arrows", out, k), rangeIdx(r[0], r[1])})
	}
	for k, t := range rc.takes {
		gots = append(gots, got{fmt.Sprintf("%s.take%d.arrows", out, k), takeIdx(t)})
	}
	for _, g := range gots {
		schema, cols, err := readStream(g.file)
		if err != nil {
			o.fail(stage, "%s: %v", filepath.Base(g.file), err)
			continue
		}
		for _, d := range compareTo(schema, cols, want, names, g.idx) {
			o.fail(stage, "%s: %s%s", strings.TrimPrefix(filepath.Base(g.file), filepath.Base(out)+"."), d, note)
		}
		o.checks++
	}
}

// knownOpen lists the failure classes found by the fuzzer that are open
// defects, each with why it is not fixed yet. A failure matching one is
// counted and logged, not failed; anything else fails. Keep this short.
var knownOpen = []struct {
	kind, substr string
	when         func(*arrow.Schema) bool // nil: any schema
	why          string
}{
	{"planar-reads-pylance-2.3", "corrupt levels", miniblockOverListedStructFSL,
		"pylance 2.3 with structural-encoding=miniblock writes a list above a fixed-size list of structs as dense levels (the explicit key " +
			"turns off its early sparse rule) and reads them back; planar's dense unraveler does not take a structural FSL below a list " +
			"(planar itself always writes such columns sparse, FORMAT.md 5b)"},
	{"planar-write", "more than 65535 levels in one chunk", nil,
		"format 2.2 only: one value behind more than 65,535 null or empty lists in a boolean or Arrow dictionary page: the write fails " +
			"with this error (nothing is committed). 2.3 stores such pages sparse (Lance's level budget rule), 2.2 zips other values; " +
			"Lance 2.2 cuts the page between rows instead, which planar does not do yet"},
	{"pylance-reads-planar", "Dictionary key bigger than the key type", nil,
		"a dictionary column with 8/16-bit keys cut into many pages: pylance joins the pages' dictionaries with arrow-rs's concat, whose merge " +
			"dedupes values with an approximate interner and overflows narrow keys well before the column's distinct values do; pylance's own " +
			"files avoid it only by holding such a column in one page. Planar keeps only the items each page reaches; a page layout pylance " +
			"always joins is still open"},
}

// sharedPairs are pylance errors on planar's file that go with a different
// error of pylance on its own file of the same data: checked by hand to be
// one Lance limitation.
var sharedPairs = []struct{ planar, own, why string }{
	{"Dictionary key bigger than the key type", "dictionary indices use 32 bits but the declared",
		"a dictionary column whose batches bring different dictionaries: pylance concatenates the page dictionaries a read spans without merging them (planar's file), and reads 32-bit indices under a narrower key type (its own)"},
}

// lanceBugs are pylance errors on planar's files that pylance also shows on
// its own files of the same shape, where the fuzzer cannot compare because
// pylance's writer fails on the case's data first. Each is scoped to the
// schemas it was checked on.
var lanceBugs = []struct {
	substr string
	when   func(*arrow.Schema) bool
	why    string
}{
	{"Structural sibling fields have incompatible validity metadata", hasListAboveStructFSL,
		"a fixed-size list of structs below a list, with a null FSL slot and a list inside the struct: pylance 14 refuses its own file of " +
			"[[[{f1: null, f2: [1]}, {f1: null, f2: []}], null]] (list<fsl<struct<f1: float16, f2: list<int64>>, 2>>) the same way"},
	{"its children have differing lengths", hasStructFSLBesideSibling,
		"a struct whose child holds a fixed-size list of structs, next to another child: pylance 14 counts the inner struct's rows " +
			"times the FSL dimension and refuses its own 2.3 file the same way, e.g. struct<f1: fsl<struct<f2: int32, f3: list<int32>>, 3>, " +
			"f4: int32> with null rows (\"child 'f4' has 11 rows, but the field has 33\") and struct<f7: struct<f8: int16, f9: " +
			"large_list<large_utf8>>, f10: struct<f11: fsl<struct<f12: utf8, f13: fsl<int16, 4>>, 2>>> (seeds 924863, 926001)"},
}

// hasStructFSLBesideSibling reports whether a struct with at least two
// children has one that holds (through structs) a fixed-size list of
// structs.
func hasStructFSLBesideSibling(s *arrow.Schema) bool {
	var holds func(dt arrow.DataType) bool
	holds = func(dt arrow.DataType) bool {
		switch t := dt.(type) {
		case *arrow.FixedSizeListType:
			if _, ok := t.Elem().(*arrow.StructType); ok {
				return true
			}
		case *arrow.StructType:
			for _, f := range t.Fields() {
				if holds(f.Type) {
					return true
				}
			}
		}
		return false
	}
	var walk func(dt arrow.DataType) bool
	walk = func(dt arrow.DataType) bool {
		switch t := dt.(type) {
		case *arrow.StructType:
			if t.NumFields() >= 2 {
				for _, f := range t.Fields() {
					if holds(f.Type) {
						return true
					}
				}
			}
			for _, f := range t.Fields() {
				if walk(f.Type) {
					return true
				}
			}
		case *arrow.MapType:
			return walk(t.KeyType()) || walk(t.ItemType())
		case arrow.ListLikeType:
			return walk(t.Elem())
		}
		return false
	}
	for _, f := range s.Fields() {
		if walk(f.Type) {
			return true
		}
	}
	return false
}

// hasListAboveStructFSL reports whether a field of s has a structural
// fixed-size list (of structs) below a list or map.
// miniblockOverListedStructFSL: a column asking for miniblock holds a list
// above a fixed-size list of structs.
func miniblockOverListedStructFSL(s *arrow.Schema) bool {
	for _, f := range s.Fields() {
		if v, ok := f.Metadata.GetValue("lance-encoding:structural-encoding"); ok && v == "miniblock" &&
			hasListAboveStructFSL(arrow.NewSchema([]arrow.Field{f}, nil)) {
			return true
		}
	}
	return false
}

func hasListAboveStructFSL(s *arrow.Schema) bool {
	var walk func(dt arrow.DataType, list bool) bool
	walk = func(dt arrow.DataType, list bool) bool {
		switch t := dt.(type) {
		case *arrow.FixedSizeListType:
			if _, ok := t.Elem().(*arrow.StructType); ok && list {
				return true
			}
			return walk(t.Elem(), list)
		case *arrow.MapType:
			return walk(t.KeyType(), true) || walk(t.ItemType(), true)
		case arrow.ListLikeType:
			return walk(t.Elem(), true)
		case *arrow.StructType:
			for _, f := range t.Fields() {
				if walk(f.Type, list) {
					return true
				}
			}
		}
		return false
	}
	for _, f := range s.Fields() {
		if walk(f.Type, false) {
			return true
		}
	}
	return false
}

// triage moves the failures matching knownOpen to o.open, and those
// matching lanceBugs to o.shared.
func (o *diffOutcome) triage(c *corpus.RandCase) {
	kept := o.failures[:0]
	for _, f := range o.failures {
		open := false
		for _, b := range lanceBugs {
			if strings.HasPrefix(f, "pylance-reads-planar:") && strings.Contains(f, b.substr) && b.when(c.Schema) {
				o.shared = append(o.shared, "Lance bug: "+b.substr)
				open = true
				break
			}
		}
		for _, k := range knownOpen {
			if open {
				break
			}
			if strings.HasPrefix(f, k.kind+":") && strings.Contains(f, k.substr) && (k.when == nil || k.when(c.Schema)) {
				o.open = append(o.open, "open defect: "+k.substr)
				open = true
				break
			}
		}
		if !open {
			kept = append(kept, f)
		}
	}
	o.failures = kept
}

// sameLimit reports whether pylance's error on planar's file and its error
// on its own file are one Lance limitation.
func sameLimit(onPlanar, onOwn string) bool {
	if errorClass(onPlanar) == errorClass(onOwn) {
		return true
	}
	for _, p := range sharedPairs {
		if strings.Contains(onPlanar, p.planar) && strings.Contains(onOwn, p.own) {
			return true
		}
	}
	return false
}

// errorClass is an error message without its numbers, for telling whether
// two errors are the same kind.
func errorClass(s string) string {
	if i := strings.Index(s, ", /"); i >= 0 { // Lance appends the source location
		s = s[:i]
	}
	return limitationClass(s)
}

// ownNote says what pylance could not do with its own file of the same
// version, to tell a planar defect from a case Lance cannot store at all.
func ownNote(own map[string]string, version string) string {
	if e, ok := own[version]; ok {
		return fmt.Sprintf(" [pylance's own %s file: %s]", version, trunc(e, 200))
	}
	return ""
}

// minimise shrinks a failing case while some failure kind of the original
// still occurs: fewer columns, fewer batches, shorter batches, the default
// page budget.
func minimise(w *pyWorker, dir string, c *corpus.RandCase, o diffOutcome, budget int) (*corpus.RandCase, diffOutcome) {
	want := o.signatures()
	still := func(cand *corpus.RandCase) (bool, diffOutcome) {
		budget--
		co := runCase(w, filepath.Join(dir, fmt.Sprintf("min%d", budget)), cand)
		for k := range co.signatures() {
			if want[k] {
				return true, co
			}
		}
		return false, co
	}
	cols := seq(c.Schema.NumFields())
	keep := make([][2]int, len(c.Batches))
	for i, b := range c.Batches {
		keep[i] = [2]int{0, int(b.NumRows())}
	}
	cur, curO := c, o
	try := func(cs []int, k [][2]int) bool {
		if budget <= 0 {
			return false
		}
		cand := c.Subset(cs, k)
		if cur != c {
			cand.PageBytes = cur.PageBytes
		}
		ok, co := still(cand)
		if ok {
			cols, keep, cur, curO = cs, k, cand, co
		}
		return ok
	}
	for progress := true; progress && budget > 0; {
		progress = false
		for i := 0; len(cols) > 1 && i < len(cols); i++ {
			cs := append(append([]int{}, cols[:i]...), cols[i+1:]...)
			if try(cs, keep) {
				progress = true
				i--
			}
		}
		live := 0
		for _, k := range keep {
			if k[0] >= 0 {
				live++
			}
		}
		for i := range keep {
			if keep[i][0] < 0 || live <= 1 {
				continue
			}
			k := append([][2]int{}, keep...)
			k[i] = [2]int{-1, -1}
			if try(cols, k) {
				progress = true
				live--
			}
		}
		for i := range keep {
			for keep[i][0] >= 0 && keep[i][1]-keep[i][0] > 1 && budget > 0 {
				lo, hi := keep[i][0], keep[i][1]
				mid := lo + (hi-lo)/2
				shrunk := false
				for _, win := range [][2]int{{lo, mid}, {mid, hi}, {lo + (hi-lo)/4, hi}, {lo, hi - (hi-lo)/4}} {
					if win[1]-win[0] < 1 || (win[0] == lo && win[1] == hi) {
						continue
					}
					k := append([][2]int{}, keep...)
					k[i] = win
					if try(cols, k) {
						shrunk, progress = true, true
						break
					}
				}
				if !shrunk {
					break
				}
			}
		}
	}
	if cur.PageBytes != 0 && budget > 0 {
		cand := c.Subset(cols, keep)
		cand.PageBytes = 0
		if ok, co := still(cand); ok {
			cur, curO = cand, co
		}
	}
	return cur, curO
}

type diffSummary struct {
	mu          sync.Mutex
	cases       int
	checks      int
	failing     []string
	limitations map[string]int
	firstSeen   map[string]uint64
	skipped     int // cases over maxCaseBytes
}

// limitationClass reduces a pylance error to its class (numbers and names
// stripped) for counting.
func limitationClass(s string) string {
	s = trunc(s, 160)
	var b strings.Builder
	digits := false
	for _, r := range s {
		if r >= '0' && r <= '9' {
			if !digits {
				b.WriteByte('N')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteRune(r)
	}
	return b.String()
}

// maxCaseBytes bounds the Arrow input of a differential case: larger
// cases are skipped and counted.
const maxCaseBytes = 256 << 20

func caseBytes(c *corpus.RandCase) int64 {
	var n int64
	for _, b := range c.Batches {
		n += corpus.ArrowBytes(b)
	}
	return n
}

func runDifferential(t *testing.T, seeds []uint64, py string) *diffSummary {
	py13 := python13(t)
	workers := max(1, *diffWorkers)
	sum := &diffSummary{limitations: map[string]int{}, firstSeen: map[string]uint64{}}
	jobs := make(chan uint64)
	var wg sync.WaitGroup
	root := t.TempDir()
	for k := 0; k < workers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := startWorkers(py, py13)
			if err != nil {
				t.Error(err)
				for range jobs {
				}
				return
			}
			defer w.stop()
			for seed := range jobs {
				mem := memory.NewGoAllocator()
				c := corpus.RandomCase(mem, seed)
				if caseBytes(c) > maxCaseBytes {
					// A deep nesting of wide vectors can draw gigabytes;
					// several such cases in flight exhaust the machine.
					sum.mu.Lock()
					sum.skipped++
					sum.mu.Unlock()
					continue
				}
				dir := filepath.Join(root, fmt.Sprint(seed))
				start := time.Now()
				o := runCase(w, dir, c)
				if *diffVerbose {
					t.Logf("seed %d: %d checks, %d failures, %d limitations, %v: %s", seed, o.checks, len(o.failures), len(o.limitations), time.Since(start).Round(time.Millisecond), c)
					for _, l := range append(o.limitations, o.shared...) {
						t.Logf("  seed %d: %s", seed, l)
					}
				}
				var report string
				if len(o.failures) > 0 {
					report = fmt.Sprintf("seed %d FAILS (%s)\n  %s", seed, c, strings.Join(firstN(o.failures, 5), "\n  "))
					if *diffMin {
						m, mo := minimise(w, filepath.Join(dir, "min"), c, o, 80)
						report += fmt.Sprintf("\nminimised: %s\n  %s", m.Dump(), strings.Join(firstN(mo.failures, 5), "\n  "))
						if *diffSave != "" {
							if err := saveCase(*diffSave, m, mo); err != nil {
								t.Error(err)
							}
						}
					}
				}
				os.RemoveAll(dir)
				sum.mu.Lock()
				sum.cases++
				sum.checks += o.checks
				for _, l := range append(o.shared, o.open...) {
					cl := "shared: " + limitationClass(l)
					if strings.HasPrefix(l, "open defect") {
						cl = l
					}
					if sum.limitations[cl] == 0 {
						sum.firstSeen[cl] = seed
					}
					sum.limitations[cl]++
				}
				for _, l := range o.limitations {
					cl := limitationClass(l)
					if sum.limitations[cl] == 0 {
						sum.firstSeen[cl] = seed
					}
					sum.limitations[cl]++
				}
				if report != "" {
					sum.failing = append(sum.failing, report)
					t.Error(report)
				}
				sum.mu.Unlock()
				c.Release()
			}
		}()
	}
	for _, s := range seeds {
		jobs <- s
	}
	close(jobs)
	wg.Wait()
	return sum
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("... and %d more", len(s)-n))
	}
	return s
}

// saveCase writes a minimised failure as a regression case: the batches as
// an IPC stream and the settings as JSON.
func saveCase(dir string, c *corpus.RandCase, o diffOutcome) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	base := filepath.Join(dir, fmt.Sprintf("seed%d", c.Seed))
	if err := writeStream(base+".arrows", c.Schema, c.Batches); err != nil {
		return err
	}
	meta, _ := json.MarshalIndent(regressionMeta{Seed: c.Seed, Format: c.Format, Policy: c.Policy, PageBytes: c.PageBytes,
		Found: firstN(o.failures, 3)}, "", "  ")
	return os.WriteFile(base+".json", meta, 0o644)
}

type regressionMeta struct {
	Seed      uint64   `json:"seed"`
	Format    string   `json:"format"`
	Policy    string   `json:"policy"`
	PageBytes int64    `json:"page_bytes"`
	Found     []string `json:"found"`
	Note      string   `json:"note,omitempty"`
}

// regressionSeeds are campaign seeds whose cases found planar defects
// (fixed since), run with the CI seeds. A seed names a case of the generator
// as it was when the seed was added; hand-made tests in regress_test.go pin
// each defect independently of the generator.
var regressionSeeds = []uint64{
	10,     // 2.2 all-null struct page: non-nullable child unmasked
	37,     // 2.2: the same, below a list
	100151, // 2.3 all-empty strings: offsets packed at width 0
	101958, // struct siblings' validity (pylance: incompatible validity metadata)
	100432, // masked values made a null page constant
	57,     // range across dictionary pages: arrow's transpose panicked
	321,    // the same below a struct
	202284, // dictionary below a structural FSL outgrew int8 keys in its one page
	200709, // masked values stored although statistics skipped them
	500854, // structural-encoding=sparse below a structural FSL without nulls stayed dense
	505459, // Arrow dictionary under half valid below a struct's FSL<struct>: Lance's sparse_wide
	502699, // the same with int64 keys
	501805, // cost policy below a struct's FSL<struct>: pylance reads only Lance's layout
	602025, // whole-row dictionary of boolean fixed-size lists (Lance keys byte-aligned rows only)
	601147, // fixed-size list of booleans under half valid: sparse_wide in Lance (no length statistic)
	101213, // 2.2 list<fixed_size_binary[300]>, small pages: Lance 13 counted a full-zip page without def levels by rows
	108899, // 2.2 large_list<struct<fsl<f32,128>, ...>>, small pages: Lance 13 miscounted the struct's nulls across pages
	246572, // 2.3 large_binary, mini-block: pylance's chunk offsets as a block Dictionary, read as 0-bit offsets
}

// TestDifferential runs the differential fuzzer over a fixed set of seeds
// (CI), or a campaign given by -diff.start / -diff.n.
func TestDifferential(t *testing.T) {
	py := python(t)
	seeds := make([]uint64, *diffN)
	for i := range seeds {
		seeds[i] = *diffStart + uint64(i)
	}
	if *diffStart == 1 {
		seeds = append(seeds, regressionSeeds...)
	}
	start := time.Now()
	sum := runDifferential(t, seeds, py)
	var classes []string
	for k := range sum.limitations {
		classes = append(classes, k)
	}
	sort.Slice(classes, func(i, j int) bool { return sum.limitations[classes[i]] > sum.limitations[classes[j]] })
	t.Logf("differential: %d cases (seeds %d..%d), %d checks, %d failing cases, %d skipped (input over %d MiB), %v", sum.cases, *diffStart, *diffStart+uint64(*diffN)-1,
		sum.checks, len(sum.failing), sum.skipped, maxCaseBytes>>20, time.Since(start).Round(time.Second))
	for _, k := range classes {
		t.Logf("  pylance limitation x%d (first seed %d): %s", sum.limitations[k], sum.firstSeen[k], k)
	}
}

// TestDifferentialRegressions replays the minimised failures kept in
// testdata/differential (found by the fuzzer, fixed since).
func TestDifferentialRegressions(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "differential", "*.json"))
	if len(files) == 0 {
		t.Skip("no regression cases")
	}
	py := python(t)
	w, err := startWorkers(py, python13(t))
	if err != nil {
		t.Fatal(err)
	}
	defer w.stop()
	for _, jf := range files {
		name := strings.TrimSuffix(filepath.Base(jf), ".json")
		t.Run(name, func(t *testing.T) {
			var m regressionMeta
			b, err := os.ReadFile(jf)
			if err == nil {
				err = json.Unmarshal(b, &m)
			}
			if err != nil {
				t.Fatal(err)
			}
			schema, cols, err := readStream(strings.TrimSuffix(jf, ".json") + ".arrows")
			if err != nil {
				t.Fatal(err)
			}
			c := &corpus.RandCase{Seed: m.Seed, Schema: schema, Format: m.Format, Policy: m.Policy, PageBytes: m.PageBytes}
			c.Batches = batchesOf(schema, cols)
			o := runCase(w, filepath.Join(t.TempDir(), name), c)
			for _, f := range o.failures {
				t.Error(f)
			}
			for _, l := range o.limitations {
				t.Log(l)
			}
		})
	}
}

// batchesOf regroups IPC columns into record batches.
func batchesOf(schema *arrow.Schema, cols [][]arrow.Array) []arrow.RecordBatch {
	if len(cols) == 0 {
		return nil
	}
	var out []arrow.RecordBatch
	for k := range cols[0] {
		arrs := make([]arrow.Array, len(cols))
		for i := range cols {
			arrs[i] = cols[i][k]
		}
		out = append(out, array.NewRecordBatch(schema, arrs, int64(arrs[0].Len())))
	}
	return out
}
