package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/planarlance/planar/reader"
)

// side is one writer of the table's columns.
type side struct {
	Name    string `json:"name"`
	Kind    string `json:"kind"` // planar, pylance or (classes suite) parquet
	Policy  string `json:"policy,omitempty"`
	Version string `json:"version"`
	// Concurrency is planar's writer.WithConcurrency (0: the default,
	// GOMAXPROCS).
	Concurrency int `json:"concurrency,omitempty"`
}

func sides(pylance, pylance22 bool) []side {
	s := []side{
		{Name: "planar cost", Kind: "planar", Policy: "cost", Version: "2.3"},
		{Name: "planar lance", Kind: "planar", Policy: "lance", Version: "2.3"},
	}
	if pylance {
		s = append(s, side{Name: "pylance 2.3", Kind: "pylance", Version: "2.3"})
		if pylance22 {
			s = append(s, side{Name: "pylance 2.2", Kind: "pylance", Version: "2.2"})
		}
	}
	return s
}

// spread is the median and range of a throughput over the repetitions.
type spread struct {
	Median float64   `json:"median"`
	Min    float64   `json:"min"`
	Max    float64   `json:"max"`
	All    []float64 `json:"samples"`
}

func spreadOf(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{Median: med, Min: s[0], Max: s[len(s)-1], All: xs}
}

// sideResult is one writer's numbers for one case.
type sideResult struct {
	Side      string   `json:"side"`
	FileBytes int64    `json:"file_bytes"`
	Cells     []string `json:"cells"` // per column: pages per cell, read with planar's reader
	WriteMBps spread   `json:"write_mb_s"`
	ReadMBps  spread   `json:"readall_mb_s"`
	// The IO of a take of one valid and of one null row, by planar's reader
	// and by Lance's reader (pylance), each after a warm-up take.
	PlanarTakeValid *ioCount `json:"planar_reader_take_valid,omitempty"`
	PlanarTakeNull  *ioCount `json:"planar_reader_take_null,omitempty"`
	LanceTakeValid  *ioCount `json:"lance_reader_take_valid,omitempty"`
	LanceTakeNull   *ioCount `json:"lance_reader_take_null,omitempty"`
	LanceIONote     string   `json:"lance_reader_io_note,omitempty"`
	// ReadBack is "ok" when the writer's own reader read its file back
	// equal to the input; PylanceReadBack the same for pylance reading a
	// planar file (the check that matters: a wrong file is worthless).
	ReadBack        string        `json:"read_back"`
	PylanceReadBack string        `json:"pylance_read_back,omitempty"`
	Errors          []string      `json:"errors,omitempty"`
	Samples         []measurement `json:"samples"`
}

// caseResult is one case: its data and every side's numbers.
type caseResult struct {
	preparedCase
	Sides []sideResult `json:"sides"`
}

// Failed reports whether any file was wrong or any measurement failed.
func (c caseResult) Failed() bool {
	for _, s := range c.Sides {
		if len(s.Errors) > 0 || s.ReadBack != "ok" || s.PylanceReadBack != "" && s.PylanceReadBack != "ok" {
			return true
		}
	}
	return false
}

// runner runs the measurements of one suite.
type runner struct {
	self   string // this binary, run again with workerFlag
	python string // the venv's python ("" without pylance)
	script string // pylance_bench.py, written into the work dir
	work   string
	reps   int
	sides  []side
	keep   bool
}

// runCase measures every side reps times, interleaved (A B C A B C), then
// reads the files' cells and checks planar's files with pylance.
func (r *runner) runCase(p preparedCase) caseResult {
	res := caseResult{preparedCase: p, Sides: make([]sideResult, len(r.sides))}
	files := make([]string, len(r.sides))
	for i, s := range r.sides {
		res.Sides[i].Side = s.Name
		files[i] = filepath.Join(r.work, p.Slug+"."+strings.ReplaceAll(s.Name, " ", "-")+".lance")
	}
	writeMB := make([][]float64, len(r.sides))
	readMB := make([][]float64, len(r.sides))
	for rep := range r.reps {
		for i, s := range r.sides {
			j := job{IPC: p.IPC, Out: files[i], Policy: s.Policy, Version: s.Version, IO: rep == 0,
				Warm: p.WarmRow, Valid: p.ValidRow, Null: p.NullRow,
				Dataset: filepath.Join(r.work, p.Slug+".dataset")}
			m, err := r.measure(s, j)
			sr := &res.Sides[i]
			if err == nil && m.Error != "" {
				err = fmt.Errorf("%s", m.Error)
			}
			if err != nil {
				sr.Errors = append(sr.Errors, fmt.Sprintf("rep %d: %v", rep+1, err))
				continue
			}
			sr.Samples = append(sr.Samples, m)
			writeMB[i] = append(writeMB[i], float64(p.ArrowBytes)/1e6/m.WriteSec)
			readMB[i] = append(readMB[i], float64(p.ArrowBytes)/1e6/m.ReadAllSec)
			if rep == 0 {
				sr.FileBytes, sr.ReadBack = m.FileBytes, m.ReadBack
				if s.Kind == "planar" {
					sr.PlanarTakeValid, sr.PlanarTakeNull = m.TakeValid, m.TakeNull
				} else {
					sr.LanceTakeValid, sr.LanceTakeNull, sr.LanceIONote = m.TakeValid, m.TakeNull, m.IONote
				}
			} else if m.FileBytes != sr.FileBytes && s.Kind == "planar" {
				// planar's output is a function of its input: a different
				// file means a bug. (pylance's sizes vary a little from run
				// to run; the table shows their range.)
				sr.Errors = append(sr.Errors, fmt.Sprintf("rep %d wrote %d bytes, rep 1 %d", rep+1, m.FileBytes, sr.FileBytes))
			}
			if m.ReadBack != "ok" && sr.ReadBack == "ok" {
				sr.ReadBack = m.ReadBack
			}
		}
	}
	for i, s := range r.sides {
		sr := &res.Sides[i]
		sr.WriteMBps, sr.ReadMBps = spreadOf(writeMB[i]), spreadOf(readMB[i])
		if len(sr.Samples) == 0 {
			continue
		}
		cells, err := fileCells(files[i])
		if err != nil {
			sr.Errors = append(sr.Errors, fmt.Sprintf("planar's reader on the file: %v", err))
		}
		sr.Cells = cells
		if s.Kind == "pylance" {
			// The same takes with planar's reader on pylance's file.
			if sr.PlanarTakeValid, sr.PlanarTakeNull, err = planarTakeIO(files[i], p.WarmRow, p.ValidRow, p.NullRow); err != nil {
				sr.Errors = append(sr.Errors, fmt.Sprintf("planar's reader on pylance's file: %v", err))
			}
		}
	}
	if r.python != "" {
		r.verify(p, files, &res)
	}
	if !r.keep {
		for _, f := range files {
			os.Remove(f)
		}
	}
	return res
}

// measure runs one measurement in its own process.
func (r *runner) measure(s side, j job) (measurement, error) {
	arg, err := json.Marshal(j)
	if err != nil {
		return measurement{}, err
	}
	var cmd *exec.Cmd
	if s.Kind == "planar" {
		cmd = exec.Command(r.self, workerFlag, string(arg))
	} else {
		cmd = exec.Command(r.python, r.script, "measure", string(arg))
	}
	var m measurement
	err = runJSON(cmd, &m)
	return m, err
}

// verifyResult is pylance's reading of one planar file.
type verifyResult struct {
	File      string   `json:"file"`
	ReadBack  string   `json:"read_back"`
	TakeValid *ioCount `json:"take_valid"`
	TakeNull  *ioCount `json:"take_null"`
	IONote    string   `json:"io_note"`
}

// verify has pylance read every planar file of the case and count the IO
// of the takes with Lance's reader.
func (r *runner) verify(p preparedCase, files []string, res *caseResult) {
	j := job{IPC: p.IPC, IO: true, Version: "2.3", Warm: p.WarmRow, Valid: p.ValidRow, Null: p.NullRow,
		Dataset: filepath.Join(r.work, p.Slug+".verify")}
	r.pylanceVerify(j, files, func(i int) bool { return len(res.Sides[i].Samples) > 0 }, func(i int, v verifyResult, err error) {
		sr := &res.Sides[i]
		if err != nil {
			sr.PylanceReadBack = "pylance check failed: " + err.Error()
			return
		}
		sr.PylanceReadBack = v.ReadBack
		sr.LanceTakeValid, sr.LanceTakeNull, sr.LanceIONote = v.TakeValid, v.TakeNull, v.IONote
	})
}

// pylanceVerify has pylance read the files of the planar sides that
// measured (ok) in one run of the script, and hands each side its result
// (or the error of the run).
func (r *runner) pylanceVerify(base job, files []string, ok func(side int) bool, got func(side int, v verifyResult, err error)) {
	var idx []int
	j := struct {
		job
		Files []string `json:"files"`
	}{job: base}
	for i, s := range r.sides {
		if s.Kind == "planar" && ok(i) {
			idx = append(idx, i)
			j.Files = append(j.Files, files[i])
		}
	}
	if len(idx) == 0 {
		return
	}
	arg, err := json.Marshal(j)
	if err != nil {
		panic(err) // a struct of strings and ints always marshals
	}
	var out []verifyResult
	err = runJSON(exec.Command(r.python, r.script, "verify", string(arg)), &out)
	if err == nil && len(out) != len(idx) {
		err = fmt.Errorf("pylance checked %d files of %d", len(out), len(idx))
	}
	for k, i := range idx {
		if err != nil {
			got(i, verifyResult{}, err)
		} else {
			got(i, out[k], nil)
		}
	}
}

// runJSON runs cmd and decodes its stdout into v; a JSON "error" field, a
// failed exit or unparsable output are errors (with the end of stderr).
func runJSON(cmd *exec.Cmd, v any) error {
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	tail := strings.TrimSpace(stderr.String())
	if len(tail) > 600 {
		tail = "..." + tail[len(tail)-600:]
	}
	if runErr != nil {
		return fmt.Errorf("%s: %v: %s", filepath.Base(cmd.Path), runErr, tail)
	}
	var probe struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(stdout.Bytes(), &probe) == nil && probe.Error != "" {
		return fmt.Errorf("%s", probe.Error)
	}
	if err := json.Unmarshal(stdout.Bytes(), v); err != nil {
		return fmt.Errorf("%s printed %q: %v (stderr: %s)", filepath.Base(cmd.Path), stdout.String(), err, tail)
	}
	return nil
}

// fileCells reads a Lance file's page table with planar's reader and
// counts, per column, the pages of each cell: "v: sparse x none ×1".
func fileCells(path string) ([]string, error) {
	f, err := reader.OpenPath(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	for c := range f.NumColumns() {
		counts := map[string]int{}
		var order []string
		for _, pg := range f.Pages(c) {
			if counts[pg.Cell] == 0 {
				order = append(order, pg.Cell)
			}
			counts[pg.Cell]++
		}
		parts := make([]string, len(order))
		for i, cell := range order {
			parts[i] = fmt.Sprintf("%s ×%d", cell, counts[cell])
		}
		out = append(out, f.ColumnPath(c)+": "+strings.Join(parts, ", "))
	}
	return out, nil
}
