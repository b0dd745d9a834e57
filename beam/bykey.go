package planarbeam

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/planarlance/planar/dataset"
)

func init() {
	register.DoFn5x1[context.Context, int, string, func(*beam.X) bool, func(beam.X, Position), error](&locateFn{})
	register.DoFn4x1[beam.X, []byte, func(*beam.X, *Position) bool, func(int, Entry), error](&routeFn{})
	register.Iter2[beam.X, Position]()
	register.DoFn5x1[context.Context, int, func(*string) bool, func(*Entry) bool, func(string), error](&writeFn{})
	register.Emitter2[beam.X, Position]()
	register.Emitter2[int, Entry]()
	register.Iter1[Position]()
	register.Iter1[Entry]()
	register.Iter1[string]()
	register.Iter1[beam.X]()
	beam.RegisterType(reflect.TypeOf((*locateFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*routeFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*writeFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Position)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*Entry)(nil)).Elem())
}

// Position is where a given key's row lies: the plan's task (by index) and
// the row's live offset in that task's fragment.
type Position struct {
	Task   int
	Offset int64
}

// Entry is one given row on its way to its fragment's writer.
type Entry struct {
	Offset int64
	Vector []byte // float32s, little-endian (VectorBytes)
}

// VectorBytes is v as ByKey takes it: its float32s, little-endian, back to
// back. Beam's Go SDK encodes a []float32 one value at a time (a 768-d
// vector costs 768 coder calls at every stage it crosses); bytes cross as
// one copy.
func VectorBytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// ByKey attaches the vectors of given, a PCollection of KV<K, []byte> with
// K int64 or string and each vector's float32s little-endian
// (VectorBytes), to the rows of the plan's dataset whose column key holds
// K; every other row's new column is null. The plan must add exactly one
// column, a nullable fixed_size_list<float32, d> whose size d every vector
// has. A key given twice (dataset.ErrDuplicateKey) or found in no
// live row (dataset.ErrUnknownKey) fails the pipeline before the commit.
//
// What moves between stages: the given keys (a side input of every
// fragment's locate step), one Position per matched row (a side input of
// the routing step), and each given vector once, to its fragment's writer;
// never the rows without a vector. Every worker holds the given keys and
// their positions in memory: about 32 bytes a given row.
func ByKey(s beam.Scope, plan *dataset.BackfillPlan, key string, given beam.PCollection, o Options) (beam.PCollection, error) {
	s = s.Scope("planar.ByKey")
	planJSON, tasks, err := taskStrings(plan)
	if err != nil {
		return beam.PCollection{}, err
	}
	if err := vectorColumn(plan); err != nil {
		return beam.PCollection{}, err
	}
	kvs := make([]indexedTask, len(tasks))
	for i, t := range tasks {
		kvs[i] = indexedTask{i, t}
	}
	byTask := beam.ParDo(s, taskKV, beam.CreateList(s, kvs))
	keys := beam.DropValue(s, given)
	positions := beam.ParDo(s, &locateFn{Key: key, Opts: o}, beam.Reshuffle(s, byTask), beam.SideInput{Input: keys})
	entries := beam.ParDo(s, &routeFn{}, given, beam.SideInput{Input: positions})
	results := beam.ParDo(s, &writeFn{Opts: o}, beam.CoGroupByKey(s, byTask, entries))
	return commit(s, planJSON, results, o), nil
}

type indexedTask struct {
	Index int
	Task  string
}

func taskKV(t indexedTask) (int, string) { return t.Index, t.Task }

func init() {
	beam.RegisterType(reflect.TypeOf((*indexedTask)(nil)).Elem())
	register.Function1x2(taskKV)
}

// vectorColumn checks that the plan adds one nullable fixed-size list of
// float32.
func vectorColumn(plan *dataset.BackfillPlan) error {
	for _, t := range plan.Tasks {
		s, err := t.Schema()
		if err != nil {
			return err
		}
		if _, err := vectorDim(s); err != nil {
			return err
		}
		break
	}
	return nil
}

func vectorDim(s *arrow.Schema) (int, error) {
	if s.NumFields() == 1 && s.Field(0).Nullable {
		if t, ok := s.Field(0).Type.(*arrow.FixedSizeListType); ok && t.Elem().ID() == arrow.FLOAT32 {
			return int(t.Len()), nil
		}
	}
	return 0, fmt.Errorf("planarbeam: ByKey adds one nullable fixed_size_list<float32, d> column, the plan adds %s: %w", s, dataset.ErrSchemaMismatch)
}

// locateFn finds, in one fragment, the live rows whose key is given.
type locateFn struct {
	Key  string
	Opts Options
}

func (f *locateFn) ProcessElement(ctx context.Context, task int, taskJSON string, keys func(*beam.X) bool, emit func(beam.X, Position)) error {
	var t dataset.BackfillTask
	if err := json.Unmarshal([]byte(taskJSON), &t); err != nil {
		return fmt.Errorf("planarbeam: task: %w", err)
	}
	want := map[any]bool{}
	var k beam.X
	for keys(&k) {
		want[k] = true
	}
	r, err := t.Read(ctx, 0, []string{f.Key}, f.Opts.dataset()...)
	if err != nil {
		return err
	}
	defer r.Release()
	at := int64(0)
	for r.Next() {
		col := r.RecordBatch().Column(0)
		for i := 0; i < col.Len(); i++ {
			if col.IsNull(i) {
				continue
			}
			v, err := dataset.KeyOf(col, i)
			if err != nil {
				return fmt.Errorf("fragment %d: column %q: %w", t.FragmentID, f.Key, err)
			}
			if want[v] {
				emit(v, Position{Task: task, Offset: at + int64(i)})
			}
		}
		at += int64(col.Len())
	}
	return r.Err()
}

// routeFn sends each given vector to the fragment of the row(s) with its
// key. A key given twice reaches one row twice (writeFn refuses it). The
// positions (a side input, the same for every element in the global
// window) are read into a map once per DoFn instance: a lookup a key
// through the runner's state API costs a round trip each.
type routeFn struct {
	at map[any][]Position
}

func (f *routeFn) ProcessElement(key beam.X, vec []byte, positions func(*beam.X, *Position) bool, emit func(int, Entry)) error {
	if f.at == nil {
		f.at = map[any][]Position{}
		var k beam.X
		var p Position
		for positions(&k, &p) {
			f.at[k] = append(f.at[k], p)
		}
	}
	ps := f.at[key]
	if len(ps) == 0 {
		return fmt.Errorf("planarbeam: key %v: %w", key, dataset.ErrUnknownKey)
	}
	for _, p := range ps {
		emit(p.Task, Entry{Offset: p.Offset, Vector: vec})
	}
	return nil
}

// writeFn writes one fragment's new file from its given rows.
type writeFn struct {
	Opts Options
}

func (f *writeFn) ProcessElement(ctx context.Context, _ int, tasks func(*string) bool, entries func(*Entry) bool, emit func(string)) error {
	var taskJSON string
	if !tasks(&taskJSON) {
		return fmt.Errorf("planarbeam: rows for a task the plan does not have: %w", dataset.ErrInvalidOption)
	}
	var t dataset.BackfillTask
	if err := json.Unmarshal([]byte(taskJSON), &t); err != nil {
		return fmt.Errorf("planarbeam: task: %w", err)
	}
	var es []Entry
	var e Entry
	for entries(&e) {
		es = append(es, e)
	}
	slices.SortFunc(es, func(a, b Entry) int { return cmp.Compare(a.Offset, b.Offset) })
	s, err := t.Schema()
	if err != nil {
		return err
	}
	rec, err := givenBatch(s, es)
	if err != nil {
		return fmt.Errorf("fragment %d: %w", t.FragmentID, err)
	}
	r, err := array.NewRecordReader(rec.Schema(), []arrow.RecordBatch{rec})
	rec.Release()
	if err != nil {
		return err
	}
	defer r.Release()
	return emitResult(t.WriteAt(ctx, r, f.Opts.dataset()...))(emit)
}

// givenBatch is entries (sorted by offset) as WriteAt's batch: the offsets,
// then the vectors.
func givenBatch(s *arrow.Schema, es []Entry) (arrow.RecordBatch, error) {
	dim, err := vectorDim(s)
	if err != nil {
		return nil, err
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: dataset.OffsetColumn, Type: arrow.PrimitiveTypes.Int64}, s.Field(0)}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	ob := b.Field(0).(*array.Int64Builder)
	lb := b.Field(1).(*array.FixedSizeListBuilder)
	vb := lb.ValueBuilder().(*array.Float32Builder)
	ob.Reserve(len(es))
	vb.Reserve(len(es) * dim)
	for i, e := range es {
		if i > 0 && e.Offset == es[i-1].Offset {
			return nil, fmt.Errorf("two vectors for live row %d (a key given twice): %w", e.Offset, dataset.ErrDuplicateKey)
		}
		if len(e.Vector) != 4*dim {
			return nil, fmt.Errorf("a vector of %d bytes for a %d-d float32 column: %w", len(e.Vector), dim, dataset.ErrSchemaMismatch)
		}
		ob.Append(e.Offset)
		lb.Append(true)
		for k := 0; k < dim; k++ {
			vb.UnsafeAppend(math.Float32frombits(binary.LittleEndian.Uint32(e.Vector[4*k:])))
		}
	}
	return b.NewRecordBatch(), nil
}
