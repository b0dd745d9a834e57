// Command backfill_embeddings is the job that motivates sparse cells: a table
// of ids with a 768-d float32 embedding column that is still mostly null
// (a backfill has produced vectors for a few rows only). It has two forms,
// chosen with -mode (files, dataset or both; default both).
//
// The file form streams the rows in batches and writes them twice with
// planar as lone Lance files, once with the default options and once with
// the embedding's field metadata lance-encoding:structural-encoding=fullzip,
// then reads each file back and prints its size, the cells the writer chose,
// write and read times, and the IO a take of 10 valid and of 10 null rows
// needs. Last it tries the same column with arrow-go's Parquet writer
// (pqarrow), which cannot store null rows of a fixed-size list.
//
// The dataset form is the LanceDB backfill (dataset.go): pylance's
// lance.write_dataset creates a dataset of ids and short sentences cut at
// -rows-per-file rows per file (planar's dataset.Create does, and says so,
// when no python with pylance is found), then dataset.AddColumns streams the
// embedding column into it as a new version, one new data file per fragment.
// pylance opens that version and reads back the non-null rows and a sample of
// rows, compared with what was written. It prints each version's rows,
// fragments and data files, the bytes the backfill wrote (data files,
// manifest, transaction) against a rewrite of the whole table with
// dataset.Create, and the times. -storage picks the data storage version:
// 2.2 (default, as in Lance and LanceDB: LanceDB 0.40 reads it; planar cuts
// the runs of null vectors into all-null pages that store nothing) or 2.3
// (planar's page layout with sparse cells; unstable in Lance 14, not read by
// LanceDB 0.40).
//
//	go run ./examples/backfill_embeddings [-mode both] [-rows 1000000] [-valid 0.0001] [-seed 1] [-out DIR]
//	    [-rows-per-file 250000] [-storage 2.2] [-python PATH|none]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/planarlance/planar/dataset"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/writer"
)

type config struct {
	gen batchGen
	out string // directory for the files
}

// variant is one way of writing the table.
type variant struct {
	name   string
	file   string
	schema *arrow.Schema
}

// fileResult is what one planar file measured.
type fileResult struct {
	variant
	path        string
	size        int64
	cells       []string // per column: "cell ×pages", in column order
	write       time.Duration
	inputBytes  int64
	takeValid   reader.IOStats
	takeNull    reader.IOStats
	validTaken  int
	nullTaken   int
	readAll     time.Duration
	rowsRead    int64
	nullsInFile int
}

// parquetResult is what arrow-go's Parquet writer did with the same rows.
type parquetResult struct {
	path      string
	writeErr  error  // the first error of Write or Close
	leftover  string // after a failed write: what the file on disk is
	size      int64
	rows      int64
	nullsRead int64 // null embedding rows read back
	nullsLost bool  // the file read back has other null rows than written
	readErr   error
}

type result struct {
	rows, valid int
	inputBytes  int64
	files       []fileResult
	parquet     parquetResult
}

func main() {
	rows := flag.Int("rows", 1_000_000, "rows to write")
	valid := flag.Float64("valid", 0.0001, "fraction of rows that have a vector")
	seed := flag.Uint64("seed", 1, "random seed")
	batch := flag.Int("batch", 64<<10, "rows per Arrow batch")
	out := flag.String("out", "", "directory for the files (default: a new temporary directory)")
	mode := flag.String("mode", "both", "files (lone Lance files), dataset (the LanceDB backfill) or both")
	rowsPerFile := flag.Int("rows-per-file", 250_000, "dataset form: max rows per data file, for pylance and planar alike")
	storage := flag.String("storage", dataset.StorageVersion2_2, "dataset form: data storage version, 2.2 (Lance's stable default, read by LanceDB 0.40) or 2.3 (planar's page layout with sparse cells; unstable in Lance 14, not read by LanceDB 0.40)")
	byKey := flag.Bool("by-key", true, "dataset form: give only the rows with a vector, by id (dataset.AddColumnsByKey); false: every row's embedding, nulls too, in scan order (dataset.AddColumns)")
	python := flag.String("python", "", "dataset form: python with pylance (default: $PLANAR_PYTHON, else interop/.venv/bin/python here or above; none: planar creates the dataset)")
	flag.Parse()
	if *storage != dataset.StorageVersion2_2 && *storage != dataset.StorageVersion2_3 {
		log.Fatalf("-storage %q: want 2.2 or 2.3", *storage)
	}
	if *rows <= 0 || *batch <= 0 || *rowsPerFile <= 0 || *valid < 0 || *valid > 1 {
		log.Fatal("-rows, -batch and -rows-per-file must be positive and -valid in [0, 1]")
	}
	files, ds := *mode == "files" || *mode == "both", *mode == "dataset" || *mode == "both"
	if !files && !ds {
		log.Fatalf("-mode %q: want files, dataset or both", *mode)
	}
	dir := *out
	if dir == "" {
		d, err := os.MkdirTemp("", "backfill-embeddings-")
		if err != nil {
			log.Fatal(err)
		}
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	gen := batchGen{rows: *rows, batch: *batch, valid: *valid, seed: *seed}
	if files {
		cfg := config{gen: gen, out: dir}
		res, err := run(cfg, os.Stdout)
		if err != nil {
			log.Fatal(err)
		}
		printResult(os.Stdout, cfg, res)
	}
	if ds {
		if files {
			// The file form's ReadAll left gigabytes of heap behind: hand
			// them back so the dataset form's times do not pay for them.
			debug.FreeOSMemory()
		}
		cfg := dsConfig{gen: gen, rowsPerFile: *rowsPerFile, storage: *storage, out: dir, byKey: *byKey}
		py, version, err := "", "", error(nil)
		if *python != "none" {
			py, version, err = findPython(*python)
		}
		switch {
		case *python == "none":
			cfg.noPython = "-python none"
		case err == nil:
			cfg.python = py
			fmt.Printf("pylance %s at %s\n", version, py)
		case *python != "":
			log.Fatal(err)
		default:
			cfg.noPython = err.Error()
			fmt.Printf("%v: planar creates the dataset and pylance does not check it\n", err)
		}
		res, err := runDataset(context.Background(), cfg, os.Stdout)
		if err != nil {
			log.Fatal(err)
		}
		printDataset(os.Stdout, cfg, res)
		if res.planarCheck != nil || len(res.pyProblems) > 0 {
			os.Exit(1)
		}
	}
}

func variants() []variant {
	return []variant{
		{name: "planar, default options", file: "default.lance", schema: baseSchema(nil)},
		{name: "planar, fullzip forced", file: "fullzip.lance", schema: baseSchema(map[string]string{"lance-encoding:structural-encoding": "fullzip"})},
	}
}

// run writes and measures every variant, then tries pqarrow. progress gets a
// line per step.
func run(cfg config, progress io.Writer) (*result, error) {
	res := &result{rows: cfg.gen.rows}
	var validRows []int64
	for i, v := range variants() {
		fmt.Fprintf(progress, "writing %s ...\n", v.name)
		fr, vr, err := writeVariant(cfg, v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", v.name, err)
		}
		if i == 0 {
			validRows = vr
			res.valid = len(vr)
			res.inputBytes = fr.inputBytes
		}
		if err := measureRead(&fr, validRows, cfg.gen.rows); err != nil {
			return nil, fmt.Errorf("%s: %w", v.name, err)
		}
		res.files = append(res.files, fr)
	}
	fmt.Fprintln(progress, "writing Parquet with pqarrow ...")
	res.parquet = writeParquet(cfg, validRows)
	return res, nil
}

// writeVariant streams the batches into a planar file and returns what it
// measured and the rows that have a vector.
func writeVariant(cfg config, v variant) (fileResult, []int64, error) {
	fr := fileResult{variant: v, path: filepath.Join(cfg.out, v.file)}
	w, err := writer.Create(fr.path, v.schema)
	if err != nil {
		return fr, nil, err
	}
	var validRows []int64
	for k := range cfg.gen.numBatches() {
		rec, vr := cfg.gen.gen(v.schema, k)
		validRows = append(validRows, vr...)
		fr.inputBytes += arrowBytes(rec)
		t0 := time.Now()
		err := w.WriteBatch(rec)
		fr.write += time.Since(t0)
		rec.Release()
		if err != nil {
			w.Close()
			return fr, nil, err
		}
	}
	t0 := time.Now()
	if err := w.Close(); err != nil {
		return fr, nil, err
	}
	fr.write += time.Since(t0)
	fr.cells = summariseCells(v.schema, w.Report())
	st, err := os.Stat(fr.path)
	if err != nil {
		return fr, nil, err
	}
	fr.size = st.Size()
	return fr, validRows, nil
}

// summariseCells counts the pages of each cell per column, columns in
// schema order: "embedding: dense x zipped ×367".
func summariseCells(schema *arrow.Schema, report []writer.PageReport) []string {
	counts := map[string]map[string]int{}
	var order []string
	for _, p := range report {
		if counts[p.Column] == nil {
			counts[p.Column] = map[string]int{}
			order = append(order, p.Column)
		}
		counts[p.Column][p.Cell]++
	}
	top := func(path string) int { return schema.FieldIndices(strings.SplitN(path, ".", 2)[0])[0] }
	sort.SliceStable(order, func(i, j int) bool { return top(order[i]) < top(order[j]) })
	out := make([]string, 0, len(order))
	for _, col := range order {
		cells := make([]string, 0, len(counts[col]))
		for c := range counts[col] {
			cells = append(cells, c)
		}
		sort.Strings(cells)
		parts := make([]string, len(cells))
		for i, c := range cells {
			parts[i] = fmt.Sprintf("%s ×%d", c, counts[col][c])
		}
		out = append(out, col+": "+strings.Join(parts, ", "))
	}
	return out
}

// pickValid returns up to n rows spread over the valid rows.
func pickValid(validRows []int64, n int) []int64 {
	if len(validRows) <= n {
		return slices.Clone(validRows)
	}
	out := make([]int64, n)
	for i := range out {
		out[i] = validRows[i*len(validRows)/n]
	}
	return out
}

// pickNull returns up to n null rows spread over the file: the first null
// row at or after each of n evenly spaced positions.
func pickNull(validRows []int64, rows, n int) []int64 {
	var out []int64
	for i := range n {
		r := int64(i * rows / n)
		for r < int64(rows) {
			k, found := slices.BinarySearch(validRows, r)
			if !found {
				break
			}
			// skip the run of valid rows starting at r
			for k < len(validRows) && validRows[k] == r {
				k++
				r++
			}
		}
		if r < int64(rows) && (len(out) == 0 || out[len(out)-1] != r) {
			out = append(out, r)
		}
	}
	return out
}

// measureRead opens the file, warms it up with a one-row take, then counts
// the IO of a take of 10 valid and of 10 null rows and times a ReadAll.
func measureRead(fr *fileResult, validRows []int64, rows int) error {
	f, err := reader.OpenPath(fr.path)
	if err != nil {
		return err
	}
	defer f.Close()
	warm, err := f.Take([]int64{int64(rows - 1)})
	if err != nil {
		return fmt.Errorf("warm-up take: %w", err)
	}
	warm.Release()
	take := func(idx []int64) (reader.IOStats, error) {
		f.ResetIOStats()
		if len(idx) == 0 {
			return reader.IOStats{}, nil
		}
		rec, err := f.Take(idx)
		if err != nil {
			return reader.IOStats{}, err
		}
		rec.Release()
		return f.IOStats(), nil
	}
	valid, null := pickValid(validRows, 10), pickNull(validRows, rows, 10)
	fr.validTaken, fr.nullTaken = len(valid), len(null)
	if fr.takeValid, err = take(valid); err != nil {
		return fmt.Errorf("take of valid rows: %w", err)
	}
	if fr.takeNull, err = take(null); err != nil {
		return fmt.Errorf("take of null rows: %w", err)
	}
	t0 := time.Now()
	all, err := f.ReadAll()
	fr.readAll = time.Since(t0)
	if err != nil {
		return fmt.Errorf("read all: %w", err)
	}
	fr.rowsRead = all.NumRows()
	fr.nullsInFile = all.Column(1).NullN()
	all.Release()
	return nil
}

// writeParquet streams the same batches into arrow-go's Parquet writer and,
// if that works, reads the file back and compares its null rows.
func writeParquet(cfg config, validRows []int64) parquetResult {
	pr := parquetResult{path: filepath.Join(cfg.out, "embeddings.parquet")}
	schema := baseSchema(nil)
	out, err := os.Create(pr.path)
	if err != nil {
		pr.writeErr = err
		return pr
	}
	defer out.Close()
	pw, err := pqarrow.NewFileWriter(schema, out, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		pr.writeErr = err
		return pr
	}
	for k := range cfg.gen.numBatches() {
		rec, _ := cfg.gen.gen(schema, k)
		err := pw.Write(rec)
		rec.Release()
		if err != nil {
			pr.writeErr = fmt.Errorf("Write of batch %d: %w", k, err)
			break
		}
	}
	if err := pw.Close(); err != nil && pr.writeErr == nil {
		pr.writeErr = fmt.Errorf("Close: %w", err)
	}
	if st, err := out.Stat(); err == nil {
		pr.size = st.Size()
	}
	if pr.writeErr != nil {
		// What did the failed writer leave behind?
		if pf, err := file.OpenParquetFile(pr.path, false); err != nil {
			pr.leftover = "not a readable Parquet file: " + err.Error()
		} else {
			pr.leftover = fmt.Sprintf("a Parquet file of %d rows", pf.NumRows())
			pf.Close()
		}
		return pr
	}
	pr.readErr = readParquet(&pr, validRows)
	return pr
}

func readParquet(pr *parquetResult, validRows []int64) error {
	pf, err := file.OpenParquetFile(pr.path, false)
	if err != nil {
		return err
	}
	defer pf.Close()
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 64 << 10}, memory.NewGoAllocator())
	if err != nil {
		return err
	}
	rr, err := fr.GetRecordReader(context.Background(), nil, nil)
	if err != nil {
		return err
	}
	defer rr.Release()
	valid := make(map[int64]bool, len(validRows))
	for _, r := range validRows {
		valid[r] = true
	}
	for rr.Next() {
		rec := rr.RecordBatch()
		emb := rec.Column(1)
		for i := range int(rec.NumRows()) {
			if emb.IsNull(i) {
				pr.nullsRead++
			}
			if emb.IsNull(i) == valid[pr.rows+int64(i)] {
				pr.nullsLost = true
			}
		}
		pr.rows += rec.NumRows()
	}
	if err := rr.Err(); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

func printResult(w io.Writer, cfg config, res *result) {
	fmt.Fprintf(w, "\n%d rows, %d with a vector (%.4f%%), batches of %d rows, Arrow input %s; files in %s\n\n",
		res.rows, res.valid, 100*float64(res.valid)/float64(res.rows), cfg.gen.batch, mb(res.inputBytes), cfg.out)
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "file\t size\t write\t write MB/s\t take 10 valid\t take 10 null\t ReadAll")
	for _, f := range res.files {
		fmt.Fprintf(tw, "%s\t %s\t %s\t %.0f\t %s\t %s\t %s\n", f.name, mb(f.size), secs(f.write),
			float64(f.inputBytes)/1e6/f.write.Seconds(), io10(f.takeValid, f.validTaken), io10(f.takeNull, f.nullTaken), secs(f.readAll))
	}
	p := res.parquet
	if p.writeErr != nil {
		fmt.Fprintf(tw, "pqarrow (Parquet)\t failed\t \t \t \t \t \n")
	} else {
		fmt.Fprintf(tw, "pqarrow (Parquet)\t %s\t \t \t \t \t \n", mb(p.size))
	}
	tw.Flush()
	fmt.Fprintln(w, "write: the WriteBatch calls and Close (writer.Create syncs the file); take: planar's reader, after a warm-up take")
	fmt.Fprintln(w, "\ncells (pages per cell):")
	for _, f := range res.files {
		fmt.Fprintf(w, "  %s: %s\n", f.name, strings.Join(f.cells, "; "))
	}
	fmt.Fprintln(w)
	for _, f := range res.files {
		fmt.Fprintf(w, "%s read back %d rows, %d null embeddings (%d written)\n", f.name, f.rowsRead, f.nullsInFile, res.rows-res.valid)
	}
	switch {
	case p.writeErr != nil:
		fmt.Fprintf(w, "pqarrow (arrow-go Parquet) could not write the column: %v\n  (it left %s behind, %d bytes, %s)\n", p.writeErr, p.path, p.size, p.leftover)
	case p.readErr != nil:
		fmt.Fprintf(w, "pqarrow wrote %s, but reading it back failed: %v\n", mb(p.size), p.readErr)
	case p.nullsLost:
		fmt.Fprintf(w, "pqarrow wrote %s, but the null rows did not survive: %d null embeddings read back of %d written\n", mb(p.size), p.nullsRead, res.rows-res.valid)
	default:
		fmt.Fprintf(w, "pqarrow wrote %s and the null rows survived (%d null embeddings)\n", mb(p.size), p.nullsRead)
	}
}

func mb(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

func secs(d time.Duration) string { return fmt.Sprintf("%.2f s", d.Seconds()) }

// io10 prints the IO of a take: requests and bytes.
func io10(s reader.IOStats, rows int) string {
	if rows == 0 {
		return "n/a (no such rows)"
	}
	txt := fmt.Sprintf("%d req, %s", s.Requests, mb(s.Bytes))
	if rows != 10 {
		txt += fmt.Sprintf(" (%d rows)", rows)
	}
	return txt
}
