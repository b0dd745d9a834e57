package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/planarlance/planar/dataset"
	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/internal/s3test"
)

// dsWorkerFlag, as the first argument, makes the binary run one measurement
// of the dataset suite (a dsJob in JSON) and print a dsMeasurement.
const dsWorkerFlag = "-planar-dataset-worker"

// Kinds of dataset jobs.
const (
	dsAppend         = "append"     // Create + Write the IPC file's rows + Commit
	dsCommits        = "commits"    // a dataset of BatchRows rows, then Commits appends of BatchRows rows
	dsKindConcurrent = "concurrent" // at StartAt, Commits appends to an existing dataset
	dsAddCol         = "addcol"     // Create from the IPC file, then AddColumns
	dsRewrite        = "rewrite"    // Create from the IPC file with the new column
	dsMemory         = "memory"     // Create + Write of Rows generated rows + Commit
)

// dsJob is one measurement of the dataset suite. pylance_dataset.py takes
// the same JSON for its commits job.
type dsJob struct {
	Kind      string         `json:"kind"`
	URI       string         `json:"uri"`
	S3        *s3test.Server `json:"s3,omitempty"` // the dataset is on this server
	IPC       string         `json:"ipc,omitempty"`
	Rows      int64          `json:"rows,omitempty"`
	Embedding bool           `json:"embedding,omitempty"`
	Seed      uint64         `json:"seed"`
	Commits   int            `json:"commits,omitempty"`
	BatchRows int            `json:"batch_rows,omitempty"`
	FirstID   int64          `json:"first_id,omitempty"`
	StartAt   int64          `json:"start_at_ns,omitempty"` // concurrent: wall clock to start at
}

// storageOptions are pylance's storage_options for the job's server.
func (j dsJob) storageOptions() map[string]string {
	if j.S3 == nil {
		return nil
	}
	return map[string]string{
		"aws_access_key_id":     j.S3.AccessKey,
		"aws_secret_access_key": j.S3.SecretKey,
		"aws_endpoint":          j.S3.Endpoint,
		"aws_region":            j.S3.Region,
		"allow_http":            "true",
	}
}

func (j dsJob) options(more ...dataset.Option) []dataset.Option {
	if j.S3 != nil {
		more = append(more, dataset.WithStorageOptions(j.storageOptions()))
	}
	return more
}

// dsMeasurement is what one dataset job measured.
type dsMeasurement struct {
	Rows       int64   `json:"rows,omitempty"`
	ArrowBytes int64   `json:"arrow_bytes,omitempty"`
	WallSec    float64 `json:"wall_s,omitempty"` // the measured operation alone
	CPUSec     float64 `json:"cpu_s,omitempty"`  // user+system CPU of the process during it
	// ServerCPUSec is the S3 server's CPU time over the whole job process
	// (measured by the suite, which runs the server).
	ServerCPUSec float64 `json:"server_cpu_s,omitempty"`
	BaseSec      float64 `json:"base_s,omitempty"` // addcol: writing the table it adds to
	MaxRSSKB     int64   `json:"max_rss_kb,omitempty"`
	HeapPeak     int64   `json:"heap_peak,omitempty"` // Go heap objects, sampled every 10 ms
	// LatMS is the wall time of each commit (open → write → commit), ms.
	LatMS    []float64 `json:"lat_ms,omitempty"`
	Commits  int       `json:"commits,omitempty"`
	Retries  int       `json:"retries,omitempty"`
	Failures []string  `json:"failures,omitempty"`
	StartNS  int64     `json:"start_ns,omitempty"`
	EndNS    int64     `json:"end_ns,omitempty"`
	// Bytes are the bytes the operation stored, by kind (data, manifest,
	// transaction, other): for addcol the objects AddColumns added.
	Bytes map[string]int64 `json:"bytes,omitempty"`
	Error string           `json:"error,omitempty"`
}

func dsWorkerMain(args []string, stdout io.Writer) int {
	return runWorker(dsWorkerFlag, args, stdout, func(j dsJob) any {
		m, err := runDSJob(context.Background(), j)
		if err != nil {
			m.Error = err.Error()
		}
		m.MaxRSSKB = maxRSSKB()
		return m
	})
}

func runDSJob(ctx context.Context, j dsJob) (dsMeasurement, error) {
	switch j.Kind {
	case dsAppend, dsRewrite:
		return dsWriteIPC(ctx, j, j.Kind == dsRewrite)
	case dsMemory:
		return dsWriteGenerated(ctx, j)
	case dsCommits:
		return dsSmallCommits(ctx, j)
	case dsKindConcurrent:
		return dsConcurrentWriter(ctx, j)
	case dsAddCol:
		return dsAddColumns(ctx, j)
	}
	return dsMeasurement{}, fmt.Errorf("job kind %q", j.Kind)
}

// timed measures the wall and CPU time of f.
func timed(m *dsMeasurement, f func() error) error {
	runtime.GC()
	cpu0, t0 := cpuSeconds(), time.Now()
	err := f()
	m.WallSec, m.CPUSec = time.Since(t0).Seconds(), cpuSeconds()-cpu0
	return err
}

// writeAll creates the dataset at uri from recs, committing once.
func writeAll(ctx context.Context, j dsJob, schema *arrow.Schema, recs []arrow.RecordBatch) error {
	w, err := dataset.Create(ctx, j.URI, schema, j.options()...)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			_ = w.Abort()
			return err
		}
	}
	_, err = w.Commit(ctx)
	return err
}

// dsWriteIPC writes the IPC file's rows as a new dataset; withNew adds the
// column AddColumns would add (the full rewrite AddColumns avoids).
func dsWriteIPC(ctx context.Context, j dsJob, withNew bool) (dsMeasurement, error) {
	var m dsMeasurement
	schema, recs, release, err := readIPC(j.IPC)
	if err != nil {
		return m, err
	}
	defer release()
	if withNew {
		schema, recs = withNewColumn(schema, recs, j.Seed)
	}
	for _, r := range recs {
		m.Rows += r.NumRows()
		m.ArrowBytes += corpus.ArrowBytes(r)
	}
	if err := timed(&m, func() error { return writeAll(ctx, j, schema, recs) }); err != nil {
		return m, err
	}
	m.Bytes, err = storedBytes(ctx, j, nil)
	return m, err
}

// withNewColumn returns recs with the new column appended (its values
// made before the clock starts).
func withNewColumn(schema *arrow.Schema, recs []arrow.RecordBatch, seed uint64) (*arrow.Schema, []arrow.RecordBatch) {
	s := arrow.NewSchema(append(append([]arrow.Field(nil), schema.Fields()...), newColumnField), nil)
	out := make([]arrow.RecordBatch, len(recs))
	var first int64
	for i, r := range recs {
		col := newColumn(seed, first, int(r.NumRows()))
		out[i] = array.NewRecordBatch(s, append(append([]arrow.Array(nil), r.Columns()...), col), r.NumRows())
		first += r.NumRows()
	}
	return s, out
}

// dsAddColumns writes the IPC file's rows as a dataset (BaseSec), then
// measures AddColumns of the new column and the objects it added.
func dsAddColumns(ctx context.Context, j dsJob) (dsMeasurement, error) {
	var m dsMeasurement
	schema, recs, release, err := readIPC(j.IPC)
	if err != nil {
		return m, err
	}
	defer release()
	t0 := time.Now()
	if err := writeAll(ctx, j, schema, recs); err != nil {
		return m, fmt.Errorf("base table: %w", err)
	}
	m.BaseSec = time.Since(t0).Seconds()
	before, err := listObjects(ctx, j)
	if err != nil {
		return m, err
	}
	s := arrow.NewSchema([]arrow.Field{newColumnField}, nil)
	var cols []arrow.RecordBatch
	for first := int64(0); first < j.Rows; first += batchRows {
		n := int(min(batchRows, j.Rows-first))
		col := newColumn(j.Seed, first, n)
		cols = append(cols, array.NewRecordBatch(s, []arrow.Array{col}, int64(n)))
		m.ArrowBytes += corpus.ArrowBytes(cols[len(cols)-1])
	}
	m.Rows = j.Rows
	rr, err := array.NewRecordReader(s, cols)
	if err != nil {
		return m, err
	}
	defer rr.Release()
	if err := timed(&m, func() error {
		_, err := dataset.AddColumns(ctx, j.URI, rr, j.options()...)
		return err
	}); err != nil {
		return m, err
	}
	m.Bytes, err = storedBytes(ctx, j, before)
	return m, err
}

// dsWriteGenerated streams j.Rows generated rows into a new dataset, with
// the Go heap sampled every 10 ms.
func dsWriteGenerated(ctx context.Context, j dsJob) (dsMeasurement, error) {
	var m dsMeasurement
	g := newDSGen(j.Seed, false)
	var peak atomic.Int64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			if v := int64(s[0].Value.Uint64()); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	err := timed(&m, func() error {
		w, err := dataset.Create(ctx, j.URI, g.schema, j.options()...)
		if err != nil {
			return err
		}
		for lo := int64(0); lo < j.Rows; lo += batchRows {
			rec := g.batch(lo, int(min(batchRows, j.Rows-lo)))
			m.ArrowBytes += corpus.ArrowBytes(rec)
			err := w.Write(rec)
			rec.Release()
			if err != nil {
				_ = w.Abort()
				return err
			}
		}
		_, err = w.Commit(ctx)
		return err
	})
	close(done)
	<-sampled
	m.Rows, m.HeapPeak = j.Rows, peak.Load()
	return m, err
}

// dsSmallCommits creates a dataset of BatchRows rows, then times Commits
// appends of BatchRows rows each (open, write, commit).
func dsSmallCommits(ctx context.Context, j dsJob) (dsMeasurement, error) {
	var m dsMeasurement
	g := newDSGen(j.Seed, false)
	recs := make([]arrow.RecordBatch, j.Commits+1)
	for i := range recs {
		recs[i] = g.batch(int64(i*j.BatchRows), j.BatchRows)
	}
	if err := writeAll(ctx, j, g.schema, recs[:1]); err != nil {
		return m, fmt.Errorf("create: %w", err)
	}
	for _, rec := range recs[1:] {
		t0 := time.Now()
		if _, _, err := appendOnce(ctx, j, rec); err != nil {
			return m, err
		}
		m.LatMS = append(m.LatMS, float64(time.Since(t0).Microseconds())/1e3)
		m.Commits++
	}
	return m, nil
}

// appendOnce appends rec as one commit; it returns the commit's version and
// its retries (the versions it rebased over).
func appendOnce(ctx context.Context, j dsJob, rec arrow.RecordBatch, opts ...dataset.Option) (uint64, int, error) {
	w, err := dataset.Append(ctx, j.URI, j.options(opts...)...)
	if err != nil {
		return 0, 0, err
	}
	if err := w.Write(rec); err != nil {
		_ = w.Abort()
		return 0, 0, err
	}
	d, err := w.Commit(ctx)
	if err != nil {
		_ = w.Abort()
		return 0, 0, err
	}
	return d.Version(), int(d.Version() - w.ReadVersion() - 1), nil
}

// dsConcurrentWriter waits for StartAt, then appends Commits batches of
// BatchRows rows (ids from FirstID on) to the dataset at URI, counting the
// retries of each commit; a failed commit is recorded and the next one
// tried.
func dsConcurrentWriter(ctx context.Context, j dsJob) (dsMeasurement, error) {
	var m dsMeasurement
	g := newDSGen(j.Seed, false)
	recs := make([]arrow.RecordBatch, j.Commits)
	for i := range recs {
		recs[i] = g.batch(j.FirstID+int64(i*j.BatchRows), j.BatchRows)
	}
	time.Sleep(time.Until(time.Unix(0, j.StartAt)))
	m.StartNS = time.Now().UnixNano()
	for _, rec := range recs {
		_, retries, err := appendOnce(ctx, j, rec, dataset.WithMaxCommitRetries(1000))
		if err != nil {
			m.Failures = append(m.Failures, err.Error())
			continue
		}
		m.Commits++
		m.Retries += retries
	}
	m.EndNS = time.Now().UnixNano()
	return m, nil
}

// listObjects returns the size of every object of the dataset by key.
func listObjects(ctx context.Context, j dsJob) (map[string]int64, error) {
	out := map[string]int64{}
	if j.S3 == nil {
		err := filepath.WalkDir(j.URI, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			out[strings.TrimPrefix(p, j.URI+string(filepath.Separator))] = info.Size()
			return nil
		})
		return out, err
	}
	bucket, prefix, err := splitS3(j.URI)
	if err != nil {
		return nil, err
	}
	p := s3.NewListObjectsV2Paginator(j.S3.Client(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(prefix + "/")})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", j.URI, err)
		}
		for _, o := range page.Contents {
			out[strings.TrimPrefix(aws.ToString(o.Key), prefix+"/")] = aws.ToInt64(o.Size)
		}
	}
	return out, nil
}

// storedBytes sums the sizes of the dataset's objects not in before, by
// kind.
func storedBytes(ctx context.Context, j dsJob, before map[string]int64) (map[string]int64, error) {
	now, err := listObjects(ctx, j)
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for k, n := range now {
		if _, old := before[k]; old {
			continue
		}
		kind := "other"
		switch {
		case strings.HasPrefix(k, "data/"):
			kind = "data"
		case strings.HasPrefix(k, "_versions/") && strings.HasSuffix(k, ".manifest"):
			kind = "manifest"
		case strings.HasPrefix(k, "_transactions/"):
			kind = "transaction"
		}
		out[kind] += n
	}
	return out, nil
}

func splitS3(uri string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(uri, "s3://")
	if !ok {
		return "", "", fmt.Errorf("not an s3:// URI: %q", uri)
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	return bucket, strings.TrimSuffix(prefix, "/"), nil
}

// removeDataset deletes the dataset's objects (its directory locally).
func removeDataset(ctx context.Context, j dsJob) error {
	if j.S3 == nil {
		return os.RemoveAll(j.URI)
	}
	objs, err := listObjects(ctx, j)
	if err != nil {
		return err
	}
	bucket, prefix, _ := splitS3(j.URI)
	keys := make([]string, 0, len(objs))
	for k := range objs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	c := j.S3.Client()
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		ids := make([]s3types.ObjectIdentifier, n)
		for i, k := range keys[:n] {
			ids[i] = s3types.ObjectIdentifier{Key: aws.String(prefix + "/" + k)}
		}
		if _, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket), Delete: &s3types.Delete{Objects: ids, Quiet: aws.Bool(true)}}); err != nil {
			return fmt.Errorf("delete %s: %w", j.URI, err)
		}
		keys = keys[n:]
	}
	return nil
}
