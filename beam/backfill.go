// Package planarbeam runs planar's dataset backfills on Apache Beam's Go
// SDK: the fragment is the unit of work, the commit the last step. It lives
// in a module of its own so that planar's core module never imports Beam.
//
// Two transforms, one per kind of backfill, both from a
// dataset.BackfillPlan (PlanBackfill, on the machine that builds the
// pipeline):
//
//   - Compute: each fragment's new columns computed from its own columns by
//     a function of record batches, on whichever worker gets the fragment.
//   - ByKey: vectors given for some keys (a PCollection of KV<key,
//     []float32>) attached to the rows with those keys; only the given rows
//     and the matched keys' positions move between stages.
//
// Both end in one dataset.CommitBackfill (a Merge, under Lance's conflict
// rules) and return a PCollection holding the committed version. A runner's
// retry of a task writes a new file (the failed attempt's file is removed
// by the task); a retried commit returns the version it made. If the
// pipeline fails before the commit, nothing is committed; data files of
// tasks that succeeded stay unreferenced (Lance's cleanup removes them).
//
// The pipelines run in-process with the Prism runner (tests, small jobs)
// and unchanged on any portable runner whose workers run this binary
// (Dataflow, Flink, Spark): the dataset URI must then be storage all
// workers reach (s3://, with WithStorageOptions).
package planarbeam

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/planarlance/planar/dataset"
)

func init() {
	register.DoFn3x1[context.Context, string, func(string), error](&computeFn{})
	register.DoFn3x1[context.Context, []string, func(int64), error](&commitFn{})
	register.Function3x0(collectResults)
	register.Emitter1[string]()
	register.Emitter1[[]string]()
	register.Emitter1[int64]()
	beam.RegisterType(reflect.TypeOf((*computeFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*commitFn)(nil)).Elem())
}

// ComputeFunc computes a fragment's new columns from a batch of its
// existing ones: it returns a batch of the same number of rows under the
// plan's new schema. It runs on the workers, which find it by the name it
// was registered under (RegisterCompute).
type ComputeFunc func(arrow.RecordBatch) (arrow.RecordBatch, error)

var (
	computeMu    sync.RWMutex
	computeFuncs = map[string]ComputeFunc{}
)

// RegisterCompute makes fn known under name, for Compute. Call it from an
// init function, so that it has run in every worker of a remote runner
// (they run the same binary) before a task arrives; registering a name
// twice panics.
func RegisterCompute(name string, fn ComputeFunc) {
	computeMu.Lock()
	defer computeMu.Unlock()
	if _, dup := computeFuncs[name]; dup || fn == nil {
		panic(fmt.Sprintf("planarbeam: RegisterCompute(%q): registered twice, or nil", name))
	}
	computeFuncs[name] = fn
}

func lookupCompute(name string) (ComputeFunc, error) {
	computeMu.RLock()
	defer computeMu.RUnlock()
	fn, ok := computeFuncs[name]
	if !ok {
		return nil, fmt.Errorf("planarbeam: no compute function registered as %q (RegisterCompute, in an init): %w", name, dataset.ErrInvalidOption)
	}
	return fn, nil
}

// Options are what every step needs besides the plan.
type Options struct {
	// Storage are the dataset's storage options (dataset.WithStorageOptions):
	// object store endpoint, region, credentials.
	Storage map[string]string
	// BatchRows is the rows of each batch a Compute function is given
	// (dataset.DefaultScanBatchRows when 0).
	BatchRows int64
}

func (o Options) dataset() []dataset.Option {
	if len(o.Storage) == 0 {
		return nil
	}
	return []dataset.Option{dataset.WithStorageOptions(o.Storage)}
}

// Compute backfills plan's new columns with the function registered as fn
// (RegisterCompute) applied to each fragment's columns (every column when
// none is named), one fragment a task, and commits them; the result holds
// the version committed.
func Compute(s beam.Scope, plan *dataset.BackfillPlan, columns []string, fn string, o Options) (beam.PCollection, error) {
	s = s.Scope("planar.Compute")
	planJSON, tasks, err := taskStrings(plan)
	if err != nil {
		return beam.PCollection{}, err
	}
	if _, err := lookupCompute(fn); err != nil {
		return beam.PCollection{}, err
	}
	ts := beam.Reshuffle(s, beam.CreateList(s, tasks))
	results := beam.ParDo(s, &computeFn{Columns: columns, Fn: fn, Opts: o}, ts)
	return commit(s, planJSON, results, o), nil
}

// taskStrings is the plan and its tasks as JSON.
func taskStrings(plan *dataset.BackfillPlan) (string, []string, error) {
	if plan == nil {
		return "", nil, fmt.Errorf("planarbeam: no plan: %w", dataset.ErrInvalidOption)
	}
	pb, err := json.Marshal(plan)
	if err != nil {
		return "", nil, err
	}
	tasks := make([]string, len(plan.Tasks))
	for i, t := range plan.Tasks {
		b, err := json.Marshal(t)
		if err != nil {
			return "", nil, err
		}
		tasks[i] = string(b)
	}
	return string(pb), tasks, nil
}

// commit gathers every result and commits them as one Merge.
func commit(s beam.Scope, planJSON string, results beam.PCollection, o Options) beam.PCollection {
	s = s.Scope("commit")
	// A fragment-less table has no result; the fixed key's one group
	// still needs an element, so a marker (empty string) rides along.
	all := beam.Flatten(s, results, beam.Create(s, ""))
	grouped := beam.GroupByKey(s, beam.AddFixedKey(s, all))
	lists := beam.ParDo(s, collectResults, grouped)
	return beam.ParDo(s, &commitFn{Plan: planJSON, Opts: o}, lists)
}

// collectResults gathers the results (dropping the marker) into one list.
func collectResults(_ int, it func(*string) bool, emit func([]string)) {
	var out []string
	var r string
	for it(&r) {
		if r != "" {
			out = append(out, r)
		}
	}
	emit(out)
}

// computeFn is one fragment's task: read its columns, compute, write.
type computeFn struct {
	Columns []string
	Fn      string // a RegisterCompute name
	Opts    Options
}

func (f *computeFn) ProcessElement(ctx context.Context, taskJSON string, emit func(string)) error {
	var t dataset.BackfillTask
	if err := json.Unmarshal([]byte(taskJSON), &t); err != nil {
		return fmt.Errorf("planarbeam: task: %w", err)
	}
	fn, err := lookupCompute(f.Fn)
	if err != nil {
		return err
	}
	in, err := t.Read(ctx, f.Opts.BatchRows, f.Columns, f.Opts.dataset()...)
	if err != nil {
		return err
	}
	defer in.Release()
	schema, err := t.Schema()
	if err != nil {
		return err
	}
	out := &mappedReader{in: in, fn: fn, schema: schema}
	res, err := t.Write(ctx, out, f.Opts.dataset()...)
	out.release()
	return emitResult(res, err)(emit)
}

// emitResult returns what emits a task's result as JSON, or its error.
func emitResult(res dataset.BackfillResult, err error) func(emit func(string)) error {
	return func(emit func(string)) error {
		if err != nil {
			return err
		}
		b, err := json.Marshal(res)
		if err != nil {
			return err
		}
		emit(string(b))
		return nil
	}
}

// commitFn commits every result of the plan.
type commitFn struct {
	Plan string
	Opts Options
}

func (f *commitFn) ProcessElement(ctx context.Context, results []string, emit func(int64)) error {
	var plan dataset.BackfillPlan
	if err := json.Unmarshal([]byte(f.Plan), &plan); err != nil {
		return fmt.Errorf("planarbeam: plan: %w", err)
	}
	rs := make([]dataset.BackfillResult, len(results))
	for i, r := range results {
		if err := json.Unmarshal([]byte(r), &rs[i]); err != nil {
			return fmt.Errorf("planarbeam: result: %w", err)
		}
	}
	d, err := dataset.CommitBackfill(ctx, &plan, rs, f.Opts.dataset()...)
	if err != nil {
		return err
	}
	emit(int64(d.Version()))
	return nil
}

// mappedReader applies a ComputeFunc to each batch of a reader: the
// array.RecordReader a task writes from.
type mappedReader struct {
	in     array.RecordReader
	fn     ComputeFunc
	schema *arrow.Schema
	cur    arrow.RecordBatch
	err    error
}

func (m *mappedReader) Retain()  {}
func (m *mappedReader) Release() {}
func (m *mappedReader) release() {
	if m.cur != nil {
		m.cur.Release()
		m.cur = nil
	}
}

func (m *mappedReader) Schema() *arrow.Schema { return m.schema }

func (m *mappedReader) Next() bool {
	m.release()
	if m.err != nil || !m.in.Next() {
		return false
	}
	in := m.in.RecordBatch()
	out, err := m.fn(in)
	if err == nil && out != nil && out.NumRows() != in.NumRows() {
		err = fmt.Errorf("planarbeam: the compute function returned %d rows for %d: %w", out.NumRows(), in.NumRows(), dataset.ErrRowCount)
		out.Release()
	}
	if err != nil {
		m.err = err
		return false
	}
	m.cur = out
	return true
}

func (m *mappedReader) RecordBatch() arrow.RecordBatch { return m.cur }
func (m *mappedReader) Record() arrow.RecordBatch      { return m.cur }

func (m *mappedReader) Err() error {
	if m.err != nil {
		return m.err
	}
	return m.in.Err()
}
