package main

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
)

// appendFloor is the least wall time an append could take on this machine:
// the CPU the writer and the server used, spread over every core, or the
// stored bytes at the link's rate (mbps > 0) if that takes longer.
func appendFloor(m dsMeasurement, mbps float64, cpus int) float64 {
	f := (m.CPUSec + m.ServerCPUSec) / float64(max(cpus, 1))
	if mbps > 0 {
		f = max(f, float64(total(m.Bytes))/(mbps*1e6))
	}
	return f
}

// printDatasetMarkdown prints the dataset suite's tables, a row per store
// (and per writer where two are compared), then the failures in full.
func printDatasetMarkdown(w io.Writer, res *dsResults) {
	env, cfg := res.Environment, res.Config
	fmt.Fprintf(w, "## planarbench: suite dataset\n\n")
	py := ""
	if env.Pylance != "" {
		py = ", pylance " + env.Pylance
	}
	fmt.Fprintf(w, "%s/%s, %d CPUs, %s%s; %d rep(s) interleaved across stores, each measurement in its own process; "+
		"numbers as median (min–max) over the reps. S3 is a local SeaweedFS server on loopback.\n",
		env.GOOS, env.GOARCH, env.CPUs, env.Go, py, cfg.Reps)
	cols := "id int64, text string 20–40 B, score float64"
	if cfg.Embedding {
		cols += fmt.Sprintf(", embedding fsl<f32,%d>", dsEmbeddingDim)
	}
	fmt.Fprintf(w, "Table: %s; %s rows are %s of Arrow input.\n\n", cols, thousands(cfg.Rows), human(res.ArrowBytes))

	fmt.Fprintf(w, "### 1. Append throughput: Create + Write + Commit of %s rows\n\n", thousands(cfg.Rows))
	fmt.Fprintln(w, "| store | MB/s (Arrow input) | rows/s | wall s | CPU s | server CPU s | floor s | wall ÷ floor | max RSS | stored |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, s := range res.Stores {
		ms := s.Append
		stored := "–"
		if b := firstBytes(ms); b != nil {
			stored = human(total(b))
		}
		server := "none"
		if s.Store != "local" {
			server = secs(over(ms, func(m dsMeasurement) float64 { return m.ServerCPUSec }))
		}
		floor := func(m dsMeasurement) float64 { return appendFloor(m, s.LinkMBps, env.CPUs) }
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", s.Store,
			rate(over(ms, func(m dsMeasurement) float64 { return float64(m.ArrowBytes) / 1e6 / m.WallSec })),
			rateSI(over(ms, func(m dsMeasurement) float64 { return float64(m.Rows) / m.WallSec })),
			secs(over(ms, func(m dsMeasurement) float64 { return m.WallSec })),
			secs(over(ms, func(m dsMeasurement) float64 { return m.CPUSec })),
			server, secs(over(ms, floor)),
			rate(over(ms, func(m dsMeasurement) float64 { return m.WallSec / floor(m) })),
			rss(ms), stored)
	}
	fmt.Fprintln(w, "\nwall: Create to Commit returned; CPU: user+system time of the process over the same span; "+
		"server CPU: the S3 server's, over the whole job; floor: the least wall the work allows on this machine, "+
		"(CPU + server CPU) ÷ cores, or the stored bytes at the link's rate when that is longer; "+
		"max RSS: the process's peak, which counts the memory-mapped Arrow input where touched (up to its size); "+
		"stored: the dataset's bytes (data files, manifest, transaction).")
	if cfg.LinkMBps > 0 {
		fmt.Fprintf(w, "The link carries %g MB/s from client to server and delays each byte %g ms each way.\n", cfg.LinkMBps, cfg.LinkDelayMS)
	}

	fmt.Fprintf(w, "\n### 2. Commit latency: %d appends of %d rows in sequence (open → write → commit, ms)\n\n", cfg.Commits, cfg.BatchRows)
	fmt.Fprintln(w, "| store | writer | p50 ms | p90 ms | max ms |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, s := range res.Stores {
		if s.LinkMBps > 0 {
			continue // appends only
		}
		for _, x := range []struct {
			who string
			ms  []dsMeasurement
		}{{"planar", s.PlanarCommits}, {"pylance", s.PylanceCommits}} {
			if x.who == "pylance" && env.Pylance == "" {
				continue
			}
			p50 := over(x.ms, func(m dsMeasurement) float64 { return percentile(m.LatMS, 0.5) })
			p90 := over(x.ms, func(m dsMeasurement) float64 { return percentile(m.LatMS, 0.9) })
			mx := over(x.ms, func(m dsMeasurement) float64 { return percentile(m.LatMS, 1) })
			worst := "–"
			if len(mx.All) > 0 {
				worst = num(mx.Max)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", s.Store, x.who, rate(p50), rate(p90), worst)
		}
	}
	fmt.Fprint(w, "\nplanar: Append (reads the latest version) + Write + Commit, timed in Go; on local disk it fsyncs "+
		"each file it writes and its directory.")
	if env.Pylance != "" {
		fmt.Fprint(w, " pylance: one `lance.write_dataset(..., mode=\"append\")` per commit, timed inside python.")
	}
	fmt.Fprintln(w)

	fmt.Fprintf(w, "\n### 3. Concurrent writers: N processes, %d appends of %d rows each, to one dataset\n\n", cfg.PerWriter, cfg.BatchRows)
	fmt.Fprintln(w, "| store | writers | commits/s | retries per commit | failures | rows check |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, s := range res.Stores {
		if s.LinkMBps > 0 {
			continue // appends only
		}
		for _, c := range s.Concurrent {
			var rates, retries []float64
			fails, check := 0, "ok"
			for _, run := range c.Runs {
				if run.WallSec > 0 {
					rates = append(rates, float64(run.Commits)/run.WallSec)
				}
				if run.Commits > 0 {
					retries = append(retries, float64(run.Retries)/float64(run.Commits))
				}
				fails += len(run.Failures)
				if run.Check != "ok" && check == "ok" {
					check = "**" + esc(run.Check) + "**"
				}
			}
			if len(c.Runs) == 0 {
				check = "not run"
			}
			fmt.Fprintf(w, "| %s | %d | %s | %s | %d | %s |\n", s.Store, c.Writers, rate(spreadOf(rates)), ratio(spreadOf(retries)), fails, check)
		}
	}
	fmt.Fprintln(w, "\ncommits/s: all commits over the time from the first writer's start to the last one's end; "+
		"a retry is a commit rebased over a version another writer took (the committed version's jump); "+
		"rows check: every id there exactly once.")

	fmt.Fprintf(w, "\n### 4. AddColumns (a float64 column) against rewriting the table with it, %s rows\n\n", thousands(cfg.Rows))
	fmt.Fprintln(w, "| store | AddColumns: bytes written (data + manifest + transaction) | AddColumns s | rewrite: bytes written | rewrite s | bytes ratio |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, s := range res.Stores {
		if s.LinkMBps > 0 {
			continue // appends only
		}
		ab, rb := firstBytes(s.AddCol), firstBytes(s.Rewrite)
		r := "–"
		if total(ab) > 0 {
			r = fmt.Sprintf("%.1f×", float64(total(rb))/float64(total(ab)))
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", s.Store, bytesBreakdown(ab),
			secs(over(s.AddCol, func(m dsMeasurement) float64 { return m.WallSec })), bytesBreakdown(rb),
			secs(over(s.Rewrite, func(m dsMeasurement) float64 { return m.WallSec })), r)
	}

	fmt.Fprintf(w, "\n### 5. Memory while streaming %s rows into a new dataset (one run)\n\n", thousands(cfg.MemRows))
	fmt.Fprintln(w, "| store | Arrow input | wall s | MB/s | peak RSS | Go heap peak |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, s := range res.Stores {
		if s.LinkMBps > 0 {
			continue // appends only
		}
		if len(s.Memory) == 0 {
			fmt.Fprintf(w, "| %s | failed | | | | |\n", s.Store)
			continue
		}
		m := s.Memory[0]
		fmt.Fprintf(w, "| %s | %s | %.1f | %s | %s | %s |\n", s.Store, human(m.ArrowBytes), m.WallSec,
			num(float64(m.ArrowBytes)/1e6/m.WallSec), human(m.MaxRSSKB<<10), human(m.HeapPeak))
	}
	fmt.Fprintln(w, "\nOn S3 a data file streams as a multipart upload: parts of 8 MiB, up to 4 in flight while the next fills (one PUT for a file under 8 MiB); "+
		"at a file cut the next file is encoded while the last parts of the one cut are sent.")

	if res.Failed() {
		fmt.Fprintln(w, "\n### FAILED")
		fmt.Fprintln(w)
		for _, e := range res.Errors {
			fmt.Fprintf(w, "- %s\n", e)
		}
		for _, s := range res.Stores {
			if s.LinkMBps > 0 {
				continue // appends only
			}
			for _, c := range s.Concurrent {
				for i, run := range c.Runs {
					for _, f := range run.Failures {
						fmt.Fprintf(w, "- %s, %d writers, rep %d: %s\n", s.Store, c.Writers, i+1, f)
					}
					if run.Check != "ok" {
						fmt.Fprintf(w, "- %s, %d writers, rep %d: rows check: %s\n", s.Store, c.Writers, i+1, run.Check)
					}
				}
			}
		}
	}
}

// over is the spread of f over the measurements.
func over(ms []dsMeasurement, f func(dsMeasurement) float64) spread {
	xs := make([]float64, 0, len(ms))
	for _, m := range ms {
		if x := f(m); !math.IsNaN(x) && !math.IsInf(x, 0) {
			xs = append(xs, x)
		}
	}
	return spreadOf(xs)
}

// percentile is the nearest-rank q-quantile of xs (q = 1: the maximum).
func percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

func secs(s spread) string {
	if len(s.All) == 0 {
		return "–"
	}
	f := func(x float64) string { return fmt.Sprintf("%.2f", x) }
	if len(s.All) == 1 {
		return f(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", f(s.Median), f(s.Min), f(s.Max))
}

func ratio(s spread) string {
	if len(s.All) == 0 {
		return "–"
	}
	f := func(x float64) string { return fmt.Sprintf("%.2f", x) }
	if len(s.All) == 1 {
		return f(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", f(s.Median), f(s.Min), f(s.Max))
}

// rateSI prints rows/s with a k or M suffix.
func rateSI(s spread) string {
	if len(s.All) == 0 {
		return "–"
	}
	f := func(x float64) string {
		switch {
		case x >= 1e6:
			return fmt.Sprintf("%.2fM", x/1e6)
		case x >= 1e3:
			return fmt.Sprintf("%.1fk", x/1e3)
		}
		return fmt.Sprintf("%.0f", x)
	}
	if len(s.All) == 1 {
		return f(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", f(s.Median), f(s.Min), f(s.Max))
}

// rss is the largest peak resident memory of the runs.
func rss(ms []dsMeasurement) string {
	var kb int64
	for _, m := range ms {
		kb = max(kb, m.MaxRSSKB)
	}
	if kb == 0 {
		return "–"
	}
	return human(kb << 10)
}

// firstBytes is the first run's stored bytes (they do not vary between runs
// but for the object names' lengths).
func firstBytes(ms []dsMeasurement) map[string]int64 {
	if len(ms) == 0 {
		return nil
	}
	return ms[0].Bytes
}

func total(b map[string]int64) int64 {
	var n int64
	for _, v := range b {
		n += v
	}
	return n
}

func bytesBreakdown(b map[string]int64) string {
	if b == nil {
		return "–"
	}
	parts := []string{human(b["data"]), human(b["manifest"]), human(b["transaction"])}
	s := fmt.Sprintf("%s (%s)", human(total(b)), strings.Join(parts, " + "))
	if b["other"] > 0 {
		s += fmt.Sprintf(", %s other", human(b["other"]))
	}
	return s
}
