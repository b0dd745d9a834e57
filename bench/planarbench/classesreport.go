package main

import (
	"fmt"
	"io"
	"strings"
)

// printClassesMarkdown prints the classes suite's three tables (write,
// read and take, size), then the notes and failures.
func printClassesMarkdown(w io.Writer, res *classResults) {
	env := res.Environment
	fmt.Fprintf(w, "## planarbench: suite classes (scale %g)\n\n", res.Scale)
	py := ", pylance not run"
	if env.Pylance != "" {
		py = ", pylance " + env.Pylance
	}
	fmt.Fprintf(w, "%s/%s, %d CPUs, %s%s; %d rep(s) interleaved, each in its own process; %.0f s in all. "+
		"Numbers are the median (min–max) over the reps.\n", env.GOOS, env.GOARCH, env.CPUs, env.Go, py, env.Reps, res.Seconds)
	fmt.Fprintf(w, "planar writes format 2.3 (cost on all cores, lance, and cost on one core: GOMAXPROCS 1 for its write, ReadAll and takes); "+
		"pylance writes 2.3 with LanceFileWriter; parquet is arrow-go's pqarrow, zstd at its default level, "+
		"one row group per %s-row input batch. Each side reads with its own reader.\n\n", thousands(batchRows))

	idx := classSideIndex(res.Sides)

	fmt.Fprintln(w, "### Write")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Cell: Arrow input MB/s over the wall time of the write alone · user+sys CPU seconds of the writing process during the write · CPU÷wall. "+
		"Ratios are of the medians' MB/s (above 1: planar cost is faster). raw copy: the raw limit, Arrow MB/s of a process copying the batches' "+
		"Arrow buffers into fresh memory and writing them to a file as the planar sides write theirs (the goal for uncompressible fixed-width "+
		"classes is cost÷raw ≥ 0.5).")
	fmt.Fprintln(w)
	header(w, "| class | rows, Arrow |", res.Sides, " cost÷pylance | cost÷parquet | cost all cores÷1 core | raw copy | cost÷raw |")
	for _, c := range res.Cases {
		fmt.Fprintf(w, "| %s | %s rows, %s |", caseLabel(c), thousands(int64(c.Rows)), human(c.ArrowBytes))
		for _, s := range c.Sides {
			fmt.Fprintf(w, " %s |", sideCell(s, writeCell))
		}
		mb := func(s classSideResult) float64 { return s.WriteMBps.Median }
		raw, toRaw := "–", "–"
		if len(c.RawMBps.All) > 0 {
			raw = rate(c.RawMBps)
			if c.has(idx.cost) {
				toRaw = fmt.Sprintf("%.2f", c.Sides[idx.cost].WriteMBps.Median/c.RawMBps.Median)
			}
		}
		fmt.Fprintf(w, " %s | %s | %s | %s | %s |\n", c.ratio(idx.cost, idx.pylance, mb), c.ratio(idx.cost, idx.parquet, mb), c.ratio(idx.cost, idx.oneCore, mb), raw, toRaw)
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "### ReadAll and take")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "ReadAll: Arrow MB/s of opening the file and reading every row. take: milliseconds of one take of random rows (sorted, the same rows for every side) "+
		"on a freshly opened file: planar reader.File.Take, pylance LanceFileReader.take_rows, parquet reading the row groups that hold the rows "+
		"(pqarrow ReadRowGroups) then arrow's compute.Take. After the wall time: the median user+sys CPU milliseconds of the process (steadier than the wall time on a shared machine). Ratios: ReadAll of MB/s (above 1: planar cost faster), takes of times (below 1: planar cost faster).")
	fmt.Fprintln(w)
	header(w, "| class | measure |", res.Sides, " cost÷pylance | cost÷parquet | cost all cores÷1 core |")
	for _, c := range res.Cases {
		rows := []struct {
			name string
			cell func(classSideResult) string
			val  func(classSideResult) float64
		}{
			{"ReadAll MB/s", func(s classSideResult) string { return rate(s.ReadMBps) + " · " + cpuMillis(s.ReadCPU) },
				func(s classSideResult) float64 { return s.ReadMBps.Median }},
			{fmt.Sprintf("take %s ms", countLabel(c.Take100)), func(s classSideResult) string { return millis(s.Take100Sec) + " · " + cpuMillis(s.Take100CPU) },
				func(s classSideResult) float64 { return s.Take100Sec.Median }},
			{fmt.Sprintf("take %s ms", countLabel(c.Take10k)), func(s classSideResult) string { return millis(s.Take10kSec) + " · " + cpuMillis(s.Take10kCPU) },
				func(s classSideResult) float64 { return s.Take10kSec.Median }},
		}
		for i, r := range rows {
			label := ""
			if i == 0 {
				label = caseLabel(c)
			}
			fmt.Fprintf(w, "| %s | %s |", label, r.name)
			for _, s := range c.Sides {
				fmt.Fprintf(w, " %s |", sideCell(s, r.cell))
			}
			scale := "–"
			if i == 0 { // (the scaling goal is of ReadAll: a take is too short to split)
				scale = c.ratio(idx.cost, idx.oneCore, r.val)
			}
			fmt.Fprintf(w, " %s | %s | %s |\n", c.ratio(idx.cost, idx.pylance, r.val), c.ratio(idx.cost, idx.parquet, r.val), scale)
		}
	}

	fmt.Fprintln(w)
	fmt.Fprintln(w, "### Size")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "File bytes (pylance's vary a little between runs: the range is shown). Ratios below 1: planar cost's file is smaller.")
	fmt.Fprintln(w)
	header(w, "| class | Arrow |", res.Sides, " cost÷pylance | cost÷parquet | cost÷min(pylance, parquet) |")
	for _, c := range res.Cases {
		fmt.Fprintf(w, "| %s | %s |", caseLabel(c), human(c.ArrowBytes))
		for _, s := range c.Sides {
			fmt.Fprintf(w, " %s |", sideCell(s, classFileCell))
		}
		size := func(s classSideResult) float64 { return float64(s.FileBytes) }
		best := "–"
		if lo := c.minBytes(idx.pylance, idx.parquet); lo > 0 && c.has(idx.cost) {
			best = fmt.Sprintf("%.2f", float64(c.Sides[idx.cost].FileBytes)/float64(lo))
		}
		fmt.Fprintf(w, " %s | %s | %s |\n", c.ratio(idx.cost, idx.pylance, size), c.ratio(idx.cost, idx.parquet, size), best)
	}

	var notes, failures []string
	for _, c := range res.Cases {
		if c.RawError != "" {
			failures = append(failures, fmt.Sprintf("- **%s**, raw copy: error: %s", c.Name, c.RawError))
		}
		for _, s := range c.Sides {
			for _, n := range s.Notes {
				notes = append(notes, fmt.Sprintf("- %s, %s: %s", c.Name, s.Side, n))
			}
		}
		if c.Failed() {
			failures = append(failures, classFailureLines(c)...)
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\nNot counted as failures (limits of pqarrow, not of planar):\n\n%s\n", strings.Join(notes, "\n"))
	}
	if len(failures) > 0 {
		fmt.Fprintf(w, "\n### MISMATCH / FAILED\n\n%s\n", strings.Join(failures, "\n"))
		return
	}
	fmt.Fprint(w, "\nEvery planar and pylance file read back (ReadAll and both takes) equal to its input with its writer's reader")
	if env.Pylance != "" {
		fmt.Fprint(w, ", and every planar file with pylance")
	}
	fmt.Fprintln(w, ".")
}

// classSideIdx locates the sides the ratios compare (-1: not run).
type classSideIdx struct{ cost, oneCore, pylance, parquet int }

func classSideIndex(sides []side) classSideIdx {
	idx := classSideIdx{-1, -1, -1, -1}
	for i, s := range sides {
		switch {
		case s.Kind == "planar" && s.Policy == "cost" && s.Concurrency == 0:
			idx.cost = i
		case s.Kind == "planar" && s.Policy == "cost" && s.Concurrency == 1:
			idx.oneCore = i
		case s.Kind == "pylance":
			idx.pylance = i
		case s.Kind == "parquet":
			idx.parquet = i
		}
	}
	return idx
}

// has reports whether side i was run and measured.
func (c classResult) has(i int) bool {
	return i >= 0 && i < len(c.Sides) && len(c.Sides[i].Samples) > 0
}

// ratio is f of side a over f of side b, or "–".
func (c classResult) ratio(a, b int, f func(classSideResult) float64) string {
	if !c.has(a) || !c.has(b) {
		return "–"
	}
	x, y := f(c.Sides[a]), f(c.Sides[b])
	if y <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", x/y)
}

// minBytes is the smaller file of the measured sides a and b (0: neither).
func (c classResult) minBytes(a, b int) int64 {
	var lo int64
	for _, i := range []int{a, b} {
		if c.has(i) && (lo == 0 || c.Sides[i].FileBytes < lo) {
			lo = c.Sides[i].FileBytes
		}
	}
	return lo
}

func header(w io.Writer, first string, sides []side, last string) {
	fmt.Fprint(w, first)
	cols := strings.Count(first, "|") - 1 + strings.Count(last, "|")
	for _, s := range sides {
		fmt.Fprintf(w, " %s |", s.Name)
	}
	fmt.Fprintln(w, last)
	fmt.Fprint(w, "|")
	for range cols + len(sides) {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)
}

func caseLabel(c classResult) string {
	l := "`" + esc(c.Name) + "`"
	if c.Failed() {
		l += " **FAILED**"
	}
	return l
}

func countLabel(n int) string {
	if n == takeLarge {
		return "10k"
	}
	return thousands(int64(n))
}

// sideCell is f of a measured side, "n/a" for a Parquet side that could
// not write or read the class, "failed" otherwise.
func sideCell(s classSideResult, f func(classSideResult) string) string {
	switch {
	case len(s.Samples) > 0:
		return f(s)
	case s.Kind == "parquet":
		return "n/a"
	}
	return "failed"
}

func writeCell(s classSideResult) string {
	cpu := fmt.Sprintf("%.2f s", s.WriteCPU.Median)
	if s.WriteCPU.Median < 0.1 {
		cpu = fmt.Sprintf("%.1f ms", s.WriteCPU.Median*1e3)
	}
	return fmt.Sprintf("%s · %s · %.1f×", rate(s.WriteMBps), cpu, s.CPUPerWall.Median)
}

func classFileCell(s classSideResult) string {
	lo, hi := s.FileBytes, s.FileBytes
	for _, m := range s.Samples {
		lo, hi = min(lo, m.FileBytes), max(hi, m.FileBytes)
	}
	if lo == hi {
		return human(lo)
	}
	return human(lo) + "–" + human(hi)
}

// ms formats seconds as milliseconds.
func ms(x float64) string {
	x *= 1e3
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 1:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

// cpuMillis is the median of a CPU time spread, in milliseconds.
func cpuMillis(s spread) string {
	if len(s.All) == 0 {
		return "–"
	}
	return "CPU " + ms(s.Median)
}

// millis is a time spread in milliseconds.
func millis(s spread) string {
	if len(s.All) == 0 {
		return "–"
	}
	if len(s.All) == 1 {
		return ms(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", ms(s.Median), ms(s.Min), ms(s.Max))
}

func classFailureLines(c classResult) []string {
	var out []string
	for _, s := range c.Sides {
		for _, e := range s.Errors {
			out = append(out, fmt.Sprintf("- **%s**, %s: error: %s", c.Name, s.Side, e))
		}
		if s.Kind == "parquet" || len(s.Samples) == 0 {
			continue
		}
		if s.ReadBack != "ok" {
			out = append(out, fmt.Sprintf("- **%s**, %s: MISMATCH, its own reader's ReadAll: %s", c.Name, s.Side, s.ReadBack))
		}
		if s.TakeBack != "ok" {
			out = append(out, fmt.Sprintf("- **%s**, %s: MISMATCH, its own reader's take: %s", c.Name, s.Side, s.TakeBack))
		}
		if s.PylanceBack != "" && s.PylanceBack != "ok" {
			out = append(out, fmt.Sprintf("- **%s**, %s: MISMATCH, pylance reads: %s", c.Name, s.Side, s.PylanceBack))
		}
	}
	return out
}
