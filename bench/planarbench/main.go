// Command planarbench measures planar side by side with pylance on the same
// data and prints one Markdown table per suite.
//
//	go run ./bench/planarbench -suite sparse [-reps 3] [-out results.json] [-big] [-pylance22]
//	go run ./bench/planarbench -suite classes [-scale 1] [-reps 3] [-cases REGEXP] [-out results.json]
//
// Each case's rows are generated once into an Arrow IPC file in a work
// directory; every measurement (one writer, one repetition) runs in a
// process of its own: this binary run again for planar, the interop venv's
// python with pylance_bench.py for pylance. Repetitions are interleaved
// (A B C A B C) and throughputs are reported as the median and the range.
//
// Per case and writer it reports the file size, the cells of its pages (read
// with planar's reader), write MB/s (Arrow input bytes over the wall time of
// the write alone), ReadAll MB/s (open and read every row, with the writer's
// own reader), and the IO (requests, bytes) of a one-row take of a valid
// and of a null row after a warm-up take, both with planar's reader and with
// Lance's reader (a pylance dataset over the file). Every file is read back
// and compared with the input by its own reader, and planar's files also by
// pylance; a difference marks the case MISMATCH and the exit status 1.
//
// The dataset suite (-suite dataset, dsbench.go) measures the dataset
// package instead, on local disk and on a local S3 server: append
// throughput, commit latency (against pylance), concurrent writers,
// AddColumns against a rewrite, and memory while streaming; -quick makes
// it small.
//
// The classes suite (-suite classes, classes.go) is the performance table
// of issue 12: the column classes of corpus.PerfClasses and three sparse
// cases (-scale multiplies their rows), written by planar (cost, lance,
// and cost on one core), pylance and arrow-go's Parquet writer (zstd);
// per class the file size, write MB/s and CPU time, ReadAll MB/s and the
// time of a take of 100 and of 10k random rows, each with the writer's
// own reader, and the ratios of planar cost to pylance and to Parquet.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"time"

	_ "embed"

	"github.com/planarlance/planar/internal/pyenv"
)

//go:embed pylance_bench.py
var pylanceScript []byte

// errUsage marks a command line that could not be understood (exit 2).
var errUsage = errors.New("usage")

func main() {
	if len(os.Args) > 1 && os.Args[1] == workerFlag {
		os.Exit(workerMain(os.Args[2:], os.Stdout))
	}
	if len(os.Args) > 1 && os.Args[1] == dsWorkerFlag {
		os.Exit(dsWorkerMain(os.Args[2:], os.Stdout))
	}
	if len(os.Args) > 1 && os.Args[1] == classesWorkerFlag {
		os.Exit(classesWorkerMain(os.Args[2:], os.Stdout))
	}
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil:
	case errors.Is(err, errUsage):
		fmt.Fprintln(os.Stderr, "planarbench:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "planarbench:", err)
		os.Exit(1)
	}
}

// errFailed means the table was printed but a file was wrong or a
// measurement failed.
var errFailed = errors.New("some cases failed (MISMATCH or errors above)")

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("planarbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	suite := fs.String("suite", "sparse", "suite to run: "+strings.Join(suiteNames(), ", "))
	reps := fs.Int("reps", 3, "repetitions of every measurement (interleaved across writers)")
	out := fs.String("out", "", "also write the results as JSON to this file")
	work := fs.String("work", "", "work directory for the data and files (default: a temporary directory, removed at the end)")
	keep := fs.Bool("keep", false, "keep the data and the written files")
	rows := fs.Int("rows", 0, "rows of every case (0: each case's own size)")
	big := fs.Bool("big", false, "also run the slow cases (1M rows)")
	match := fs.String("cases", "", "run only the cases whose name matches this regular expression")
	seed := fs.Uint64("seed", 1, "random seed of the data")
	withPylance := fs.Bool("pylance", true, "measure pylance and check planar's files with it (needs the interop venv)")
	pylance22 := fs.Bool("pylance22", false, "also measure pylance writing format 2.2")
	python := fs.String("python", "", "python with pylance (default: $PLANAR_PYTHON, else interop/.venv/bin/python in this or a parent directory)")
	quick := fs.Bool("quick", false, "dataset suite: small sizes and one rep (under a minute)")
	memRows := fs.Int64("mem-rows", 0, "dataset suite: rows of the memory measurement (default 50M, 500k with -quick)")
	commits := fs.Int("commits", 0, "dataset suite: appends of the commit latency runs (default 200, 20 with -quick)")
	writers := fs.String("writers", "1,2,4,8", "dataset suite: numbers of concurrent writer processes")
	perWriter := fs.Int("per-writer", 0, "dataset suite: appends per concurrent writer (default 25, 5 with -quick)")
	embedding := fs.Bool("embedding", false, "dataset suite: add an fsl<f32,128> embedding column to the appended and AddColumns table")
	scale := fs.Float64("scale", 1, "classes suite: row-count multiplier (1: 1Mi rows per flat class, 64Ki vectors; e.g. 0.02 for a quick run)")
	withS3 := fs.Bool("s3", true, "dataset suite: also measure on a local S3 server (needs the weed binary, see internal/s3test)")
	link := fs.Float64("s3-link", dsLinkMBps, "dataset suite: also measure appends to the S3 server through a link of this many MB/s (5 ms each way; 0: none)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return fmt.Errorf("%v: %w", err, errUsage)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: %w", fs.Args(), errUsage)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *suite == datasetSuite {
		cfg := dsDefaults(*quick)
		if set["reps"] {
			cfg.Reps = *reps
		}
		if *rows > 0 {
			cfg.Rows = int64(*rows)
		}
		if *memRows > 0 {
			cfg.MemRows = *memRows
		}
		if *commits > 0 {
			cfg.Commits = *commits
		}
		if *perWriter > 0 {
			cfg.PerWriter = *perWriter
		}
		var err error
		if cfg.Writers, err = parseInts(*writers); err != nil {
			return fmt.Errorf("-writers: %v: %w", err, errUsage)
		}
		cfg.Embedding, cfg.S3, cfg.Seed = *embedding, *withS3, *seed
		if set["s3-link"] {
			cfg.LinkMBps = *link
		}
		if cfg.LinkMBps <= 0 {
			cfg.LinkMBps, cfg.LinkDelayMS = 0, 0
		}
		return runDataset(cfg, *work, *keep, *withPylance, *python, *out, stdout, stderr)
	}
	if *suite == classesSuite {
		cfg := classesConfig{Scale: *scale, Reps: *reps, Seed: *seed, Work: *work, Keep: *keep,
			Pylance: *withPylance, Python: *python, Out: *out}
		if *match != "" {
			var err error
			if cfg.Cases, err = regexp.Compile(*match); err != nil {
				return fmt.Errorf("-cases: %v: %w", err, errUsage)
			}
		}
		return runClasses(cfg, stdout, stderr)
	}
	mk, ok := suites[*suite]
	if !ok {
		return fmt.Errorf("suite %q (have %s): %w", *suite, strings.Join(suiteNames(), ", "), errUsage)
	}
	if *reps < 1 || *rows < 0 {
		return fmt.Errorf("-reps must be at least 1 and -rows not negative: %w", errUsage)
	}
	var re *regexp.Regexp
	if *match != "" {
		var err error
		if re, err = regexp.Compile(*match); err != nil {
			return fmt.Errorf("-cases: %v: %w", err, errUsage)
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	r := &runner{self: self, reps: *reps, keep: *keep}
	env := environment{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(), Go: runtime.Version(),
		Suite: *suite, Reps: *reps, Seed: *seed, Started: time.Now().UTC().Format(time.RFC3339)}
	if *withPylance {
		if r.python, env.Pylance, err = findPylance(*python); err != nil {
			return fmt.Errorf("%w (or run with -pylance=false to measure planar alone)", err)
		}
	}
	r.sides = sides(*withPylance, *pylance22)

	r.work = *work
	if r.work == "" {
		if r.work, err = os.MkdirTemp("", "planarbench-"); err != nil {
			return err
		}
		if !*keep {
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

	var results []caseResult
	for _, c := range mk() {
		if c.Big && !*big || re != nil && !re.MatchString(c.Name) {
			continue
		}
		n := c.Rows
		if *rows > 0 {
			n = *rows
		}
		t0 := time.Now()
		p, err := prepare(c, n, *seed, r.work)
		if err != nil {
			return fmt.Errorf("%s: generating the data: %w", c.Name, err)
		}
		res := r.runCase(p)
		if !*keep {
			os.Remove(p.IPC)
		}
		status := "ok"
		if res.Failed() {
			status = "FAILED"
		}
		fmt.Fprintf(stderr, "%-45s %6.1f s  %s\n", c.Name, time.Since(t0).Seconds(), status)
		results = append(results, res)
	}
	if len(results) == 0 {
		return fmt.Errorf("no case of suite %q matches: %w", *suite, errUsage)
	}
	printMarkdown(stdout, env, r.sides, results)
	if *out != "" {
		doc := struct {
			Environment environment  `json:"environment"`
			Sides       []side       `json:"sides"`
			Cases       []caseResult `json:"cases"`
		}{env, r.sides, results}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	for _, c := range results {
		if c.Failed() {
			return errFailed
		}
	}
	return nil
}

func suiteNames() []string {
	var s []string
	for k := range suites {
		s = append(s, k)
	}
	s = append(s, datasetSuite, classesSuite)
	sort.Strings(s)
	return s
}

// environment records where the numbers come from.
type environment struct {
	GOOS    string `json:"goos"`
	GOARCH  string `json:"goarch"`
	CPUs    int    `json:"cpus"`
	Go      string `json:"go"`
	Pylance string `json:"pylance,omitempty"`
	Suite   string `json:"suite"`
	Reps    int    `json:"reps"`
	Seed    uint64 `json:"seed"`
	Started string `json:"started"`
}

// errNoPylance means no python with pylance was found.
var errNoPylance = pyenv.ErrNoPylance

// findPylance returns the python to use and pylance's version.
var findPylance = pyenv.Find
