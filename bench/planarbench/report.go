package main

import (
	"fmt"
	"io"
	"strings"
)

// printMarkdown prints one table: a block of rows per case, a column per
// writer, then the failures in full.
func printMarkdown(w io.Writer, env environment, sides []side, cases []caseResult) {
	fmt.Fprintf(w, "## planarbench: suite %s\n\n", env.Suite)
	py := ""
	if env.Pylance != "" {
		py = ", pylance " + env.Pylance
	}
	fmt.Fprintf(w, "%s/%s, %d CPUs, %s%s; %d rep(s) interleaved, throughput as median (min–max) of Arrow input MB/s.\n",
		env.GOOS, env.GOARCH, env.CPUs, env.Go, py, env.Reps)
	if env.Pylance != "" {
		fmt.Fprintf(w, "take: IO of a one-row take after a warm-up take, as requests / bytes, by planar's reader · by Lance's reader (pylance dataset over the file).\n\n")
	} else {
		fmt.Fprintf(w, "take: IO of a one-row take after a warm-up take, as requests / bytes, by planar's reader (pylance not run).\n\n")
	}

	fmt.Fprint(w, "| case | measure |")
	for _, s := range sides {
		fmt.Fprintf(w, " %s |", s.Name)
	}
	fmt.Fprint(w, "\n|---|---|")
	for range sides {
		fmt.Fprint(w, "---|")
	}
	fmt.Fprintln(w)

	var failures []string
	for _, c := range cases {
		status := "checked: ok"
		if c.Failed() {
			status = "**MISMATCH / FAILED** (below)"
			failures = append(failures, failureLines(c)...)
		}
		label := []string{
			"**`" + esc(c.Name) + "`**",
			fmt.Sprintf("%s rows, %s Arrow", thousands(int64(c.Rows)), human(c.ArrowBytes)),
			nullsLabel(c.preparedCase),
			status,
		}
		rows := []struct {
			name string
			cell func(sideResult) string
		}{
			{"file", fileCell},
			{"cells", func(s sideResult) string { return esc(compactCells(s.Cells)) }},
			{"write MB/s", func(s sideResult) string { return rate(s.WriteMBps) }},
			{"ReadAll MB/s", func(s sideResult) string { return rate(s.ReadMBps) }},
			{"take valid", func(s sideResult) string {
				return ioPair(s.PlanarTakeValid, s.LanceTakeValid, c.ValidRow, env.Pylance != "")
			}},
			{"take null", func(s sideResult) string {
				return ioPair(s.PlanarTakeNull, s.LanceTakeNull, c.NullRow, env.Pylance != "")
			}},
		}
		for i, r := range rows {
			l := ""
			if i < len(label) {
				l = label[i]
			}
			fmt.Fprintf(w, "| %s | %s |", l, r.name)
			for _, s := range c.Sides {
				if len(s.Samples) == 0 {
					fmt.Fprint(w, " failed |")
					continue
				}
				fmt.Fprintf(w, " %s |", r.cell(s))
			}
			fmt.Fprintln(w)
		}
	}
	var notes []string
	for _, c := range cases {
		for _, s := range c.Sides {
			if s.LanceIONote != "" {
				notes = append(notes, fmt.Sprintf("- %s, %s: Lance reader IO n/a: %s", c.Name, s.Side, s.LanceIONote))
			}
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(notes, "\n"))
	}
	if len(failures) > 0 {
		fmt.Fprintf(w, "\n### MISMATCH / FAILED\n\n%s\n", strings.Join(failures, "\n"))
	} else {
		fmt.Fprintf(w, "\nEvery file read back equal to its input with its writer's reader")
		if env.Pylance != "" {
			fmt.Fprint(w, ", and every planar file with pylance")
		}
		fmt.Fprintln(w, ".")
	}
}

// fileCell is the file size, or the range of sizes when the writer wrote
// different files in different repetitions.
func fileCell(s sideResult) string {
	lo, hi := s.FileBytes, s.FileBytes
	for _, m := range s.Samples {
		lo, hi = min(lo, m.FileBytes), max(hi, m.FileBytes)
	}
	if lo == hi {
		return human(lo)
	}
	return thousands(lo) + "–" + thousands(hi) + " B (varies)"
}

func failureLines(c caseResult) []string {
	var out []string
	for _, s := range c.Sides {
		for _, e := range s.Errors {
			out = append(out, fmt.Sprintf("- **%s**, %s: error: %s", c.Name, s.Side, e))
		}
		if len(s.Samples) > 0 && s.ReadBack != "ok" {
			out = append(out, fmt.Sprintf("- **%s**, %s: MISMATCH, its own reader: %s", c.Name, s.Side, s.ReadBack))
		}
		if s.PylanceReadBack != "" && s.PylanceReadBack != "ok" {
			out = append(out, fmt.Sprintf("- **%s**, %s: MISMATCH, pylance reads: %s", c.Name, s.Side, s.PylanceReadBack))
		}
	}
	return out
}

func nullsLabel(p preparedCase) string {
	s := fmt.Sprintf("%s null", thousands(int64(p.Nulls)))
	if p.Empties > 0 {
		s += fmt.Sprintf(", %s empty", thousands(int64(p.Empties)))
	}
	return s
}

// compactCells joins the per-column cell counts, without the column name
// when there is one column.
func compactCells(cells []string) string {
	if len(cells) == 1 {
		if _, after, ok := strings.Cut(cells[0], ": "); ok {
			return after
		}
	}
	return strings.Join(cells, "; ")
}

func rate(s spread) string {
	if len(s.All) == 0 {
		return "–"
	}
	if len(s.All) == 1 {
		return num(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", num(s.Median), num(s.Min), num(s.Max))
}

func num(x float64) string {
	if x >= 100 {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.1f", x)
}

func ioPair(planar, lance *ioCount, row int64, withLance bool) string {
	if row < 0 {
		return "no such row"
	}
	one := func(c *ioCount) string {
		if c == nil {
			return "n/a"
		}
		return fmt.Sprintf("%d / %s", c.Requests, human(c.Bytes))
	}
	if !withLance {
		return one(planar)
	}
	return one(planar) + " · " + one(lance)
}

func human(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2f MB", float64(n)/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

func thousands(n int64) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// esc keeps a table cell on its row.
func esc(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}
