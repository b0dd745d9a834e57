package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/dataset"
)

//go:embed backfill_pylance.py
var pylanceScript []byte

// dsConfig is the dataset form's job.
type dsConfig struct {
	gen         batchGen // rows, batch size, valid fraction and seed of the embeddings
	rowsPerFile int
	storage     string // data storage version, dataset.StorageVersion2_2 or 2_3
	python      string // the interpreter with pylance; "" makes planar create the dataset
	noPython    string // why python is "" (printed once, when the run starts)
	out         string
	// byKey gives only the rows that have a vector, with their ids
	// (dataset.AddColumnsByKey); else every row's embedding, null or
	// not, in scan order (dataset.AddColumns).
	byKey bool
}

// textSchema is the table before the backfill; tableSchema after it.
var textSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
}, nil)

func tableSchema() *arrow.Schema {
	return arrow.NewSchema(append(textSchema.Fields(), baseSchema(nil).Field(1)), nil)
}

// versionSize is one version of the dataset and the data files it references.
type versionSize struct {
	version   uint64
	op        string
	rows      int64
	fragments int
	dataFiles int   // -1: not known (a version this run did not commit)
	dataBytes int64 // total size of those files
	columns   []string
}

// pyCheck is what pylance reported about the backfilled dataset.
type pyCheck struct {
	Lance            string
	Version          uint64
	Versions         int
	Columns          []string
	EmbeddingType    string `json:"embedding_type"`
	Rows             int64
	Scanned          int64
	FilesPerFragment []int `json:"files_per_fragment"`
	NonNull          int64
	Positions        []int64
	Samples          []sample
}

// sample is one row read back: id, text and the vector (nil when null).
type sample struct {
	Row       int64
	ID        int64
	Text      string
	Embedding []float32
}

// dsResult is what the dataset form measured.
type dsResult struct {
	uri         string
	creator     string // who created version 1, with how
	create      time.Duration
	storage     string
	versions    []versionSize
	valid       []int64 // rows given a vector
	call        string  // how the backfill was made
	backfill    time.Duration
	newFiles    map[string]int64 // the files the backfill added, by path under the dataset
	backfillB   int64
	rewriteURI  string
	rewrite     time.Duration
	rewriteB    int64
	rewriteN    int              // data files of the rewrite
	planarCheck error            // planar's Take of the samples on the new version
	samples     []int64          // the rows compared
	pylance     *pyCheck         // nil without pylance
	pyProblems  []string         // where pylance disagrees with what was written
	v1, v2      map[string]int64 // the dataset's files after each commit
}

// runDataset creates the dataset of ids and text (pylance, or planar without
// it), backfills the embedding column with dataset.AddColumns, has pylance
// read the new version back, and writes the whole table again with planar
// to compare the bytes.
func runDataset(ctx context.Context, cfg dsConfig, progress io.Writer) (*dsResult, error) {
	res := &dsResult{uri: filepath.Join(cfg.out, "table.lance"), rewriteURI: filepath.Join(cfg.out, "rewrite.lance")}
	for _, p := range []string{res.uri, res.rewriteURI} {
		if err := os.RemoveAll(p); err != nil {
			return nil, err
		}
	}
	script := filepath.Join(cfg.out, "backfill_pylance.py")
	if cfg.python != "" {
		if err := os.WriteFile(script, pylanceScript, 0o644); err != nil {
			return nil, err
		}
	}
	py := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, cfg.python, append([]string{script}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("pylance %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
		}
		return out, nil
	}

	fmt.Fprintf(progress, "creating the dataset of %d rows ...\n", cfg.gen.rows)
	t0 := time.Now()
	if cfg.python != "" {
		out, err := py("create", res.uri, strconv.Itoa(cfg.gen.rows), strconv.Itoa(cfg.rowsPerFile), cfg.storage)
		if err != nil {
			return nil, err
		}
		var c struct{ Seconds float64 }
		if err := json.Unmarshal(out, &c); err != nil {
			return nil, fmt.Errorf("pylance create: %w: %s", err, out)
		}
		res.create = time.Duration(c.Seconds * float64(time.Second))
		res.creator = "pylance (lance.write_dataset)"
	} else {
		if err := createWithPlanar(ctx, cfg, res.uri); err != nil {
			return nil, fmt.Errorf("create: %w", err)
		}
		res.create = time.Since(t0)
		res.creator = "planar (dataset.Create, without pylance)"
	}
	d1, err := dataset.Open(ctx, res.uri)
	if err != nil {
		return nil, err
	}
	res.storage = d1.StorageVersion()
	if res.v1, err = listFiles(res.uri); err != nil {
		return nil, err
	}

	var d2 *dataset.Dataset
	if cfg.byKey {
		fmt.Fprintln(progress, "backfilling the embedding column with dataset.AddColumnsByKey ...")
		r := newGivenReader(cfg.gen)
		t0 = time.Now()
		d2, err = dataset.AddColumnsByKey(ctx, res.uri, "id", r)
		res.backfill = time.Since(t0)
		r.Release()
		res.valid, res.call = r.valid, "dataset.AddColumnsByKey, the given rows only"
	} else {
		fmt.Fprintln(progress, "backfilling the embedding column with dataset.AddColumns ...")
		r := newEmbeddingReader(cfg.gen)
		t0 = time.Now()
		d2, err = dataset.AddColumns(ctx, res.uri, r)
		res.backfill = time.Since(t0)
		r.Release()
		res.valid, res.call = r.valid, "dataset.AddColumns, every row in scan order"
	}
	if err != nil {
		return nil, fmt.Errorf("add columns: %w", err)
	}
	if res.v2, err = listFiles(res.uri); err != nil {
		return nil, err
	}
	res.newFiles = map[string]int64{}
	for p, n := range res.v2 {
		if _, ok := res.v1[p]; !ok {
			res.newFiles[p] = n
			res.backfillB += n
		}
	}
	ops := map[uint64]string{d1.Version(): "create, " + strings.SplitN(res.creator, " ", 2)[0],
		d2.Version(): "add_columns (Merge), planar"}
	snaps := map[uint64]map[string]int64{d1.Version(): res.v1, d2.Version(): res.v2}
	if res.versions, err = versionSizes(ctx, d2, ops, snaps); err != nil {
		return nil, err
	}

	res.samples = append(pickValid(res.valid, 10), pickNull(res.valid, cfg.gen.rows, 3)...)
	slices.Sort(res.samples)
	res.samples = slices.Compact(res.samples)
	want := expectedRows(cfg.gen, res.samples)
	res.planarCheck = planarSamples(ctx, d2, res.samples, want)
	if cfg.python != "" {
		fmt.Fprintln(progress, "pylance reads the new version back ...")
		rows := make([]string, len(res.samples))
		for i, r := range res.samples {
			rows[i] = strconv.FormatInt(r, 10)
		}
		out, err := py("check", res.uri, strings.Join(rows, ","))
		if err != nil {
			return nil, err
		}
		res.pylance = &pyCheck{}
		if err := json.Unmarshal(out, res.pylance); err != nil {
			return nil, fmt.Errorf("pylance check: %w", err)
		}
		res.pyProblems = comparePylance(res.pylance, cfg.gen.rows, d2.Version(), res.valid, want)
	}

	fmt.Fprintln(progress, "rewriting the whole table with dataset.Create ...")
	t0 = time.Now()
	if err := rewriteWithPlanar(ctx, cfg, res.rewriteURI); err != nil {
		return nil, fmt.Errorf("rewrite: %w", err)
	}
	res.rewrite = time.Since(t0)
	files, err := listFiles(res.rewriteURI)
	if err != nil {
		return nil, err
	}
	for p, n := range files {
		res.rewriteB += n
		if strings.HasPrefix(p, "data/") {
			res.rewriteN++
		}
	}
	return res, nil
}

// createWithPlanar writes the ids and text with dataset.Create, cut as
// pylance cuts them.
func createWithPlanar(ctx context.Context, cfg dsConfig, uri string) error {
	w, err := dataset.Create(ctx, uri, textSchema, dataset.WithMaxRowsPerFile(int64(cfg.rowsPerFile)), dataset.WithStorageVersion(cfg.storage))
	if err != nil {
		return err
	}
	g := cfg.gen
	for k := range g.numBatches() {
		start, n := g.span(k)
		ids, text := idArray(start, n), textArray(start, n)
		rec := array.NewRecordBatch(textSchema, []arrow.Array{ids, text}, int64(n))
		ids.Release()
		text.Release()
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			w.Abort()
			return err
		}
	}
	_, err = w.Commit(ctx)
	return err
}

// rewriteWithPlanar writes the backfilled table (id, text, embedding) as a
// new dataset: what the backfill would cost without AddColumns.
func rewriteWithPlanar(ctx context.Context, cfg dsConfig, uri string) error {
	schema := tableSchema()
	w, err := dataset.Create(ctx, uri, schema, dataset.WithMaxRowsPerFile(int64(cfg.rowsPerFile)), dataset.WithStorageVersion(cfg.storage))
	if err != nil {
		return err
	}
	g := cfg.gen
	for k := range g.numBatches() {
		start, n := g.span(k)
		emb, _ := g.gen(baseSchema(nil), k)
		text := textArray(start, n)
		rec := array.NewRecordBatch(schema, []arrow.Array{emb.Column(0), text, emb.Column(1)}, int64(n))
		emb.Release()
		text.Release()
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			w.Abort()
			return err
		}
	}
	_, err = w.Commit(ctx)
	return err
}

func idArray(start, n int) arrow.Array {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(start + i)
	}
	d := array.NewData(arrow.PrimitiveTypes.Int64, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(ids))}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

// embeddingReader streams the backfill's input batch by batch, the
// array.RecordReader AddColumns and AddColumnsByKey take: every row's
// embedding (newEmbeddingReader) or only the rows that have one, with their
// ids (newGivenReader). It keeps the rows it gave a vector.
type embeddingReader struct {
	refs   atomic.Int64
	gen    batchGen
	schema *arrow.Schema
	batch  func(k int) (arrow.RecordBatch, []int64) // batch k and its rows with a vector
	k      int
	cur    arrow.RecordBatch
	valid  []int64
}

func newEmbeddingReader(g batchGen) *embeddingReader {
	schema := arrow.NewSchema([]arrow.Field{baseSchema(nil).Field(1)}, nil)
	return newReader(g, schema, func(k int) (arrow.RecordBatch, []int64) {
		rec, vr := g.gen(baseSchema(nil), k)
		defer rec.Release()
		return array.NewRecordBatch(schema, []arrow.Array{rec.Column(1)}, rec.NumRows()), vr
	})
}

// newGivenReader gives only the rows that have a vector, with their ids:
// the same vectors as newEmbeddingReader's, without the null rows' zeros.
func newGivenReader(g batchGen) *embeddingReader {
	schema := baseSchema(nil)
	return newReader(g, schema, func(k int) (arrow.RecordBatch, []int64) {
		ids, vals := g.given(k)
		return vectorsOf(schema, ids, vals), ids
	})
}

func newReader(g batchGen, schema *arrow.Schema, batch func(int) (arrow.RecordBatch, []int64)) *embeddingReader {
	r := &embeddingReader{gen: g, schema: schema, batch: batch}
	r.refs.Store(1)
	return r
}

func (r *embeddingReader) Retain()                        { r.refs.Add(1) }
func (r *embeddingReader) Schema() *arrow.Schema          { return r.schema }
func (r *embeddingReader) Err() error                     { return nil }
func (r *embeddingReader) RecordBatch() arrow.RecordBatch { return r.cur }

// Record is RecordBatch (the interface still asks for it).
func (r *embeddingReader) Record() arrow.RecordBatch { return r.cur }

func (r *embeddingReader) Release() {
	if r.refs.Add(-1) == 0 && r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
}

func (r *embeddingReader) Next() bool {
	if r.cur != nil {
		r.cur.Release()
		r.cur = nil
	}
	if r.k >= r.gen.numBatches() {
		return false
	}
	rec, vr := r.batch(r.k)
	r.k++
	r.valid = append(r.valid, vr...)
	r.cur = rec
	return true
}

// listFiles lists the files under dir with their sizes, by slash path
// relative to dir.
func listFiles(dir string) (map[string]int64, error) {
	out := map[string]int64{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = info.Size()
		return nil
	})
	return out, err
}

// versionSizes describes every version of d's dataset. The data files of a
// version are those under data/ in the listing taken right after it was
// committed (snaps): each commit here only adds files.
func versionSizes(ctx context.Context, d *dataset.Dataset, ops map[uint64]string, snaps map[uint64]map[string]int64) ([]versionSize, error) {
	vs, err := d.Versions()
	if err != nil {
		return nil, err
	}
	out := make([]versionSize, 0, len(vs))
	for _, v := range vs {
		dv, err := dataset.OpenVersion(ctx, d.URI(), v.Version)
		if err != nil {
			return nil, err
		}
		s := versionSize{version: v.Version, op: ops[v.Version], rows: dv.CountRows(), fragments: dv.NumFragments(), dataFiles: -1}
		for _, f := range dv.Schema().Fields() {
			s.columns = append(s.columns, f.Name)
		}
		if snap, ok := snaps[v.Version]; ok {
			s.dataFiles = 0
			for p, n := range snap {
				if strings.HasPrefix(p, "data/") {
					s.dataFiles++
					s.dataBytes += n
				}
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// expectedRows regenerates the listed rows: id, text and vector (nil for a
// null row), producing each batch they fall in once.
func expectedRows(g batchGen, rows []int64) map[int64]sample {
	out := make(map[int64]sample, len(rows))
	schema := baseSchema(nil)
	for i := 0; i < len(rows); {
		k := int(rows[i]) / g.batch
		start, _ := g.span(k)
		rec, _ := g.gen(schema, k)
		emb := rec.Column(1).(*array.FixedSizeList)
		vals := emb.ListValues().(*array.Float32).Float32Values()
		for ; i < len(rows) && int(rows[i])/g.batch == k; i++ {
			r := rows[i]
			j := int(r) - start
			s := sample{Row: r, ID: r, Text: string(appendSentence(nil, r))}
			if emb.IsValid(j) {
				s.Embedding = slices.Clone(vals[j*dim : (j+1)*dim])
			}
			out[r] = s
		}
		rec.Release()
	}
	return out
}

// sameSample says how got differs from want, or "".
func sameSample(got, want sample) string {
	switch {
	case got.ID != want.ID:
		return fmt.Sprintf("row %d: id %d, want %d", want.Row, got.ID, want.ID)
	case got.Text != want.Text:
		return fmt.Sprintf("row %d: text %q, want %q", want.Row, got.Text, want.Text)
	case (got.Embedding == nil) != (want.Embedding == nil):
		return fmt.Sprintf("row %d: embedding null %v, want %v", want.Row, got.Embedding == nil, want.Embedding == nil)
	case !slices.Equal(got.Embedding, want.Embedding):
		return fmt.Sprintf("row %d: the vector differs", want.Row)
	}
	return ""
}

// planarSamples takes the rows from d with planar and compares them.
func planarSamples(ctx context.Context, d *dataset.Dataset, rows []int64, want map[int64]sample) error {
	rec, err := d.Take(ctx, rows)
	if err != nil {
		return err
	}
	defer rec.Release()
	s := rec.Schema()
	col := func(name string) arrow.Array {
		if idx := s.FieldIndices(name); len(idx) == 1 {
			return rec.Column(idx[0])
		}
		return nil
	}
	ids, _ := col("id").(*array.Int64)
	text, _ := col("text").(*array.String)
	emb, _ := col("embedding").(*array.FixedSizeList)
	if ids == nil || text == nil || emb == nil {
		return fmt.Errorf("columns %v, want id, text, embedding", s)
	}
	vals := emb.ListValues().(*array.Float32)
	for i, r := range rows {
		got := sample{Row: r, ID: ids.Value(i), Text: text.Value(i)}
		if emb.IsValid(i) {
			lo, hi := emb.ValueOffsets(i)
			got.Embedding = vals.Float32Values()[lo:hi]
		}
		if d := sameSample(got, want[r]); d != "" {
			return errors.New(d)
		}
	}
	return nil
}

// comparePylance lists where pylance's view of the dataset differs from
// what was written.
func comparePylance(c *pyCheck, rows int, version uint64, valid []int64, want map[int64]sample) []string {
	var bad []string
	if c.Version != version || c.Versions != int(version) {
		bad = append(bad, fmt.Sprintf("version %d of %d, want %d", c.Version, c.Versions, version))
	}
	if !slices.Equal(c.Columns, []string{"id", "text", "embedding"}) {
		bad = append(bad, fmt.Sprintf("columns %v", c.Columns))
	}
	if c.EmbeddingType != "fixed_size_list<item: float>[768]" {
		bad = append(bad, "embedding type "+c.EmbeddingType)
	}
	if c.Rows != int64(rows) || c.Scanned != int64(rows) {
		bad = append(bad, fmt.Sprintf("%d rows (%d scanned), want %d", c.Rows, c.Scanned, rows))
	}
	for _, n := range c.FilesPerFragment {
		if n != 2 {
			bad = append(bad, fmt.Sprintf("data files per fragment %v, want 2 each", c.FilesPerFragment))
			break
		}
	}
	if c.NonNull != int64(len(valid)) {
		bad = append(bad, fmt.Sprintf("%d non-null embeddings, want %d", c.NonNull, len(valid)))
	} else if len(c.Positions) == len(valid) && !slices.Equal(c.Positions, valid) {
		bad = append(bad, "the non-null embeddings are in other rows than written")
	}
	if len(c.Samples) != len(want) {
		bad = append(bad, fmt.Sprintf("%d sampled rows, want %d", len(c.Samples), len(want)))
	}
	for _, s := range c.Samples {
		if d := sameSample(s, want[s.Row]); d != "" {
			bad = append(bad, d)
		}
	}
	return bad
}

func printDataset(w io.Writer, cfg dsConfig, res *dsResult) {
	fmt.Fprintf(w, "\ndataset form: %d rows of id (int64) and text (string), %d rows per file, created by %s in %s, storage version %s; in %s\n\n",
		cfg.gen.rows, cfg.rowsPerFile, res.creator, secs(res.create), res.storage, res.uri)
	tw := tabwriter.NewWriter(w, 0, 4, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "version\t operation\t rows\t fragments\t data files\t data bytes\t columns")
	for _, v := range res.versions {
		files, size := "?", "?"
		if v.dataFiles >= 0 {
			files, size = strconv.Itoa(v.dataFiles), mb(v.dataBytes)
		}
		fmt.Fprintf(tw, "%d\t %s\t %d\t %d\t %s\t %s\t %s\n", v.version, v.op, v.rows, v.fragments, files, size, strings.Join(v.columns, ", "))
	}
	tw.Flush()
	var data, manifest, txn, other int64
	var nData int
	for p, n := range res.newFiles {
		switch {
		case strings.HasPrefix(p, "data/"):
			data += n
			nData++
		case strings.HasPrefix(p, "_versions/"):
			manifest += n
		case strings.HasPrefix(p, "_transactions/"):
			txn += n
		default:
			other += n
		}
	}
	fmt.Fprintf(w, "\nbackfill (%s; %d of %d rows with a 768-d vector): %s; wrote %s = %d data files %s + manifest %s + transaction %s",
		res.call,
		len(res.valid), cfg.gen.rows, secs(res.backfill), mb(res.backfillB), nData, mb(data), mb(manifest), mb(txn))
	if other > 0 {
		fmt.Fprintf(w, " + other %s", mb(other))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "rewrite of the whole table (dataset.Create of id, text, embedding): %s; wrote %s (%d data files)\n",
		secs(res.rewrite), mb(res.rewriteB), res.rewriteN)
	if res.rewriteB > 0 && res.backfillB > 0 {
		fmt.Fprintf(w, "the backfill wrote %.2f%% of a rewrite's bytes (the rewrite %.1f× the backfill's)\n",
			100*float64(res.backfillB)/float64(res.rewriteB), float64(res.rewriteB)/float64(res.backfillB))
	}
	if res.planarCheck != nil {
		fmt.Fprintf(w, "planar's Take of %d sampled rows of version %d: MISMATCH: %v\n", len(res.samples), res.versions[len(res.versions)-1].version, res.planarCheck)
	} else {
		fmt.Fprintf(w, "planar's Take of %d sampled rows of the new version: equal to what was written\n", len(res.samples))
	}
	c := res.pylance
	if c == nil {
		fmt.Fprintln(w, "pylance did not check the dataset (not available, see above)")
		return
	}
	fmt.Fprintf(w, "pylance %s opened version %d (%d versions): columns %v, embedding %s, %d rows, data files per fragment %v, %d non-null embeddings (%d written), %d sampled rows\n",
		c.Lance, c.Version, c.Versions, c.Columns, c.EmbeddingType, c.Rows, c.FilesPerFragment, c.NonNull, len(res.valid), len(c.Samples))
	if len(res.pyProblems) == 0 {
		fmt.Fprintln(w, "pylance reads back what was written: the non-null rows, their positions and the sampled ids, texts and vectors")
	} else {
		fmt.Fprintln(w, "pylance MISMATCH: "+strings.Join(res.pyProblems, "; "))
	}
}
