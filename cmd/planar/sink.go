package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/planarlance/planar/dataset"
	"github.com/planarlance/planar/internal/atomicfile"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/writer"
)

// errDestination marks a destination that may not be written: an existing
// file without --overwrite, an existing dataset in create mode.
var errDestination = errors.New("destination not writable")

// sink is where converted batches go: one Lance file or a new version of a
// dataset. Nothing is visible at the destination before commit; abort
// removes everything written.
type sink interface {
	write(rec arrow.RecordBatch) error
	// commit finishes the destination and returns what was written, page by
	// page, with the total bytes.
	commit(ctx context.Context) (written, error)
	abort()
}

// written describes a finished destination.
type written struct {
	pages   []pageStat
	bytes   int64
	version string // "Lance 2.3", "dataset version 3 (storage 2.2)"
}

type pageStat struct {
	column string // leaf column path
	cell   string
	bytes  int64
}

// fileSink writes one Lance file to a temporary file beside the destination
// and moves it into place on commit.
type fileSink struct {
	dst       string
	overwrite bool
	f         *atomicfile.File
	bw        *bufio.Writer
	gate      *gateWriter
	w         *writer.Writer
}

// gateWriter refuses writes once the conversion is abandoned, so that
// closing the Lance writer then stops at its first write.
type gateWriter struct {
	w      *bufio.Writer
	closed bool
}

var errAborted = errors.New("conversion abandoned")

func (g *gateWriter) Write(p []byte) (int, error) {
	if g.closed {
		return 0, errAborted
	}
	return g.w.Write(p)
}

func newFileSink(dst string, schema *arrow.Schema, overwrite bool, opts []writer.Option) (*fileSink, error) {
	if fi, err := os.Stat(dst); err == nil {
		if fi.IsDir() {
			return nil, classed{fmt.Sprintf("destination %s is a directory (use --dataset for a Lance dataset)", dst), errDestination}
		}
		if !overwrite {
			return nil, classed{fmt.Sprintf("destination %s exists (use --overwrite to replace it)", dst), errDestination}
		}
	}
	dir := filepath.Dir(dst)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, classed{fmt.Sprintf("destination %s: the directory %s does not exist (create it first)", dst, dir), errDestination}
	}
	f, err := atomicfile.Create(dst)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the temporary file's name says nothing to the user
		}
		return nil, classed{fmt.Sprintf("destination %s: cannot write in %s: %v", dst, dir, err), errDestination}
	}
	bw := bufio.NewWriterSize(f, 4<<20)
	s := &fileSink{dst: dst, overwrite: overwrite, f: f, bw: bw, gate: &gateWriter{w: bw}}
	s.w, err = writer.New(s.gate, schema, opts...)
	if err != nil {
		f.Abort()
		if errors.Is(err, writer.ErrUnsupportedType) {
			return nil, err
		}
		return nil, fmt.Errorf("destination %s: %w", dst, err)
	}
	return s, nil
}

func (s *fileSink) write(rec arrow.RecordBatch) error { return s.w.WriteBatch(rec) }

func (s *fileSink) commit(context.Context) (written, error) {
	err := s.w.Close()
	if err == nil {
		err = s.bw.Flush()
	}
	switch {
	case err != nil:
		s.f.Abort()
	case s.overwrite:
		err = s.f.Publish()
	default:
		// A hard link: fails if a file appeared at the destination
		// meanwhile.
		err = s.f.PublishNew()
		if errors.Is(err, atomicfile.ErrExists) {
			err = classed{"appeared while converting (use --overwrite to replace it)", errDestination}
		}
	}
	if err != nil {
		return written{}, fmt.Errorf("destination %s: %w", s.dst, err)
	}
	var out written
	for _, p := range s.w.Report() {
		out.pages = append(out.pages, pageStat{column: p.Column, cell: p.Cell, bytes: int64(p.Bytes)})
	}
	if fi, err := os.Stat(s.dst); err == nil {
		out.bytes = fi.Size()
	}
	if f, err := reader.OpenPath(s.dst); err == nil {
		major, minor := f.Version()
		out.version = fmt.Sprintf("Lance file %d.%d", major, minor)
		f.Close()
	}
	return out, nil
}

func (s *fileSink) abort() {
	s.gate.closed = true
	_ = s.w.Close()
	s.f.Abort()
}

// datasetSink writes a new version of a Lance dataset.
type datasetSink struct {
	uri    string
	w      *dataset.Writer
	before int // fragments of the version appended to
	// fresh is set when the destination directory did not exist: abort
	// then removes the directories the writer made (if empty).
	fresh bool
}

func newDatasetSink(ctx context.Context, uri, mode string, schema *arrow.Schema, opts []dataset.Option) (*datasetSink, error) {
	s := &datasetSink{uri: uri}
	if !strings.Contains(uri, "://") {
		_, err := os.Stat(uri)
		s.fresh = os.IsNotExist(err)
	}
	var err error
	switch mode {
	case "create":
		s.w, err = dataset.Create(ctx, uri, schema, opts...)
		if errors.Is(err, dataset.ErrExists) {
			return nil, classed{fmt.Sprintf("destination dataset %s exists (use --mode append or --mode overwrite)", uri), errDestination}
		}
	case "append":
		var d *dataset.Dataset
		d, err = dataset.Open(ctx, uri)
		if errors.Is(err, dataset.ErrNotFound) {
			return nil, fmt.Errorf("destination dataset %s does not exist (use --mode create): %w", uri, err)
		}
		if err == nil {
			s.before = d.NumFragments()
			s.w, err = dataset.Append(ctx, uri, opts...)
		}
	case "overwrite":
		s.w, err = dataset.Overwrite(ctx, uri, schema, opts...)
	default:
		return nil, fmt.Errorf("--mode %q: want create, append or overwrite: %w", mode, errUsage)
	}
	if err != nil {
		return nil, fmt.Errorf("destination dataset %s: %w", uri, err)
	}
	return s, nil
}

func (s *datasetSink) write(rec arrow.RecordBatch) error { return s.w.Write(rec) }

func (s *datasetSink) abort() {
	_ = s.w.Abort()
	if s.fresh {
		// os.Remove leaves a directory that is not empty alone.
		for _, d := range []string{"data", "_transactions", "_versions", ""} {
			os.Remove(filepath.Join(s.uri, d))
		}
	}
}

func (s *datasetSink) commit(ctx context.Context) (written, error) {
	d, err := s.w.Commit(ctx)
	if err != nil {
		return written{}, fmt.Errorf("destination dataset %s: %w", s.uri, err)
	}
	out := written{version: fmt.Sprintf("dataset version %d (storage %s)", d.Version(), d.StorageVersion())}
	frags := d.Fragments()
	if s.before <= len(frags) {
		frags = frags[s.before:]
	}
	// The per-page summary reads the new data files' metadata back; on
	// object storage only their sizes are given.
	local, isLocal := strings.CutPrefix(s.uri, "file://")
	isLocal = isLocal || !strings.Contains(s.uri, "://")
	for _, fr := range frags {
		for _, df := range fr.Files {
			if !isLocal {
				out.bytes += int64(df.FileSizeBytes)
				continue
			}
			path := filepath.Join(local, "data", df.Path)
			pages, size, err := filePages(path)
			if err != nil {
				// The version is committed; only the summary is missing.
				fmt.Fprintf(os.Stderr, "planar: committed, but reading back %s for the summary: %v\n", path, err)
				continue
			}
			out.pages = append(out.pages, pages...)
			out.bytes += size
		}
	}
	return out, nil
}

// filePages lists a Lance file's pages and its size.
func filePages(path string) ([]pageStat, int64, error) {
	f, err := reader.OpenPath(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var out []pageStat
	for c := 0; c < f.NumColumns(); c++ {
		for _, p := range f.Pages(c) {
			var n uint64
			for _, b := range p.Buffers {
				n += b.Size
			}
			out = append(out, pageStat{column: f.ColumnPath(c), cell: p.Cell, bytes: int64(n)})
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return out, 0, err
	}
	return out, fi.Size(), nil
}
