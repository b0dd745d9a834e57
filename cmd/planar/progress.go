package main

import (
	"fmt"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// isTerminal reports whether f is a terminal (progress is shown only then).
func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// progress draws a conversion's progress on stderr: by rows when the
// source's metadata gives the row count (Parquet), else by source bytes
// read. A nil progress draws nothing.
type progress struct {
	bar    *progressbar.ProgressBar
	s      *source
	byRows bool
}

func newProgress(enabled bool, s *source) *progress {
	if !enabled {
		return nil
	}
	p := &progress{s: s, byRows: s.totalRows >= 0}
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(os.Stderr),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(os.Stderr) }),
	}
	max := s.size
	if p.byRows {
		max = s.totalRows
		opts = append(opts, progressbar.OptionSetItsString("rows"))
	} else {
		opts = append(opts, progressbar.OptionShowBytes(true))
	}
	p.bar = progressbar.NewOptions64(max, opts...)
	return p
}

// update shows rows converted so far and the source bytes read.
func (p *progress) update(rows int64) {
	if p == nil {
		return
	}
	read := p.s.read.Load()
	if p.byRows {
		p.bar.Describe(fmt.Sprintf("%s read", humanBytes(read)))
		_ = p.bar.Set64(rows)
	} else {
		p.bar.Describe(fmt.Sprintf("%d rows", rows))
		_ = p.bar.Set64(read)
	}
}

func (p *progress) finish() {
	if p == nil {
		return
	}
	_ = p.bar.Finish()
}

// humanBytes prints a size with a binary unit.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
