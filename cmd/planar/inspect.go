package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/planarlance/planar/dataset"
	"github.com/planarlance/planar/reader"
)

const inspectHead = `Usage: planar inspect [-v] [--json] [--version N] PATH

PATH is a Lance file or a Lance dataset directory (one holding _versions).
For a file: its version, rows and schema, then one line per column and page:
the cell (structure x values), the metadata flavour, the encoding and the
buffer sizes. For a dataset: every version (rows, fragments), then for the
latest version (or --version N) each fragment and data file with the same
page listing.

With --json every page is one JSON object on its own line (keys "column",
"page", "rows", "first_row", "cell", "metadata", "encoding", "layout" (the
encoding tree), "buffers" (sizes), "bytes"; for datasets also "version",
"fragment" and "data_file"); dataset versions are lines with "type":
"version".
`

func runInspect(args []string, out io.Writer) error {
	fs := newFlags("inspect", inspectHead, out)
	verbose := fs.Bool("v", false, "print every page's full encoding description")
	asJSON := fs.Bool("json", false, "one JSON object per page (and per dataset version)")
	version := fs.Uint64("version", 0, "dataset version to list (default the latest)")
	pos, help, err := parseFlags(fs, args, 1)
	if help || err != nil {
		return err
	}
	in := inspector{out: out, verbose: *verbose, json: *asJSON, enc: json.NewEncoder(out)}
	if isDataset(pos[0]) {
		return in.dataset(pos[0], *version)
	}
	if *version != 0 {
		return fmt.Errorf("--version applies to datasets only: %w", errUsage)
	}
	return in.file(pos[0], pageJSON{})
}

// isDataset reports whether path is a local Lance dataset directory.
func isDataset(path string) bool {
	fi, err := os.Stat(filepath.Join(path, "_versions"))
	return err == nil && fi.IsDir()
}

// openFile opens PATH as a Lance file, saying what it is when it is a
// directory that holds no dataset.
func openFile(path string) (*reader.File, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, classed{path + " is a directory but not a Lance dataset (it has no _versions/): give a Lance file or a dataset directory", reader.ErrNotLance}
	}
	return reader.OpenPath(path)
}

// classed is an error of a class (errors.Is) whose message is its own.
type classed struct {
	msg   string
	class error
}

func (e classed) Error() string { return e.msg }
func (e classed) Unwrap() error { return e.class }

type inspector struct {
	out     io.Writer
	verbose bool
	json    bool
	enc     *json.Encoder
}

// pageJSON is one line of inspect --json.
type pageJSON struct {
	Type     string   `json:"type"`
	Version  uint64   `json:"version,omitempty"`
	Fragment *uint64  `json:"fragment,omitempty"`
	DataFile string   `json:"data_file,omitempty"`
	File     string   `json:"file"`
	Column   string   `json:"column"`
	Page     int      `json:"page"`
	Rows     uint64   `json:"rows"`
	FirstRow uint64   `json:"first_row"`
	Cell     string   `json:"cell"`
	Metadata string   `json:"metadata"`
	Encoding string   `json:"encoding"`
	Layout   string   `json:"layout"`
	Buffers  []uint64 `json:"buffers"`
	Bytes    uint64   `json:"bytes"`
}

type versionJSON struct {
	Type      string    `json:"type"`
	Version   uint64    `json:"version"`
	Timestamp time.Time `json:"timestamp"`
	Rows      int64     `json:"rows"`
	Fragments int       `json:"fragments"`
	Storage   string    `json:"storage"`
	Columns   []string  `json:"columns"`
}

// file lists one Lance file's pages; base carries the dataset context of a
// data file.
func (in inspector) file(path string, base pageJSON) error {
	f, err := openFile(path)
	if err != nil {
		return err
	}
	defer f.Close()
	out := in.out
	if !in.json {
		major, minor := f.Version()
		fmt.Fprintf(out, "%s: Lance %d.%d, %d rows, %d columns\n", path, major, minor, f.NumRows(), f.NumColumns())
		if base.DataFile == "" {
			fmt.Fprintln(out, "schema:")
			for _, fd := range f.Schema().Fields() {
				null := ""
				if fd.Nullable {
					null = ", nullable"
				}
				fmt.Fprintf(out, "  %s: %s%s\n", fd.Name, fd.Type, null)
			}
			fmt.Fprintln(out)
		}
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	if !in.json {
		fmt.Fprintln(tw, "column\tpage\trows\tcell\tmetadata\tencoding\tbuffers\tbytes")
	}
	for c := 0; c < f.NumColumns(); c++ {
		for i, p := range f.Pages(c) {
			pj := base
			pj.Type, pj.File, pj.Column, pj.Page, pj.Rows, pj.FirstRow = "page", path, f.ColumnPath(c), i, p.Rows, p.FirstRow
			pj.Cell, pj.Encoding, pj.Layout, pj.Metadata = p.Cell, p.Encoding, p.Layout, "pb21"
			if p.Planar {
				pj.Metadata = "planar"
			}
			pj.Buffers = make([]uint64, len(p.Buffers))
			for k, b := range p.Buffers {
				pj.Buffers[k] = b.Size
				pj.Bytes += b.Size
			}
			if in.json {
				if err := in.enc.Encode(pj); err != nil {
					return err
				}
				continue
			}
			sizes := strings.Trim(fmt.Sprint(pj.Buffers), "[]")
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t[%s]\t%d\n", pj.Column, i, p.Rows, p.Cell, pj.Metadata, p.Encoding, sizes, pj.Bytes)
			if in.verbose {
				tw.Flush()
				fmt.Fprintf(out, "    %s\n", p.Layout)
			}
		}
	}
	return tw.Flush()
}

// dataset lists a dataset's versions, then one version's fragments and
// their data files' pages.
func (in inspector) dataset(path string, version uint64) error {
	ctx := context.Background()
	latest, err := dataset.Open(ctx, path)
	if err != nil {
		return err
	}
	vs, err := latest.Versions()
	if err != nil {
		return err
	}
	if !in.json {
		fmt.Fprintf(in.out, "%s: Lance dataset, %d versions, latest %d\n", path, len(vs), latest.Version())
		fmt.Fprintln(in.out, "schema:")
		for _, fd := range latest.Schema().Fields() {
			fmt.Fprintf(in.out, "  %s: %s\n", fd.Name, fd.Type)
		}
		fmt.Fprintln(in.out)
	}
	tw := tabwriter.NewWriter(in.out, 0, 4, 2, ' ', 0)
	if !in.json {
		fmt.Fprintln(tw, "version\ttimestamp\trows\tfragments\tstorage\tcolumns")
	}
	for _, v := range vs {
		d, err := dataset.OpenVersion(ctx, path, v.Version)
		if err != nil {
			return err
		}
		vj := versionJSON{Type: "version", Version: v.Version, Timestamp: v.Timestamp.UTC(), Rows: d.CountRows(), Fragments: d.NumFragments(), Storage: d.StorageVersion()}
		for _, f := range d.Schema().Fields() {
			vj.Columns = append(vj.Columns, f.Name)
		}
		if in.json {
			if err := in.enc.Encode(vj); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%s\n", vj.Version, vj.Timestamp.Format(time.RFC3339), vj.Rows, vj.Fragments, vj.Storage, strings.Join(vj.Columns, ","))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	d := latest
	if version != 0 {
		if d, err = dataset.OpenVersion(ctx, path, version); err != nil {
			return err
		}
	}
	for _, fr := range d.Fragments() {
		if !in.json {
			fmt.Fprintf(in.out, "\nversion %d, fragment %d: %d rows, %d data file(s)\n", d.Version(), fr.ID, fr.PhysicalRows, len(fr.Files))
		}
		for _, df := range fr.Files {
			id := fr.ID
			base := pageJSON{Version: d.Version(), Fragment: &id, DataFile: df.Path}
			if err := in.file(filepath.Join(path, "data", df.Path), base); err != nil {
				return fmt.Errorf("fragment %d: %w", fr.ID, err)
			}
		}
	}
	return nil
}
