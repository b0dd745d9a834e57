package main

import (
	"bytes"
	"strings"
	"sync/atomic"
	"testing"
)

// TestProgressBar: a byte-counted bar (CSV) shows one rate, in bytes per
// second; a row-counted bar (Parquet) shows rows and not the bytes its
// read-ahead fetched; either ends its line, so the summary starts on its
// own.
func TestProgressBar(t *testing.T) {
	for _, c := range []struct {
		name      string
		s         *source
		has, hasn []string
	}{
		{"csv", &source{totalRows: -1, size: 10 << 20, read: new(atomic.Int64)}, []string{"B/s"}, []string{"it/s"}},
		{"parquet", &source{totalRows: 1000, size: 10 << 20, read: new(atomic.Int64)}, []string{"rows/s", "1000/1000"}, []string{"read", "it/s"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := newProgressTo(&buf, c.s)
			c.s.read.Store(10 << 20) // what a read-ahead reports at once
			p.update(500)
			c.s.read.Store(10 << 20)
			p.update(1000)
			p.finish()
			out := buf.String()
			for _, h := range c.has {
				if !strings.Contains(out, h) {
					t.Errorf("bar %q lacks %q", out, h)
				}
			}
			for _, h := range c.hasn {
				if strings.Contains(out, h) {
					t.Errorf("bar %q shows %q", out, h)
				}
			}
			if !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 {
				t.Errorf("bar %q: want one line end, at the end", out)
			}
		})
	}
}
