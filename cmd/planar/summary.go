package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// printSummary prints what a conversion wrote, per top-level column: the
// pages and cells chosen, the bytes written and the ratio to the source's
// bytes of that column.
// took is the whole command, pumped the copying of the rows (what the
// progress bar measured): the rates are over pumped, as the bar's.
func printSummary(out io.Writer, s *source, dst string, res written, rows int64, schema *arrow.Schema, took, pumped time.Duration) {
	secs := max(pumped.Seconds(), 1e-9)
	fmt.Fprintf(out, "%s (%s, %s) -> %s (%s, %s): %d rows in %.2fs (%.2fs copying rows: %.0f rows/s, %s/s of source)\n",
		s.path, s.kind, humanBytes(s.size), dst, res.version, humanBytes(res.bytes), rows, took.Seconds(), secs,
		float64(rows)/secs, humanBytes(int64(float64(s.size)/secs)))
	type colSum struct {
		pages int
		cells map[string]int
		bytes int64
	}
	sums := map[string]*colSum{}
	for _, p := range res.pages {
		top, _, _ := strings.Cut(p.column, ".")
		c := sums[top]
		if c == nil {
			c = &colSum{cells: map[string]int{}}
			sums[top] = c
		}
		c.pages++
		c.cells[p.cell]++
		c.bytes += p.bytes
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "column\ttype\tpages\tcells (pages)\tbytes\tsource bytes\tratio")
	var total, srcTotal int64
	for _, f := range schema.Fields() {
		c := sums[f.Name]
		if c == nil {
			c = &colSum{}
		}
		cells := make([]string, 0, len(c.cells))
		for k := range c.cells {
			cells = append(cells, k)
		}
		slices.Sort(cells)
		for i, k := range cells {
			cells[i] = fmt.Sprintf("%s (%d)", k, c.cells[k])
		}
		src := s.colBytes[f.Name]
		total += c.bytes
		srcTotal += src
		typ := f.Type.String()
		if !f.Nullable {
			typ += " not null"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%d\t%s\n", f.Name, typ, c.pages, strings.Join(cells, ", "), c.bytes, src, ratio(c.bytes, src))
	}
	fmt.Fprintf(tw, "all columns\t\t\t\t%d\t%d\t%s\n", total, srcTotal, ratio(total, srcTotal))
	fmt.Fprintf(tw, "whole file(s)\t\t\t\t%d\t%d\t%s\n", res.bytes, s.size, ratio(res.bytes, s.size))
	tw.Flush()
	fmt.Fprintf(out, "bytes: page buffers written; source bytes: %s; ratio = written / source\n", s.colBytesHow)
}

func ratio(a, b int64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", float64(a)/float64(b))
}
