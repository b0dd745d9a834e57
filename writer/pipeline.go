package writer

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/planarlance/planar/proto/file2pb"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/structural"
)

// Pages are encoded concurrently and written in the order they were cut.
// A page is cut on the caller's goroutine (WriteBatch, Close), which hands
// its arrays to a pageJob; encoding goroutines measure, select and encode
// it; the caller's goroutine writes finished pages at the head of the queue.
// The order pages are cut in depends on the data and the budgets only, and
// a page's bytes on its arrays only, so the file is the same whatever the
// concurrency.

// pageJob is one page from cut to written.
type pageJob struct {
	pipe     *pipeline
	col      *column
	index    int   // the page's number in its column
	firstRow int64 // the page's first element (its priority)
	arrays   []arrow.Array
	enc      *pageEnc
	done     chan struct{} // closed when encoded (concurrent pipelines)

	// results
	rows int
	out  encoded
	pe   *file2pb.Encoding
	err  error
}

// run measures, selects and encodes the page.
func (j *pageJob) run() {
	f := j.col.cfg.format
	var dense structural.Dense
	var segs []structural.Segment
	ok := false
	if listShell && f.planarMetadata() && (j.col.opts.Structural == selector.StructuralAuto || listShellAsked) {
		// A page of a list of leaves over the level budget is stored
		// sparse: its levels are not built (ListShell).
		dense, segs, j.enc.layers, ok = structural.ListShell(j.arrays, j.col.path, j.col.keep)
	}
	if !ok {
		var err error
		if dense, segs, err = structural.BuildDenseKeep(j.arrays, j.col.path, j.col.keep); err != nil {
			j.err = fmt.Errorf("%v: %w", err, ErrInvalidBatch)
			return
		}
	}
	j.rows = dense.NumRows
	n := 0 // elements: rows times the structural FSL dimensions above
	for _, a := range j.arrays {
		n += a.Len() * j.col.fslScale
	}
	if n != j.rows {
		j.err = fmt.Errorf("structure of %d rows built from %d: %w", j.rows, n, ErrInvalidBatch)
		return
	}
	j.enc.arrays = j.arrays
	defer func() { j.enc.arrays, j.enc.layers = nil, nil }()
	j.out, j.err = j.enc.encode(dense, segs, f)
	if errors.Is(j.err, errNeedLevels) {
		// The shell's page did not go sparse after all: build its levels.
		j.enc.layers = nil
		if dense, segs, j.err = structural.BuildDenseKeep(j.arrays, j.col.path, j.col.keep); j.err != nil {
			j.err = fmt.Errorf("%v: %w", j.err, ErrInvalidBatch)
			return
		}
		j.out, j.err = j.enc.encode(dense, segs, f)
	}
	if j.err != nil {
		return
	}
	j.pe, j.err = pageEncoding(j.out, f)
}

// listShell enables pages built without levels (structural.ListShell);
// tests compare the files written with and without.
var listShell = true

// listShellAsked builds them under an asked structural encoding too, whose
// dense cells then need the levels (tests of the fallback).
var listShellAsked = false

// release drops the page's arrays and returns its encoder to the column.
func (j *pageJob) release() {
	for _, a := range j.arrays {
		a.Release()
	}
	j.arrays = nil
	j.out = encoded{}
	j.enc.colSpec = nil
	j.pipe.free = append(j.pipe.free, j.enc)
	j.enc = nil
}

// pipeline runs pageJobs on up to workers goroutines with at most
// inFlight pages cut and not yet written.
type pipeline struct {
	workers  int
	inFlight int
	queue    []*pageJob // cut, not written; in cut order
	free     []*pageEnc // encoders (scratch buffers) of written pages
	work     chan *pageJob
	wg       sync.WaitGroup
}

func newPipeline(workers, inFlight int) *pipeline {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if inFlight <= 0 {
		inFlight = 2 * workers
	}
	return &pipeline{workers: workers, inFlight: max(inFlight, 1)}
}

// encoder returns a page encoder for a column, reusing the scratch of one
// whose page has been written.
func (p *pipeline) encoder(spec *colSpec) *pageEnc {
	if n := len(p.free); n > 0 {
		e := p.free[n-1]
		p.free = p.free[:n-1]
		e.colSpec = spec
		return e
	}
	return &pageEnc{colSpec: spec}
}

// submit queues a cut page, first writing the oldest pages while the queue
// is full. With one worker the page is encoded and written right here.
func (p *pipeline) submit(j *pageJob, w *Writer) error {
	j.pipe = p
	for len(p.queue) >= p.inFlight {
		if err := p.writeHead(w); err != nil {
			return err
		}
	}
	if p.workers == 1 {
		// Encoded and written right away: pages reach the destination
		// as they are cut.
		j.run()
		p.queue = append(p.queue, j)
		return p.writeHead(w)
	}
	if p.work == nil {
		p.work = make(chan *pageJob, p.inFlight)
		for range p.workers {
			p.wg.Add(1)
			go p.worker()
		}
	}
	j.done = make(chan struct{})
	p.work <- j
	p.queue = append(p.queue, j)
	return nil
}

func (p *pipeline) worker() {
	defer p.wg.Done()
	for j := range p.work {
		j.run()
		close(j.done)
	}
}

// writeHead waits for the oldest page and writes it.
func (p *pipeline) writeHead(w *Writer) error {
	j := p.queue[0]
	p.queue[0] = nil
	p.queue = p.queue[1:]
	if j.done != nil {
		<-j.done
	}
	defer j.release()
	if j.err != nil {
		return fmt.Errorf("column %q: page %d: %w", j.col.leaf.Path, j.index, j.err)
	}
	if err := j.col.writePage(j, w); err != nil {
		return fmt.Errorf("column %q: page %d: %w", j.col.leaf.Path, j.index, err)
	}
	return nil
}

// drain writes every queued page.
func (p *pipeline) drain(w *Writer) error {
	for len(p.queue) > 0 {
		if err := p.writeHead(w); err != nil {
			return err
		}
	}
	return nil
}

// stop waits for the workers to finish what they hold and ends them; queued
// pages that were not written are released.
func (p *pipeline) stop() {
	if p.work != nil {
		close(p.work)
		p.wg.Wait()
		p.work = nil
	}
	for _, j := range p.queue {
		j.release()
	}
	p.queue = nil
}
