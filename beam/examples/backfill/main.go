// Command backfill runs an embedding backfill of a Lance dataset on Apache
// Beam (the Prism runner, in this process) and the same backfill through
// planar's engine-neutral API in a plain worker pool, and prints what each
// cost: wall time, CPU time, bytes written.
//
//	cd beam && go run ./examples/backfill [-rows 1000000] [-fragments 8] [-valid 0.01] [-dim 768] [-kind compute|bykey] [-out DIR]
//
// compute: each fragment's vectors are computed from its ids (a stand-in
// for a model), one task a fragment. bykey: vectors are given for the ids
// that have one, and only those rows travel. Both commit one Merge (version
// 2) that pylance and LanceDB 0.40 read. The same pipeline runs on any
// portable runner (Dataflow, Flink, Spark) whose workers reach the
// dataset's storage.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"

	planarbeam "github.com/planarlance/planar/beam"
	"github.com/planarlance/planar/dataset"
)

// job is the backfill's shape; the workers read it from the environment
// of this one process (Prism runs them here).
var job = struct {
	dim   int
	valid float64
}{768, 0.01}

func init() {
	planarbeam.RegisterCompute("embed", embed)
	register.Function1x2(givenKV)
	register.Emitter2[int64, []byte]()
}

// hasVector says whether row id gets a vector: a fixed hash, so every
// worker and both runs agree.
func hasVector(id int64) bool {
	return rand.New(rand.NewPCG(uint64(id), 7)).Float64() < job.valid
}

func vectorOf(id int64) []float32 {
	v := make([]float32, job.dim)
	r := rand.New(rand.NewPCG(uint64(id), 8))
	for j := range v {
		v[j] = r.Float32()*2 - 1
	}
	return v
}

// embed computes a batch's vectors from its ids (zeros under null rows,
// as a model's output buffer would hold them).
func embed(in arrow.RecordBatch) (arrow.RecordBatch, error) {
	ids := in.Column(0).(*array.Int64).Int64Values()
	n := len(ids)
	vals := make([]float32, n*job.dim)
	valid := make([]byte, (n+7)/8)
	nulls := 0
	for i, id := range ids {
		if !hasVector(id) {
			nulls++
			continue
		}
		valid[i/8] |= 1 << (i % 8)
		copy(vals[i*job.dim:], vectorOf(id))
	}
	vd := array.NewData(arrow.PrimitiveTypes.Float32, n*job.dim,
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float32Traits.CastToBytes(vals))}, nil, 0, 0)
	defer vd.Release()
	ed := array.NewData(embSchema().Field(0).Type, n, []*memory.Buffer{memory.NewBufferBytes(valid)}, []arrow.ArrayData{vd}, nulls, 0)
	defer ed.Release()
	a := array.MakeFromData(ed)
	defer a.Release()
	return array.NewRecordBatch(embSchema(), []arrow.Array{a}, int64(n)), nil
}

func embSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{{Name: "emb", Type: arrow.FixedSizeListOf(int32(job.dim), arrow.PrimitiveTypes.Float32), Nullable: true}}, nil)
}

// givenKV is the given row of id: its vector.
func givenKV(id int64) (int64, []byte) { return id, planarbeam.VectorBytes(vectorOf(id)) }

func main() {
	rows := flag.Int64("rows", 1_000_000, "rows of the table")
	frags := flag.Int64("fragments", 8, "fragments of the table")
	flag.Float64Var(&job.valid, "valid", 0.01, "fraction of rows that get a vector")
	flag.IntVar(&job.dim, "dim", 768, "vector dimension")
	kind := flag.String("kind", "compute", "compute (vectors from each fragment's ids) or bykey (vectors given for some ids)")
	out := flag.String("out", "", "directory for the two tables (default: a new temporary directory)")
	prof := flag.String("cpuprofile", "", "write a CPU profile of the Beam run to this file")
	flag.Parse()
	beam.Init()
	if *kind != "compute" && *kind != "bykey" {
		log.Fatalf("-kind %q: compute or bykey", *kind)
	}
	dir := *out
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "planar-beam-"); err != nil {
			log.Fatal(err)
		}
	}
	ctx := context.Background()
	a, b := filepath.Join(dir, "pool.lance"), filepath.Join(dir, "beam.lance")
	for _, uri := range []string{a, b} {
		if err := makeTable(ctx, uri, *rows, *rows / *frags); err != nil {
			log.Fatal(err)
		}
	}
	var ids []int64
	for id := int64(0); id < *rows; id++ {
		if hasVector(id) {
			ids = append(ids, id)
		}
	}
	fmt.Printf("%d rows in %d fragments, %d (%.2f%%) get a %d-d vector; %s backfill; tables in %s\n\n",
		*rows, *frags, len(ids), 100*float64(len(ids))/float64(*rows), job.dim, *kind, dir)

	pool := measure(func() error { return inProcess(ctx, a, *kind, ids) })
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
	}
	pipe := measure(func() error { return onBeam(ctx, b, *kind, ids) })
	pprof.StopCPUProfile()
	report("worker pool (the dataset API)", a, pool)
	report("Beam on Prism (planarbeam)", b, pipe)
	fmt.Printf("\nBeam ÷ pool: wall %.2f×, CPU %.2f×\n", pipe.wall.Seconds()/pool.wall.Seconds(), pipe.cpu.Seconds()/pool.cpu.Seconds())
	if *kind == "bykey" {
		row := int64(8 + 4*job.dim)
		moved := int64(len(ids)) * (row + 8 + 16 + 8) // the vector once, its key, a Position, the key as a side input
		fmt.Printf("bytes between stages: about %d (given rows once, positions, keys) against %d for a shuffle of every row: %.2f%%\n",
			moved, *rows*row, 100*float64(moved)/float64(*rows*row))
	}
}

type cost struct {
	wall, cpu time.Duration
	err       error
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs f from a heap returned to the OS, so that both runs start
// alike (a null vector's zeros cost nothing in fresh pages and a memclr in
// reused ones).
func measure(f func() error) cost {
	debug.FreeOSMemory()
	c0, t0 := cpuTime(), time.Now()
	err := f()
	return cost{time.Since(t0), cpuTime() - c0, err}
}

func report(name, uri string, c cost) {
	if c.err != nil {
		log.Fatalf("%s: %v", name, c.err)
	}
	d, err := dataset.Open(context.Background(), uri)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%-32s wall %6.2f s, CPU %6.2f s; version %d, %d rows, columns %v\n", name+":", c.wall.Seconds(), c.cpu.Seconds(),
		d.Version(), d.CountRows(), d.Schema().Fields()[len(d.Schema().Fields())-1].Name)
}

// makeTable writes rows ids with a text column, perFrag rows a fragment.
func makeTable(ctx context.Context, uri string, rows, perFrag int64) error {
	_ = os.RemoveAll(uri)
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "text", Type: arrow.BinaryTypes.String}}, nil)
	w, err := dataset.Create(ctx, uri, schema, dataset.WithMaxRowsPerFile(perFrag))
	if err != nil {
		return err
	}
	for at := int64(0); at < rows; at += 64 << 10 {
		n := min(64<<10, rows-at)
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for i := at; i < at+n; i++ {
			b.Field(0).(*array.Int64Builder).Append(i)
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("document %d", i))
		}
		rec := b.NewRecordBatch()
		b.Release()
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

// inProcess is the backfill through the engine-neutral API: plan, one task
// a goroutine (each reads its fragment and writes its file), one commit.
// A Kubernetes job array does the same with one task a pod: the plan as
// JSON in a ConfigMap, each pod's result JSON back to the committer.
func inProcess(ctx context.Context, uri, kind string, ids []int64) error {
	if kind == "bykey" {
		_, err := dataset.AddColumnsByKey(ctx, uri, "id", givenReader(ids))
		return err
	}
	plan, err := dataset.PlanBackfill(ctx, uri, embSchema())
	if err != nil {
		return err
	}
	results := make([]dataset.BackfillResult, len(plan.Tasks))
	errs := make([]error, len(plan.Tasks))
	var wg sync.WaitGroup
	slots := make(chan struct{}, runtime.GOMAXPROCS(0)) // a task a core
	for i := range plan.Tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			t := &plan.Tasks[i]
			in, err := t.Read(ctx, 0, []string{"id"})
			if err != nil {
				errs[i] = err
				return
			}
			defer in.Release()
			results[i], errs[i] = t.Write(ctx, &computed{in: in})
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	_, err = dataset.CommitBackfill(ctx, plan, results)
	return err
}

// computed applies embed to a reader's batches.
type computed struct {
	in  *dataset.RecordReader
	cur arrow.RecordBatch
	err error
}

func (c *computed) Schema() *arrow.Schema { return embSchema() }
func (c *computed) Next() bool {
	if c.cur != nil {
		c.cur.Release()
		c.cur = nil
	}
	if c.err != nil || !c.in.Next() {
		return false
	}
	c.cur, c.err = embed(c.in.RecordBatch())
	return c.err == nil
}
func (c *computed) RecordBatch() arrow.RecordBatch { return c.cur }
func (c *computed) Record() arrow.RecordBatch      { return c.cur }
func (c *computed) Err() error {
	if c.err != nil {
		return c.err
	}
	return c.in.Err()
}
func (c *computed) Retain()  {}
func (c *computed) Release() {}

// givenReader is the given rows as the record reader AddColumnsByKey takes.
func givenReader(ids []int64) array.RecordReader {
	schema := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, embSchema().Field(0)}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	lb := b.Field(1).(*array.FixedSizeListBuilder)
	vb := lb.ValueBuilder().(*array.Float32Builder)
	for _, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		lb.Append(true)
		vb.AppendValues(vectorOf(id), nil)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	r, _ := array.NewRecordReader(schema, []arrow.RecordBatch{rec})
	return r
}

// onBeam is the same backfill as a Beam pipeline on Prism, in-process.
func onBeam(ctx context.Context, uri, kind string, ids []int64) error {
	plan, err := dataset.PlanBackfill(ctx, uri, embSchema())
	if err != nil {
		return err
	}
	p, s := beam.NewPipelineWithRoot()
	if kind == "bykey" {
		// The given rows are made by the workers from their ids (a real
		// job reads them from files), not sent inside the pipeline.
		_, err = planarbeam.ByKey(s, plan, "id", beam.ParDo(s, givenKV, beam.CreateList(s, ids)), planarbeam.Options{})
	} else {
		_, err = planarbeam.Compute(s, plan, []string{"id"}, "embed", planarbeam.Options{})
	}
	if err != nil {
		return err
	}
	_, err = prism.Execute(ctx, p)
	return err
}
