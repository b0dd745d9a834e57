package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/planarlance/planar/dataset"
	"github.com/planarlance/planar/relayout"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/writer"
)

const convertHead = `Usage: planar convert [flags] SRC DST

Converts SRC (Parquet, Arrow IPC file or stream, or CSV; told apart by their
magic bytes, CSV by the .csv/.tsv extension or --from csv) to a Lance file at
DST, or with --dataset to a Lance dataset directory. Rows are streamed in
batches; nothing appears at DST unless the whole conversion succeeds (a file
is written beside DST and renamed into place, a dataset version is committed
at the end). On a terminal a progress bar goes to stderr; at the end a
summary per column is printed: the cells chosen, bytes written and the ratio
to the source's bytes.

Examples:
  planar convert data.parquet data.lance
  planar convert --format 2.2 --meta 'emb:lance-encoding:structural-encoding=fullzip' in.arrow out.lance
  planar convert --schema 'id:int64,name:string' rows.csv rows.lance
  planar convert --dataset --mode append more.parquet ./table.lance
  planar convert --format 2.2 [--reencode] in.lance out.lance

A Lance file as SRC is re-expressed in the version --format names without
touching its data: every page that has a counterpart in that version keeps
its buffers byte for byte; only column metadata, offset tables and footer
are rewritten. A page with no counterpart (2.3's sparse cells and indexed
values going to 2.2, for one) fails the conversion with its column and page
named, unless --reencode re-encodes just those pages.
`

type convertConfig struct {
	dataset   bool
	mode      string
	overwrite bool
	format    string
	policy    string
	pageBytes string
	meta      multiFlag
	from      string
	batchRows int64
	maxRows   int64
	quiet     bool
	reencode  bool // Lance sources: re-encode pages without a counterpart
	progress  bool // set by runConvert: stderr is a terminal and not -q
	csv       csvOptions
}

func runConvert(args []string, out io.Writer) error {
	var cfg convertConfig
	fs := newFlags("convert", convertHead, out)
	fs.BoolVar(&cfg.dataset, "dataset", false, "write a Lance dataset (directory) instead of one Lance file")
	fs.StringVar(&cfg.mode, "mode", "create", "with --dataset: create, append or overwrite")
	fs.BoolVar(&cfg.overwrite, "overwrite", false, "replace an existing destination file")
	fs.StringVar(&cfg.format, "format", "", "Lance format: 2.2 or 2.3 (default 2.2, as in Lance and LanceDB; 2.3 is unstable in Lance 14 and LanceDB 0.40 cannot read it)")
	fs.StringVar(&cfg.policy, "policy", "cost", "encoding choice: cost (planar's cost model) or lance (Lance's own rules)")
	fs.StringVar(&cfg.pageBytes, "page-bytes", "", "page budget per column, e.g. 8MiB (default the writer's, 8MiB)")
	fs.Var(&cfg.meta, "meta", "field metadata `col:key=value` of a top-level column (repeatable), e.g. emb:lance-encoding:compression=zstd; a leaf path such as point.x is passed as a writer column option")
	fs.StringVar(&cfg.from, "from", "", "source format: parquet, arrow (file or stream) or csv (default: detect)")
	fs.Int64Var(&cfg.batchRows, "batch-rows", 64<<10, "rows per batch read from the source")
	fs.Int64Var(&cfg.maxRows, "max-rows-per-file", 0, "with --dataset: rows per data file (default Lance's, 1Mi)")
	fs.BoolVar(&cfg.quiet, "q", false, "no progress bar and no summary")
	fs.BoolVar(&cfg.reencode, "reencode", false, "Lance source: re-encode the pages that have no counterpart in --format (sparse cells, the indexed codec, ...) instead of failing")
	fs.StringVar(&cfg.csv.schema, "schema", "", "CSV column types `name:type,...` ("+csvTypeNames()+", timestamp[s|ms|us|ns]; a type may end in \"not null\"); default: inferred")
	noHeader := fs.Bool("no-header", false, "CSV: the first line is data, columns are named c0, c1, ...")
	delim := fs.String("delimiter", ",", "CSV field delimiter (one character; \\t for tab)")
	var nulls []string
	fs.Func("null", "CSV: a value read as null in non-string columns; repeat for more (default: pyarrow's: \"\", NA, N/A, NULL, null, NaN, nan, #N/A and the like)", func(v string) error {
		nulls = append(nulls, v)
		return nil
	})
	fs.IntVar(&cfg.csv.inferRows, "infer-rows", 1000, "CSV: rows read to infer column types")
	pos, help, err := parseFlags(fs, args, 2)
	if help || err != nil {
		return err
	}
	if cfg.csv.schema != "" {
		if _, err := parseCSVSchema(cfg.csv.schema); err != nil {
			return err
		}
	}
	cfg.csv.header = !*noHeader
	cfg.csv.nulls = nulls
	if nulls == nil {
		cfg.csv.nulls = pyarrowNulls
	}
	d := strings.ReplaceAll(*delim, `\t`, "\t")
	if len([]rune(d)) != 1 {
		return fmt.Errorf("--delimiter %q: want one character: %w", *delim, errUsage)
	}
	cfg.csv.delim = []rune(d)[0]
	if cfg.batchRows <= 0 || cfg.csv.inferRows <= 0 || cfg.maxRows < 0 {
		return fmt.Errorf("--batch-rows, --infer-rows and --max-rows-per-file must be positive: %w", errUsage)
	}
	cfg.progress = !cfg.quiet && isTerminal(os.Stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return convert(ctx, pos[0], pos[1], cfg, out)
}

// convert streams src into dst. On any error the destination is left as it
// was.
func convert(ctx context.Context, src, dst string, cfg convertConfig, out io.Writer) error {
	if cfg.mode != "create" && cfg.mode != "append" && cfg.mode != "overwrite" {
		return fmt.Errorf("--mode %q: want create, append or overwrite: %w", cfg.mode, errUsage)
	}
	if !cfg.dataset && cfg.mode != "create" {
		return fmt.Errorf("--mode applies to --dataset only: %w", errUsage)
	}
	if cfg.dataset && cfg.overwrite {
		return fmt.Errorf("--overwrite applies to a file; for a dataset use --mode overwrite: %w", errUsage)
	}
	wopts, dopts, err := writeOptions(cfg)
	if err != nil {
		return err
	}
	kind, err := sourceKind(src, cfg.from)
	if err != nil {
		return err
	}
	if kind == kindLance || kind == kindDataset {
		return convertLance(ctx, src, kind, dst, cfg, out)
	}
	start := time.Now()
	s, err := openSource(ctx, src, kind, sourceOptions{batchRows: cfg.batchRows, csv: cfg.csv})
	if err != nil {
		return err
	}
	defer s.Close()
	schema, _ := noFieldIDs(s.schema)
	schema, err = withFieldMetadata(schema, cfg.meta)
	if err != nil {
		return err
	}
	var sk sink
	if cfg.dataset {
		sk, err = newDatasetSink(ctx, dst, cfg.mode, schema, dopts)
	} else {
		sk, err = newFileSink(dst, schema, cfg.overwrite, wopts)
	}
	if errors.Is(err, writer.ErrUnsupportedType) {
		return fmt.Errorf("convert %s: Lance cannot store this source's schema: %w", src, err)
	}
	if err != nil {
		return fmt.Errorf("convert %s: %w", src, err)
	}
	prog := newProgress(cfg.progress, s)
	pumpStart := time.Now()
	rows, err := pump(ctx, s, schema, sk, prog)
	pumped := time.Since(pumpStart)
	prog.finish()
	if err != nil {
		sk.abort()
		return fmt.Errorf("convert %s to %s: %w (nothing was written)", src, dst, err)
	}
	res, err := sk.commit(ctx)
	if err != nil {
		return fmt.Errorf("convert %s: %w", src, err)
	}
	if !cfg.quiet {
		printSummary(out, s, dst, res, rows, schema, time.Since(start), pumped)
	}
	return nil
}

// pump copies every batch of s into sk under schema (the source's with the
// --meta metadata).
func pump(ctx context.Context, s *source, schema *arrow.Schema, sk sink, prog *progress) (int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return s.rows, fmt.Errorf("interrupted after row %d: %w", s.rows, err)
		}
		rec, err := s.next()
		if err != nil {
			return s.rows, err
		}
		if rec == nil {
			return s.rows, nil
		}
		n := rec.NumRows()
		cols := make([]arrow.Array, rec.NumCols())
		for c, col := range rec.Columns() {
			if dt := schema.Field(c).Type; !arrow.TypeEqual(col.DataType(), dt, arrow.CheckMetadata()) {
				d := relabel(col.Data(), dt)
				cols[c] = array.MakeFromData(d)
				d.Release()
			} else {
				col.Retain()
				cols[c] = col
			}
		}
		rec = array.NewRecordBatch(schema, cols, n)
		for _, c := range cols {
			c.Release()
		}
		err = sk.write(rec)
		rec.Release()
		if err != nil {
			return s.rows, fmt.Errorf("source rows %d to %d: %w", s.rows-n+1, s.rows, err)
		}
		prog.update(s.rows)
	}
}

// sourceKind maps --from to a kind, or detects it.
func sourceKind(src, from string) (string, error) {
	switch from {
	case "":
		return detectKind(src)
	case "parquet":
		return kindParquet, nil
	case "csv":
		return kindCSV, nil
	case "arrow":
		k, err := detectKind(src)
		if err == nil && (k == kindArrowFile || k == kindArrowStream) {
			return k, nil
		}
		return "", fmt.Errorf("source %s: --from arrow, but no Arrow IPC file or stream magic: %w", src, errSource)
	}
	return "", fmt.Errorf("--from %q: want parquet, arrow or csv: %w", from, errUsage)
}

// convertLance re-expresses a Lance file in another format version
// (--format 2.2 or 2.3) by rewriting only its metadata: every page with a
// counterpart keeps its buffers byte for byte (relayout). Pages without one
// fail the conversion, naming column and page, unless --reencode asks for
// just those pages to be decoded and encoded again. Datasets are refused:
// their data files are converted one by one.
func convertLance(ctx context.Context, src, kind, dst string, cfg convertConfig, out io.Writer) error {
	if kind == kindDataset {
		return fmt.Errorf("source %s is a Lance dataset: convert its data files (a Lance file each) with planar convert --format: %w", src, errSource)
	}
	if cfg.dataset {
		return fmt.Errorf("--dataset: a Lance file converts to a Lance file: %w", errUsage)
	}
	if cfg.format == "" {
		return fmt.Errorf("source %s is a Lance file: give the version to convert it to with --format 2.2 or --format 2.3: %w", src, errUsage)
	}
	if cfg.policy != "cost" || cfg.pageBytes != "" || len(cfg.meta) > 0 {
		return fmt.Errorf("--policy, --page-bytes and --meta do not apply to a Lance source (its pages are kept): %w", errUsage)
	}
	if fi, err := os.Stat(dst); err == nil {
		if fi.IsDir() {
			return classed{fmt.Sprintf("destination %s is a directory", dst), errDestination}
		}
		if !cfg.overwrite {
			return classed{fmt.Sprintf("destination %s exists (use --overwrite to replace it)", dst), errDestination}
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	start := time.Now()
	rep, err := relayout.ConvertPath(src, dst, relayout.Options{Target: cfg.format, Reencode: cfg.reencode})
	if err != nil {
		if errors.Is(err, relayout.ErrNoCounterpart) {
			return fmt.Errorf("%w (use --reencode to re-encode only such pages)", err)
		}
		return err
	}
	if cfg.quiet {
		return nil
	}
	printRelayout(out, src, dst, rep, time.Since(start))
	return nil
}

// printRelayout prints what a metadata-only conversion did: pages kept,
// re-expressed and re-encoded, and bytes copied against re-encoded.
func printRelayout(out io.Writer, src, dst string, rep relayout.Report, took time.Duration) {
	fmt.Fprintf(out, "%s (Lance %s, %d bytes) -> %s (Lance %s, %d bytes) in %s\n",
		src, rep.From, rep.InputSize, dst, rep.To, rep.OutputSize, took.Round(time.Millisecond))
	fmt.Fprintf(out, "pages: %d kept, %d re-expressed (buffers copied byte for byte), %d re-encoded\n",
		rep.Kept, rep.Reexpressed, rep.Reencoded)
	fmt.Fprintf(out, "bytes: %d copied", rep.BytesCopied)
	if rep.Reencoded > 0 {
		fmt.Fprintf(out, ", %d re-encoded into %d", rep.BytesReencoded, rep.BytesWritten)
	}
	fmt.Fprintln(out)
	if rep.Reencoded == 0 {
		return
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "re-encoded\tpage\trows\tfrom\tto\treason")
	for _, p := range rep.Pages {
		if p.Action == relayout.Reencoded {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", p.Column, p.Page, p.Rows, p.From, strings.Join(p.NewFormat, ", "), p.Reason)
		}
	}
	tw.Flush()
}

// writeOptions maps the flags to writer and dataset options. --meta
// entries for struct children (a dotted col) become writer column options;
// top-level ones go into the schema (withFieldMetadata).
func writeOptions(cfg convertConfig) ([]writer.Option, []dataset.Option, error) {
	var base []writer.Option
	switch cfg.policy {
	case "cost":
		base = append(base, writer.WithPolicy(selector.PolicyCost))
	case "lance":
		base = append(base, writer.WithPolicy(selector.PolicyLance))
	default:
		return nil, nil, fmt.Errorf("--policy %q: want cost or lance: %w", cfg.policy, errUsage)
	}
	if cfg.pageBytes != "" {
		n, err := parseSize(cfg.pageBytes)
		if err != nil || n <= 0 {
			return nil, nil, fmt.Errorf("--page-bytes %q: want a positive size such as 1048576 or 8MiB: %w", cfg.pageBytes, errUsage)
		}
		base = append(base, writer.WithMaxPageBytes(n))
	}
	for _, m := range cfg.meta {
		col, key, value, err := parseMeta(m)
		if err != nil {
			return nil, nil, err
		}
		if strings.Contains(col, ".") {
			base = append(base, writer.WithColumnOptions(col, map[string]string{key: value}))
		}
	}
	wo := base[:len(base):len(base)]
	do := []dataset.Option{dataset.WithWriterOptions(base...)}
	if cfg.format != "" {
		f, err := writer.ParseFormat(cfg.format)
		if err != nil || (cfg.format != "2.2" && cfg.format != "2.3") {
			return nil, nil, fmt.Errorf("--format %q: want 2.3 or 2.2: %w", cfg.format, errUsage)
		}
		wo = append(wo, writer.WithFormat(f))
		do = append(do, dataset.WithStorageVersion(cfg.format))
	}
	if cfg.maxRows > 0 {
		do = append(do, dataset.WithMaxRowsPerFile(cfg.maxRows))
	}
	return wo, do, nil
}

func parseMeta(m string) (col, key, value string, err error) {
	col, kv, ok1 := strings.Cut(m, ":")
	key, value, ok2 := strings.Cut(kv, "=")
	if !ok1 || !ok2 || col == "" || key == "" {
		return "", "", "", fmt.Errorf("--meta %q: want col:key=value: %w", m, errUsage)
	}
	return col, key, value, nil
}

// parseSize reads 1048576, 64KiB, 8MiB, 1GiB (KB, MB, GB mean the same).
func parseSize(s string) (int64, error) {
	mult := int64(1)
	u := strings.ToUpper(s)
	for _, x := range []struct {
		suffix string
		m      int64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}} {
		if strings.HasSuffix(u, x.suffix) {
			mult, u = x.m, strings.TrimSuffix(u, x.suffix)
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(u), 10, 64)
	if err != nil {
		return 0, err
	}
	return n * mult, nil
}

// withFieldMetadata adds the --meta entries of top-level columns
// ("col:key=value") to the schema's field metadata, so they are stored in
// the Lance schema too.
func withFieldMetadata(schema *arrow.Schema, meta []string) (*arrow.Schema, error) {
	fields := schema.Fields()
	for _, m := range meta {
		col, key, value, err := parseMeta(m)
		if err != nil {
			return nil, err
		}
		if strings.Contains(col, ".") {
			continue // a writer column option (writeOptions)
		}
		k := schema.FieldIndices(col)
		if len(k) != 1 {
			return nil, fmt.Errorf("--meta %q: the source has no column %q: %w", m, col, errSource)
		}
		f := &fields[k[0]]
		keys, vals := []string{}, []string{}
		if f.HasMetadata() {
			for j, mk := range f.Metadata.Keys() {
				if mk != key {
					keys, vals = append(keys, mk), append(vals, f.Metadata.Values()[j])
				}
			}
		}
		f.Metadata = arrow.NewMetadata(append(keys, key), append(vals, value))
	}
	md := schema.Metadata()
	return arrow.NewSchema(fields, &md), nil
}
