package main

import (
	"fmt"
	"io"
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
	w       io.Writer
	bar     *progressbar.ProgressBar
	s       *source
	byRows  bool
	done    bool      // finish ended the bar's line
	started time.Time // when the bar started: the summary's rate counts from here too
}

func newProgress(enabled bool, s *source) *progress {
	if !enabled {
		return nil
	}
	return newProgressTo(os.Stderr, s)
}

// newProgressTo draws on w.
func newProgressTo(w io.Writer, s *source) *progress {
	p := &progress{w: w, s: s, byRows: s.totalRows >= 0, started: time.Now()}
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionShowElapsedTimeOnFinish(),
	}
	max := s.size
	if p.byRows {
		max = s.totalRows
		opts = append(opts, progressbar.OptionShowIts(), progressbar.OptionSetItsString("rows"))
	} else {
		// Bytes per second; ShowIts would add a second, wrong rate in
		// "it/s".
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
		// (Bytes read are left out: the Parquet reader fetches ahead, and
		// showed the whole file read at 0%.)
		_ = p.bar.Set64(rows)
	} else {
		p.bar.Describe(fmt.Sprintf("%d rows", rows))
		_ = p.bar.Set64(read)
	}
}

// finish completes the bar and ends its line, so that what is printed
// next starts on a line of its own. (Not at completion: a CSV bar counts
// bytes read, which reach 100% before the last rows are converted, and
// redraws after it.)
func (p *progress) finish() {
	if p == nil {
		return
	}
	_ = p.bar.Finish()
	if !p.done {
		fmt.Fprintln(p.w)
		p.done = true
	}
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
