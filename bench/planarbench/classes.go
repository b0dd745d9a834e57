package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
)

// classesSuite (-suite classes) is the performance table of issue 12: the
// column classes of corpus.PerfClasses and a few sparse cases, written by
// planar (policies cost and lance, and cost on one core), pylance and
// arrow-go's Parquet writer, then read back and taken from by each writer's
// own reader.
const classesSuite = "classes"

// Take sizes of the suite: random rows, sorted, without repeats, the same
// for every side (fewer when the class has fewer rows).
const (
	takeSmall = 100
	takeLarge = 10_000
)

// classSides are the columns of the classes tables.
func classSides(withPylance bool) []side {
	s := []side{
		{Name: "planar cost", Kind: "planar", Policy: "cost", Version: "2.3"},
		{Name: "planar lance", Kind: "planar", Policy: "lance", Version: "2.3"},
		{Name: "planar cost 1 core", Kind: "planar", Policy: "cost", Version: "2.3", Concurrency: 1},
	}
	if withPylance {
		s = append(s, side{Name: "pylance 2.3", Kind: "pylance", Version: "2.3"})
	}
	return append(s, side{Name: "parquet zstd", Kind: "parquet", Version: "pqarrow"})
}

// classCase is one case of the suite: a corpus class or a sparse case.
type classCase struct {
	Name   string
	Rows   int
	Record func(mem memory.Allocator, seed uint64) arrow.RecordBatch // a corpus class
	Sparse *benchCase                                                // or a case of the sparse suite
}

// classCases are the suite's cases at a row-count scale: every class of
// corpus.PerfClasses, then three sparse cases at the classes' sizes (64Ki
// vectors, 1Mi other rows).
func classCases(scale float64) []classCase {
	var cs []classCase
	for _, pc := range corpus.PerfClasses(scale) {
		cs = append(cs, classCase{Name: pc.Name, Rows: pc.Rows, Record: pc.Record})
	}
	rows := func(n int) int { return max(1, int(float64(n)*scale)) }
	for _, bc := range []benchCase{
		{Name: "sparse fsl<f32,768> 99% null", Rows: rows(1 << 16), Null: 0.99, Col: fslF32{dim: 768}},
		{Name: "sparse string ~16 B 99% null", Rows: rows(1 << 20), Null: 0.99, Col: randString{min: 12, max: 20}},
		{Name: "sparse list<int32> 99% null or empty", Rows: rows(1 << 20), Null: 0.495, Empty: 0.495, Col: listI32{min: 1, max: 5}},
	} {
		cs = append(cs, classCase{Name: bc.Name, Rows: bc.Rows, Sparse: &bc})
	}
	return cs
}

// takeSets are the rows of the two takes of a case.
type takeSets struct {
	Small []int64 `json:"take100"`
	Large []int64 `json:"take10k"`
}

// prepareClass writes the case's rows into dir/<slug>.arrow in batches of
// batchRows rows and its take indices into dir/<slug>.takes.json.
func prepareClass(c classCase, seed uint64, dir string) (preparedCase, string, error) {
	var p preparedCase
	var err error
	if c.Sparse != nil {
		p, err = prepare(*c.Sparse, c.Rows, seed, dir)
	} else {
		p, err = writeClassIPC(c, seed, dir)
	}
	if err != nil {
		return p, "", err
	}
	h := fnv.New64a()
	h.Write([]byte(c.Name))
	rng := rand.New(rand.NewPCG(seed, h.Sum64()^0x7a4e))
	t := takeSets{Small: sampleRows(rng, p.Rows, takeSmall), Large: sampleRows(rng, p.Rows, takeLarge)}
	b, err := json.Marshal(t)
	if err != nil {
		return p, "", err
	}
	takes := filepath.Join(dir, p.Slug+".takes.json")
	return p, takes, os.WriteFile(takes, b, 0o644)
}

// writeClassIPC generates a corpus class and writes it as IPC batches.
func writeClassIPC(c classCase, seed uint64, dir string) (preparedCase, error) {
	p := preparedCase{Name: c.Name, Slug: slug(c.Name), Rows: c.Rows, ValidRow: -1, NullRow: -1}
	p.IPC = filepath.Join(dir, p.Slug+".arrow")
	rec := validChildren(c.Record(memory.NewGoAllocator(), seed))
	defer rec.Release()
	p.Rows = int(rec.NumRows())
	p.ArrowBytes = corpus.ArrowBytes(rec)
	for _, col := range rec.Columns() {
		p.Nulls += col.NullN()
	}
	f, err := os.Create(p.IPC)
	if err != nil {
		return p, err
	}
	defer f.Close()
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(rec.Schema()))
	if err != nil {
		return p, err
	}
	for lo := int64(0); lo < rec.NumRows() || lo == 0; lo += batchRows {
		part := rec.NewSlice(lo, min(lo+batchRows, rec.NumRows()))
		err := w.Write(part)
		part.Release()
		if err != nil {
			return p, fmt.Errorf("%s: %w", p.IPC, err)
		}
	}
	if err := w.Close(); err != nil {
		return p, err
	}
	return p, f.Close()
}

// validChildren drops the validity bitmap of the items of a top-level
// fixed-size list whose item is declared non-nullable (arrow-go's builder
// appends null items under a null row): the values are the same, and
// pylance 14 rejects such a child ("non-nullable child ... contains nulls
// not present in parent FixedSizeList"). It takes over rec.
func validChildren(rec arrow.RecordBatch) arrow.RecordBatch {
	cols := rec.Columns()
	out := make([]arrow.Array, len(cols))
	changed := false
	for i, col := range cols {
		t, ok := col.DataType().(*arrow.FixedSizeListType)
		d := col.Data()
		if !ok || t.ElemField().Nullable || d.Children()[0].NullN() == 0 {
			col.Retain()
			out[i] = col
			continue
		}
		changed = true
		ch := d.Children()[0]
		bufs := append([]*memory.Buffer{nil}, ch.Buffers()[1:]...)
		nc := array.NewData(ch.DataType(), ch.Len(), bufs, ch.Children(), 0, ch.Offset())
		nd := array.NewData(t, d.Len(), d.Buffers(), []arrow.ArrayData{nc}, d.NullN(), d.Offset())
		out[i] = array.MakeFromData(nd)
		nc.Release()
		nd.Release()
	}
	if !changed {
		for _, a := range out {
			a.Release()
		}
		return rec
	}
	res := array.NewRecordBatch(rec.Schema(), out, rec.NumRows())
	for _, a := range out {
		a.Release()
	}
	rec.Release()
	return res
}

// sampleRows draws min(k, n) different rows of n at random, sorted.
func sampleRows(rng *rand.Rand, n, k int) []int64 {
	if k >= n {
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(i)
		}
		return out
	}
	out := make([]int64, 0, k)
	if 2*k > n {
		for _, i := range rng.Perm(n)[:k] {
			out = append(out, int64(i))
		}
	} else {
		seen := make(map[int64]bool, k)
		for len(out) < k {
			if i := rng.Int64N(int64(n)); !seen[i] {
				seen[i] = true
				out = append(out, i)
			}
		}
	}
	slices.Sort(out)
	return out
}

// classesConfig is a classes run's command line.
type classesConfig struct {
	Scale   float64
	Reps    int
	Seed    uint64
	Cases   *regexp.Regexp
	Work    string
	Keep    bool
	Pylance bool
	Python  string
	Out     string
}

// runClasses runs the classes suite and prints its tables.
func runClasses(cfg classesConfig, stdout, stderr io.Writer) error {
	if cfg.Scale <= 0 || cfg.Reps < 1 {
		return fmt.Errorf("-scale must be positive and -reps at least 1: %w", errUsage)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	r := &runner{self: self, reps: cfg.Reps, keep: cfg.Keep, sides: classSides(cfg.Pylance)}
	env := environment{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(), Go: runtime.Version(),
		Suite: classesSuite, Reps: cfg.Reps, Seed: cfg.Seed, Started: time.Now().UTC().Format(time.RFC3339)}
	if cfg.Pylance {
		if r.python, env.Pylance, err = findPylance(cfg.Python); err != nil {
			return fmt.Errorf("%w (or run with -pylance=false to measure planar and Parquet alone)", err)
		}
	}
	if r.work = cfg.Work; r.work == "" {
		if r.work, err = os.MkdirTemp("", "planarbench-classes-"); err != nil {
			return err
		}
		if !cfg.Keep {
			defer os.RemoveAll(r.work)
		}
	} else if err := os.MkdirAll(r.work, 0o755); err != nil {
		return err
	}
	if r.python != "" {
		r.script = filepath.Join(r.work, "pylance_bench.py")
		if err := os.WriteFile(r.script, pylanceScript, 0o644); err != nil {
			return err
		}
	}
	res := classResults{Environment: env, Scale: cfg.Scale, Sides: r.sides}
	start := time.Now()
	for _, c := range classCases(cfg.Scale) {
		if cfg.Cases != nil && !cfg.Cases.MatchString(c.Name) {
			continue
		}
		t0 := time.Now()
		p, takes, err := prepareClass(c, cfg.Seed, r.work)
		if err != nil {
			return fmt.Errorf("%s: generating the data: %w", c.Name, err)
		}
		cr := r.runClass(p, takes)
		if !cfg.Keep {
			os.Remove(p.IPC)
			os.Remove(takes)
		}
		status := "ok"
		if cr.Failed() {
			status = "FAILED"
		}
		fmt.Fprintf(stderr, "%-40s %6.1f s  %s\n", c.Name, time.Since(t0).Seconds(), status)
		res.Cases = append(res.Cases, cr)
	}
	if len(res.Cases) == 0 {
		return fmt.Errorf("no case of suite %q matches: %w", classesSuite, errUsage)
	}
	res.Seconds = time.Since(start).Seconds()
	printClassesMarkdown(stdout, &res)
	if cfg.Out != "" {
		b, err := json.MarshalIndent(&res, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(cfg.Out, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	for _, c := range res.Cases {
		if c.Failed() {
			return errFailed
		}
	}
	return nil
}

// classResults is a classes run, as printed and as written with -out.
type classResults struct {
	Environment environment   `json:"environment"`
	Scale       float64       `json:"scale"`
	Seconds     float64       `json:"seconds"`
	Sides       []side        `json:"sides"`
	Cases       []classResult `json:"cases"`
}

// classResult is one case: its data and every side's numbers.
type classResult struct {
	preparedCase
	Take100 int               `json:"take100_rows"`
	Take10k int               `json:"take10k_rows"`
	Sides   []classSideResult `json:"sides"`
	// RawMBps is the raw limit of a write (writeRaw), in Arrow MB/s of
	// wall time, measured once a rep in a process of its own as the
	// sides are; RawError says why it was not.
	RawMBps  spread `json:"raw_write_mb_s"`
	RawError string `json:"raw_error,omitempty"`
}

// classSideResult is one side's numbers for one case; times in seconds.
type classSideResult struct {
	Side        string `json:"side"`
	Kind        string `json:"kind"`
	FileBytes   int64  `json:"file_bytes"`
	WriteMBps   spread `json:"write_mb_s"`
	WriteCPU    spread `json:"write_cpu_s"`
	CPUPerWall  spread `json:"write_cpu_per_wall"`
	ReadMBps    spread `json:"readall_mb_s"`
	Take100Sec  spread `json:"take100_s"`
	Take10kSec  spread `json:"take10k_s"`
	ReadCPU     spread `json:"readall_cpu_s"`
	Take100CPU  spread `json:"take100_cpu_s"`
	Take10kCPU  spread `json:"take10k_cpu_s"`
	ReadBack    string `json:"read_back"`
	TakeBack    string `json:"take_back"`
	PylanceBack string `json:"pylance_read_back,omitempty"`
	// Errors fail the case; Notes (a Parquet side that could not store or
	// read back the class) do not: they are arrow-go's limits, not planar's.
	Errors  []string           `json:"errors,omitempty"`
	Notes   []string           `json:"notes,omitempty"`
	Samples []classMeasurement `json:"samples"`
}

// Failed reports whether a planar or pylance file was wrong or a
// measurement of one failed.
func (c classResult) Failed() bool {
	if c.RawError != "" {
		return true
	}
	for _, s := range c.Sides {
		if len(s.Errors) > 0 {
			return true
		}
		if s.Kind == "parquet" || len(s.Samples) == 0 {
			continue
		}
		if s.ReadBack != "ok" || s.TakeBack != "ok" || s.PylanceBack != "" && s.PylanceBack != "ok" {
			return true
		}
	}
	return false
}

// runClass measures every side reps times, interleaved, each measurement
// in its own process, then has pylance read planar's files.
func (r *runner) runClass(p preparedCase, takes string) classResult {
	res := classResult{preparedCase: p, Sides: make([]classSideResult, len(r.sides))}
	res.Take100, res.Take10k = min(takeSmall, p.Rows), min(takeLarge, p.Rows)
	files := make([]string, len(r.sides))
	for i, s := range r.sides {
		res.Sides[i].Side, res.Sides[i].Kind = s.Name, s.Kind
		ext := ".lance"
		if s.Kind == "parquet" {
			ext = ".parquet"
		}
		files[i] = filepath.Join(r.work, p.Slug+"."+strings.ReplaceAll(s.Name, " ", "-")+ext)
	}
	var rawMBps []float64
	for rep := range r.reps {
		for i, s := range r.sides {
			j := classJob{Kind: s.Kind, IPC: p.IPC, Out: files[i], Takes: takes, Policy: s.Policy,
				Version: s.Version, Concurrency: s.Concurrency}
			m, err := r.measureClass(j)
			if err == nil && m.Error != "" {
				err = fmt.Errorf("%s", m.Error)
			}
			sr := &res.Sides[i]
			if err != nil {
				if s.Kind == "parquet" {
					sr.Notes = addNote(sr.Notes, err.Error())
				} else {
					sr.Errors = append(sr.Errors, fmt.Sprintf("rep %d: %v", rep+1, err))
				}
				continue
			}
			if len(sr.Samples) == 0 {
				sr.FileBytes, sr.ReadBack, sr.TakeBack = m.FileBytes, m.ReadBack, m.TakeBack
			} else if m.FileBytes != sr.FileBytes && s.Kind == "planar" {
				sr.Errors = append(sr.Errors, fmt.Sprintf("rep %d wrote %d bytes, the first %d", rep+1, m.FileBytes, sr.FileBytes))
			}
			if m.ReadBack != "ok" && sr.ReadBack == "ok" {
				sr.ReadBack = m.ReadBack
			}
			if m.TakeBack != "ok" && sr.TakeBack == "ok" {
				sr.TakeBack = m.TakeBack
			}
			sr.Samples = append(sr.Samples, m)
		}
		raw := filepath.Join(r.work, p.Slug+".raw-copy")
		m, err := r.measureClass(classJob{Kind: "raw", IPC: p.IPC, Out: raw, Takes: takes})
		if err == nil && m.Error != "" {
			err = fmt.Errorf("%s", m.Error)
		}
		os.Remove(raw)
		if err != nil {
			res.RawError = err.Error()
		} else {
			rawMBps = append(rawMBps, float64(p.ArrowBytes)/1e6/m.WriteSec)
		}
	}
	res.RawMBps = spreadOf(rawMBps)
	var costBytes int64
	for i, s := range r.sides {
		sr := &res.Sides[i]
		sr.summarize(p.ArrowBytes)
		if s.Kind == "parquet" && len(sr.Samples) > 0 {
			for _, what := range []struct{ name, v string }{{"read back", sr.ReadBack}, {"take", sr.TakeBack}} {
				if what.v != "ok" {
					sr.Notes = addNote(sr.Notes, fmt.Sprintf("pqarrow %s: %s", what.name, what.v))
				}
			}
		}
		// The file's bytes do not depend on the writer's concurrency.
		if s.Kind == "planar" && s.Policy == "cost" && len(sr.Samples) > 0 {
			if costBytes == 0 {
				costBytes = sr.FileBytes
			} else if sr.FileBytes != costBytes {
				sr.Errors = append(sr.Errors, fmt.Sprintf("wrote %d bytes, planar cost on all cores %d", sr.FileBytes, costBytes))
			}
		}
	}
	if r.python != "" {
		r.verifyClass(p, files, &res)
	}
	if !r.keep {
		for _, f := range files {
			os.Remove(f)
		}
	}
	return res
}

func addNote(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// summarize turns the samples into medians and ranges.
func (sr *classSideResult) summarize(arrowBytes int64) {
	var wr, cpu, cpw, rd, t1, t2, rc, c1, c2 []float64
	for _, m := range sr.Samples {
		rc = append(rc, m.ReadAllCPUSec)
		c1 = append(c1, m.Take100CPUSec)
		c2 = append(c2, m.Take10kCPUSec)
		mb := float64(arrowBytes) / 1e6
		wr = append(wr, mb/m.WriteSec)
		cpu = append(cpu, m.WriteCPUSec)
		cpw = append(cpw, m.WriteCPUSec/m.WriteSec)
		rd = append(rd, mb/m.ReadAllSec)
		t1 = append(t1, m.Take100Sec)
		t2 = append(t2, m.Take10kSec)
	}
	sr.WriteMBps, sr.WriteCPU, sr.CPUPerWall = spreadOf(wr), spreadOf(cpu), spreadOf(cpw)
	sr.ReadMBps, sr.Take100Sec, sr.Take10kSec = spreadOf(rd), spreadOf(t1), spreadOf(t2)
	sr.ReadCPU, sr.Take100CPU, sr.Take10kCPU = spreadOf(rc), spreadOf(c1), spreadOf(c2)
}

// measureClass runs one measurement in its own process: this binary for
// planar and Parquet, the venv's python for pylance.
func (r *runner) measureClass(j classJob) (classMeasurement, error) {
	arg, err := json.Marshal(j)
	if err != nil {
		return classMeasurement{}, err
	}
	// The job writes a new file, with no dirty pages of the side before
	// still being written back: rewriting the last rep's 200 MB file in
	// place freed its page cache inside the timed write (a one-core
	// fsl768 write measured 100 to 510 ms of CPU so).
	if err := os.Remove(j.Out); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return classMeasurement{}, err
	}
	syncFiles()
	var m classMeasurement
	if j.Kind == "pylance" {
		err = runJSON(exec.Command(r.python, r.script, "classes", string(arg)), &m)
	} else {
		err = runJSON(exec.Command(r.self, classesWorkerFlag, string(arg)), &m)
	}
	return m, err
}

// verifyClass has pylance read every planar file of the case (the sparse
// suite's verify, without the IO count).
func (r *runner) verifyClass(p preparedCase, files []string, res *classResult) {
	r.pylanceVerify(job{IPC: p.IPC, Version: "2.3"}, files, func(i int) bool { return len(res.Sides[i].Samples) > 0 }, func(i int, v verifyResult, err error) {
		if err != nil {
			res.Sides[i].PylanceBack = "pylance check failed: " + err.Error()
			return
		}
		res.Sides[i].PylanceBack = v.ReadBack
	})
}
