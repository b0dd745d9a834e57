package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/planarlance/planar/dataset"
	"github.com/planarlance/planar/internal/s3test"
)

//go:embed pylance_dataset.py
var pylanceDatasetScript []byte

// dsConfig is the dataset suite's sizes.
type dsConfig struct {
	Rows      int64 `json:"rows"`       // append throughput, AddColumns
	MemRows   int64 `json:"mem_rows"`   // the memory measurement
	Commits   int   `json:"commits"`    // commit latency: appends per run
	Writers   []int `json:"writers"`    // concurrent writer processes
	PerWriter int   `json:"per_writer"` // appends per concurrent writer
	BatchRows int   `json:"batch_rows"` // rows of a small append
	Embedding bool  `json:"embedding"`
	S3        bool  `json:"s3"`
	// LinkMBps, when S3 is measured, adds the append throughput through a
	// link of that rate (MB/s, client to server) and LinkDelayMS one way:
	// an S3 server on loopback is as fast as its CPU, a remote one is not,
	// and only a link shows whether uploads overlap the encoding.
	LinkMBps    float64 `json:"link_mb_s,omitempty"`
	LinkDelayMS float64 `json:"link_delay_ms,omitempty"`
	Reps        int     `json:"reps"`
	Seed        uint64
}

// dsDefaults are the sizes of a default run and of -quick.
func dsDefaults(quick bool) dsConfig {
	if quick {
		return dsConfig{Rows: 50_000, MemRows: 500_000, Commits: 20, Writers: []int{1, 2, 4, 8}, PerWriter: 5, BatchRows: 100, S3: true,
			LinkMBps: dsLinkMBps, LinkDelayMS: dsLinkDelayMS, Reps: 1}
	}
	return dsConfig{Rows: 4 << 20, MemRows: 50_000_000, Commits: 200, Writers: []int{1, 2, 4, 8}, PerWriter: 25, BatchRows: 100, S3: true,
		LinkMBps: dsLinkMBps, LinkDelayMS: dsLinkDelayMS, Reps: 3}
}

// The default link to the S3 server: 100 MB/s (0.8 Gbit/s) up, 5 ms each
// way (a 10 ms round trip).
const (
	dsLinkMBps    = 100
	dsLinkDelayMS = 5
)

// dsStore is where a measurement's dataset lives: a local directory or the
// bucket of the S3 server, directly or through a link (appends only).
type dsStore struct {
	Name   string
	S3     *s3test.Server
	server *s3test.Server // the S3 server itself, whose CPU time is measured
	link   bool
	root   string
}

func (s dsStore) job(kind, name string) dsJob {
	if s.S3 != nil {
		return dsJob{Kind: kind, URI: "s3://" + s.S3.Bucket + "/" + name, S3: s.S3}
	}
	return dsJob{Kind: kind, URI: filepath.Join(s.root, name)}
}

// Results of the dataset suite, per store.
type dsStoreResult struct {
	Store          string          `json:"store"`
	LinkMBps       float64         `json:"link_mb_s,omitempty"` // the store is S3 through a link of this rate
	Append         []dsMeasurement `json:"append"`
	PlanarCommits  []dsMeasurement `json:"planar_commits"`
	PylanceCommits []dsMeasurement `json:"pylance_commits,omitempty"`
	Concurrent     []dsConcurrent  `json:"concurrent"`
	AddCol         []dsMeasurement `json:"add_columns"`
	Rewrite        []dsMeasurement `json:"rewrite"`
	Memory         []dsMeasurement `json:"memory"`
}

// dsConcurrent is the runs of one number of concurrent writers.
type dsConcurrent struct {
	Writers int               `json:"writers"`
	Runs    []dsConcurrentRun `json:"runs"`
}

type dsConcurrentRun struct {
	Commits  int      `json:"commits"`
	Retries  int      `json:"retries"`
	Failures []string `json:"failures,omitempty"`
	WallSec  float64  `json:"wall_s"`
	Check    string   `json:"check"` // "ok": every row there exactly once
}

type dsResults struct {
	Environment environment     `json:"environment"`
	Config      dsConfig        `json:"config"`
	ArrowBytes  int64           `json:"arrow_bytes"` // of the Rows-row table
	Stores      []dsStoreResult `json:"stores"`
	Errors      []string        `json:"errors,omitempty"`
}

// Failed reports whether a measurement failed or a check did not hold.
func (r *dsResults) Failed() bool {
	if len(r.Errors) > 0 {
		return true
	}
	for _, s := range r.Stores {
		for _, c := range s.Concurrent {
			for _, run := range c.Runs {
				if len(run.Failures) > 0 || run.Check != "ok" {
					return true
				}
			}
		}
	}
	return false
}

type dsRunner struct {
	self, python, script string
	work                 string
	cfg                  dsConfig
	res                  *dsResults
	stderr               io.Writer
}

// runDatasetSuite runs the dataset suite: the measurements of issue 11 on
// local disk and on a local S3 server, each in a process of its own.
func runDatasetSuite(cfg dsConfig, env environment, self, python, work string, stdout, stderr io.Writer, out string) error {
	ctx := context.Background()
	r := &dsRunner{self: self, python: python, work: work, cfg: cfg, stderr: stderr,
		res: &dsResults{Environment: env, Config: cfg}}
	if python != "" {
		r.script = filepath.Join(work, "pylance_dataset.py")
		if err := os.WriteFile(r.script, pylanceDatasetScript, 0o644); err != nil {
			return err
		}
	}
	stores := []dsStore{{Name: "local", root: filepath.Join(work, "datasets")}}
	if cfg.S3 {
		t0 := time.Now()
		srv, stop, err := s3test.Launch(work)
		if err != nil {
			if errors.Is(err, s3test.ErrNoWeed) {
				return fmt.Errorf("%w (or run with -s3=false for local disk alone)", err)
			}
			return fmt.Errorf("starting the S3 server: %w", err)
		}
		defer stop()
		fmt.Fprintf(stderr, "%-45s %6.1f s\n", "S3 server (SeaweedFS) up", time.Since(t0).Seconds())
		stores = append(stores, dsStore{Name: "S3", S3: srv, server: srv})
		if cfg.LinkMBps > 0 {
			through, stopLink, err := srv.Link(cfg.LinkMBps*1e6, time.Duration(cfg.LinkDelayMS*float64(time.Millisecond)))
			if err != nil {
				return fmt.Errorf("starting the link to the S3 server: %w", err)
			}
			defer stopLink()
			stores = append(stores, dsStore{Name: fmt.Sprintf("S3, %g MB/s link", cfg.LinkMBps), S3: through, server: srv, link: true})
		}
	}
	for _, s := range stores {
		res := dsStoreResult{Store: s.Name}
		if s.link {
			res.LinkMBps = cfg.LinkMBps
		}
		r.res.Stores = append(r.res.Stores, res)
	}
	ipcPath := filepath.Join(work, "dataset-table.arrow")
	var err error
	if r.res.ArrowBytes, err = writeDSIPC(ipcPath, cfg.Seed, cfg.Rows, cfg.Embedding); err != nil {
		return fmt.Errorf("generating the table: %w", err)
	}
	defer os.Remove(ipcPath)

	r.section("1. append throughput", func(rep int) {
		for i, s := range stores {
			j := s.job(dsAppend, fmt.Sprintf("append-%d", rep))
			j.IPC, j.Seed = ipcPath, cfg.Seed
			r.res.Stores[i].Append = r.add(r.res.Stores[i].Append, s, j, rep, "planar")
		}
	})
	r.section("2. commit latency", func(rep int) {
		for i, s := range stores {
			if s.link {
				continue
			}
			j := s.job(dsCommits, fmt.Sprintf("commits-planar-%d", rep))
			j.Commits, j.BatchRows, j.Seed = cfg.Commits, cfg.BatchRows, cfg.Seed
			r.res.Stores[i].PlanarCommits = r.add(r.res.Stores[i].PlanarCommits, s, j, rep, "planar")
			if r.python != "" {
				pj := j
				pj.URI = s.job(dsCommits, fmt.Sprintf("commits-pylance-%d", rep)).URI
				r.res.Stores[i].PylanceCommits = r.add(r.res.Stores[i].PylanceCommits, s, pj, rep, "pylance")
			}
		}
	})
	for i := range stores {
		if stores[i].link {
			continue
		}
		for _, n := range cfg.Writers {
			r.res.Stores[i].Concurrent = append(r.res.Stores[i].Concurrent, dsConcurrent{Writers: n})
		}
	}
	r.section("3. concurrent writers", func(rep int) {
		for k, n := range cfg.Writers {
			for i, s := range stores {
				if s.link {
					continue
				}
				run := r.concurrent(ctx, s, n, rep)
				c := &r.res.Stores[i].Concurrent[k]
				c.Runs = append(c.Runs, run)
			}
		}
	})
	r.section("4. AddColumns against a rewrite", func(rep int) {
		for i, s := range stores {
			if s.link {
				continue
			}
			j := s.job(dsAddCol, fmt.Sprintf("addcol-%d", rep))
			j.IPC, j.Rows, j.Seed = ipcPath, cfg.Rows, cfg.Seed
			r.res.Stores[i].AddCol = r.add(r.res.Stores[i].AddCol, s, j, rep, "planar")
			j = s.job(dsRewrite, fmt.Sprintf("rewrite-%d", rep))
			j.IPC, j.Seed = ipcPath, cfg.Seed
			r.res.Stores[i].Rewrite = r.add(r.res.Stores[i].Rewrite, s, j, rep, "planar")
		}
	})
	// One run per store: the memory peak does not vary like a rate.
	t0 := time.Now()
	for i, s := range stores {
		if s.link {
			continue
		}
		j := s.job(dsMemory, "memory")
		j.Rows, j.Seed = cfg.MemRows, cfg.Seed
		r.res.Stores[i].Memory = r.add(nil, s, j, 0, "planar")
	}
	fmt.Fprintf(stderr, "%-45s %6.1f s\n", "5. memory while streaming", time.Since(t0).Seconds())

	printDatasetMarkdown(stdout, r.res)
	if out != "" {
		b, err := json.MarshalIndent(r.res, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(out, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if r.res.Failed() {
		return errFailed
	}
	return nil
}

// serverCPU is the CPU time the store's server has used so far (0 for
// local disk).
func (s dsStore) serverCPU() (float64, error) {
	if s.server == nil {
		return 0, nil
	}
	return s.server.CPUSeconds()
}

// section runs every repetition of one measurement, timing it for the log.
func (r *dsRunner) section(name string, rep func(int)) {
	t0 := time.Now()
	for i := range r.cfg.Reps {
		rep(i)
	}
	fmt.Fprintf(r.stderr, "%-45s %6.1f s\n", name, time.Since(t0).Seconds())
}

// add runs j in its own process (who: planar, or pylance for a commits
// job), appends its measurement to ms, records a failure, and removes the
// dataset.
func (r *dsRunner) add(ms []dsMeasurement, s dsStore, j dsJob, rep int, who string) []dsMeasurement {
	arg, err := json.Marshal(j)
	if err != nil {
		panic(err) // a struct of strings and numbers always marshals
	}
	cmd := exec.Command(r.self, dsWorkerFlag, string(arg))
	if who == "pylance" {
		cmd = exec.Command(r.python, r.script, j.Kind, string(arg))
	}
	var m dsMeasurement
	cpu0, cpuErr := s.serverCPU()
	err = runJSON(cmd, &m)
	if cpu1, err1 := s.serverCPU(); cpuErr == nil && err1 == nil {
		m.ServerCPUSec = cpu1 - cpu0
	}
	if err != nil {
		r.res.Errors = append(r.res.Errors, fmt.Sprintf("%s, %s %s, rep %d: %v", s.Name, who, j.Kind, rep+1, err))
	} else {
		ms = append(ms, m)
	}
	if err := removeDataset(context.Background(), j); err != nil {
		r.res.Errors = append(r.res.Errors, fmt.Sprintf("%s: removing %s: %v", s.Name, j.URI, err))
	}
	return ms
}

// concurrent creates an empty dataset, then runs n writer processes that
// start together and append PerWriter batches each; it checks that every
// row is there exactly once.
func (r *dsRunner) concurrent(ctx context.Context, s dsStore, n, rep int) dsConcurrentRun {
	var run dsConcurrentRun
	j := s.job(dsKindConcurrent, fmt.Sprintf("concurrent-%d-%d", n, rep))
	j.Commits, j.BatchRows, j.Seed = r.cfg.PerWriter, r.cfg.BatchRows, r.cfg.Seed
	defer func() {
		if err := removeDataset(ctx, j); err != nil {
			r.res.Errors = append(r.res.Errors, fmt.Sprintf("%s: removing %s: %v", s.Name, j.URI, err))
		}
	}()
	w, err := dataset.Create(ctx, j.URI, dsSchema(false), j.options()...)
	if err == nil {
		_, err = w.Commit(ctx)
	}
	if err != nil {
		run.Check = "create failed: " + err.Error()
		return run
	}
	// Every process starts its first append at the same instant, once all
	// have had time to start.
	j.StartAt = time.Now().Add(time.Second + time.Duration(n)*100*time.Millisecond).UnixNano()
	type result struct {
		m   dsMeasurement
		err error
	}
	results := make([]chan result, n)
	for k := range n {
		jk := j
		jk.FirstID = int64(k * r.cfg.PerWriter * r.cfg.BatchRows)
		arg, _ := json.Marshal(jk)
		results[k] = make(chan result, 1)
		go func() {
			var m dsMeasurement
			err := runJSON(exec.Command(r.self, dsWorkerFlag, string(arg)), &m)
			results[k] <- result{m, err}
		}()
	}
	var first, last int64
	for k := range n {
		res := <-results[k]
		if res.err != nil {
			run.Failures = append(run.Failures, fmt.Sprintf("writer %d: %v", k, res.err))
			continue
		}
		m := res.m
		run.Commits += m.Commits
		run.Retries += m.Retries
		run.Failures = append(run.Failures, m.Failures...)
		if first == 0 || m.StartNS < first {
			first = m.StartNS
		}
		last = max(last, m.EndNS)
	}
	run.WallSec = float64(last-first) / 1e9
	run.Check = checkIDs(ctx, j, int64(n*r.cfg.PerWriter*r.cfg.BatchRows))
	return run
}

// checkIDs opens the dataset and says "ok" when it holds exactly the ids
// [0, want), each once.
func checkIDs(ctx context.Context, j dsJob, want int64) string {
	d, err := dataset.Open(ctx, j.URI, j.options()...)
	if err != nil {
		return "open: " + err.Error()
	}
	if got := d.CountRows(); got != want {
		return fmt.Sprintf("%d rows, want %d", got, want)
	}
	seen := make([]bool, want)
	var distinct int64
	for rec, err := range d.Scan(ctx, 0) {
		if err != nil {
			return "scan: " + err.Error()
		}
		ids := rec.Column(0).(*array.Int64)
		for i := range ids.Len() {
			id := ids.Value(i)
			if id < 0 || id >= want || seen[id] {
				rec.Release()
				return fmt.Sprintf("id %d unexpected or twice", id)
			}
			seen[id] = true
			distinct++
		}
		rec.Release()
	}
	if distinct != want {
		return fmt.Sprintf("%d distinct ids, want %d", distinct, want)
	}
	return "ok"
}

// datasetSuite is the -suite name of the dataset measurements, which do not
// fit the per-column cases of the other suites.
const datasetSuite = "dataset"

// runDataset sets up the work directory and pylance for the dataset suite.
func runDataset(cfg dsConfig, work string, keep, withPylance bool, python, out string, stdout, stderr io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	env := environment{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(), Go: runtime.Version(),
		Suite: datasetSuite, Reps: cfg.Reps, Seed: cfg.Seed, Started: time.Now().UTC().Format(time.RFC3339)}
	py := ""
	if withPylance {
		if py, env.Pylance, err = findPylance(python); err != nil {
			return fmt.Errorf("%w (or run with -pylance=false to measure planar alone)", err)
		}
	}
	if work == "" {
		if work, err = os.MkdirTemp("", "planarbench-dataset-"); err != nil {
			return err
		}
		if !keep {
			defer os.RemoveAll(work)
		}
	} else if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	return runDatasetSuite(cfg, env, self, py, work, stdout, stderr, out)
}

// parseInts parses a comma-separated list of positive integers.
func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, n)
	}
	return out, nil
}
