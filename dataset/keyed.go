package dataset

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A keyed backfill attaches values given for some rows, found by a key
// column ("here are vectors for these ids"): only the given rows travel,
// every other row gets nulls. Its pieces are those of the backfill
// (PlanBackfill, CommitBackfill) with BackfillTask.WriteAt in place of
// Write: a worker learns the live offsets of its fragment's keys from
// BackfillTask.Read and writes the given rows at them. AddColumnsByKey
// runs the pieces in one process.

var (
	// ErrDuplicateKey is wrapped when a keyed backfill is given two rows
	// for one key.
	ErrDuplicateKey = errors.New("planar/dataset: key given twice")
	// ErrUnknownKey is wrapped when a keyed backfill is given a key that no
	// live row of the dataset has.
	ErrUnknownKey = errors.New("planar/dataset: key not in the dataset")
)

// OffsetColumn is the name of the first column of the batches WriteAt
// takes: the live offset of each row within its fragment.
const OffsetColumn = "_offset"

// WriteAt writes the task's fragment's new data file from the given rows
// only: r's first column is OffsetColumn (int64, the row's position among
// the fragment's live rows, strictly increasing over all of r's batches,
// below LiveRows), the others the plan's new columns. Every live row not
// given, and every deleted row, is null, so the new columns must be
// nullable. The work is proportional to the rows given (runs of nulls cost
// their metadata, see the writer's null-run pages), not to the fragment's
// rows. Offsets out of order or range are ErrInvalidOption; nothing is
// committed, and on error the file is removed.
func (t *BackfillTask) WriteAt(ctx context.Context, r array.RecordReader, opts ...Option) (BackfillResult, error) {
	check := func(s *arrow.Schema) error {
		in := r.Schema()
		if in.NumFields() != s.NumFields()+1 || in.Field(0).Name != OffsetColumn || in.Field(0).Type.ID() != arrow.INT64 {
			return fmt.Errorf("WriteAt takes %s (int64) then the new columns, got %s: %w", OffsetColumn, in, ErrSchemaMismatch)
		}
		if err := compatible(s, arrow.NewSchema(in.Fields()[1:], nil)); err != nil {
			return err
		}
		for _, f := range s.Fields() {
			if !f.Nullable {
				return fmt.Errorf("column %q is not nullable, and the rows not given are null: %w", f.Name, ErrSchemaMismatch)
			}
		}
		return nil
	}
	return t.writeFile(ctx, opts, check, func(w *Writer, del deletions, live int64) error {
		return w.writeGiven(ctx, del, live, r)
	})
}

// writeGiven writes the rows r gives at their live offsets, nulls before
// and between them.
func (w *Writer) writeGiven(ctx context.Context, del deletions, live int64, r array.RecordReader) error {
	next := int64(0) // the smallest live offset the next row may have
	for r.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec := r.RecordBatch()
		offs, ok := rec.Column(0).(*array.Int64)
		if !ok || offs.NullN() > 0 {
			return fmt.Errorf("%s must be int64 without nulls: %w", OffsetColumn, ErrInvalidOption)
		}
		ov := offs.Int64Values()
		for i := 0; i < len(ov); {
			k := ov[i]
			if k < next || k >= live {
				return fmt.Errorf("offset %d: offsets must increase and stay below the fragment's %d live rows (after %d): %w", k, live, next-1, ErrInvalidOption)
			}
			// The run of rows at consecutive live offsets that are
			// consecutive physical rows too.
			p := del.physical(k)
			j := i + 1
			for j < len(ov) && ov[j] == ov[j-1]+1 && del.physical(ov[j]) == p+int64(j-i) {
				j++
			}
			if p > w.cur.rows {
				if err := w.writeNulls(p - w.cur.rows); err != nil {
					return err
				}
			}
			if err := w.writeRows(rec, int64(i), int64(j), 1); err != nil {
				return err
			}
			next = ov[j-1] + 1
			i = j
		}
	}
	return r.Err()
}

// AddColumnsByKey adds the columns of r's schema other than key to the
// latest version of the dataset at uri, from rows given for some keys: r's
// column key holds values of the dataset's column of that name (integers
// or strings), the others the new columns' values for the rows with that
// key. Rows whose key is not given get nulls, so the new columns must be
// nullable; every live row whose key matches gets the given values (a key
// the dataset holds twice gets them twice, as pylance's merge joins). A key
// given twice is ErrDuplicateKey, a key no live row has ErrUnknownKey; both
// are found before anything is committed, and the new files are removed.
//
// The given rows are held in memory (they are the small part); the
// dataset's key column is read once, a fragment at a time, and the
// fragments' files are written side by side, each in time proportional to
// its given rows. The commit is AddColumns's Merge, under its rules.
func AddColumnsByKey(ctx context.Context, uri, key string, r array.RecordReader, opts ...Option) (*Dataset, error) {
	in := r.Schema()
	ki := in.FieldIndices(key)
	if len(ki) != 1 {
		return nil, fmt.Errorf("add columns by key to %s: the given rows have no single column %q: %w", uri, key, ErrInvalidOption)
	}
	newFields := slices.Delete(slices.Clone(in.Fields()), ki[0], ki[0]+1)
	newSchema := arrow.NewSchema(newFields, nil)
	plan, err := PlanBackfill(ctx, uri, newSchema, opts...)
	if err != nil {
		return nil, fmt.Errorf("add columns by key to %s: %w", uri, err)
	}
	given, err := loadGiven(r, ki[0])
	if err != nil {
		return nil, fmt.Errorf("add columns by key to %s: %w", uri, err)
	}
	defer given.release()
	var results []BackfillResult
	fail := func(err error) (*Dataset, error) {
		_ = AbortBackfill(context.Background(), plan, results, opts...)
		return nil, fmt.Errorf("add columns by key to %s: %w", uri, err)
	}
	// Each fragment's keys are read and its file written on its own, side
	// by side.
	results, err = runTasks(ctx, plan, func(ctx context.Context, i int) (BackfillResult, error) {
		t := &plan.Tasks[i]
		rows, err := given.match(ctx, t, key, opts)
		if err != nil {
			return BackfillResult{}, err
		}
		defer rows.Release()
		return t.WriteAt(ctx, rows, opts...)
	})
	if err != nil {
		return fail(err)
	}
	if n := given.unmatched(); n >= 0 {
		return fail(fmt.Errorf("key %s: %w", given.keyString(n), ErrUnknownKey))
	}
	d, err := CommitBackfill(ctx, plan, results, opts...)
	if err != nil {
		_ = AbortBackfill(context.Background(), plan, results, opts...)
		return nil, err
	}
	return d, nil
}

// givenRows is a keyed backfill's input: the given rows, indexed by key.
type givenRows struct {
	schema *arrow.Schema // OffsetColumn, then the new columns
	rec    arrow.RecordBatch
	ints   map[int64]int32 // integer keys: row of rec
	strs   map[string]int32
	keys   arrow.Array
	key    int           // the key's column in rec
	seen   []atomic.Bool // rows matched by some live row
}

// loadGiven reads every row of r into one batch and indexes its key column.
func loadGiven(r array.RecordReader, key int) (*givenRows, error) {
	var recs []arrow.RecordBatch
	defer func() {
		for _, rec := range recs {
			rec.Release()
		}
	}()
	for r.Next() {
		rec := r.RecordBatch()
		rec.Retain()
		recs = append(recs, rec)
	}
	if err := r.Err(); err != nil {
		return nil, fmt.Errorf("reading the given rows: %w", err)
	}
	in := r.Schema()
	all, err := concatRecords(in, recs)
	if err != nil {
		return nil, err
	}
	g := &givenRows{rec: all, keys: all.Column(key), key: key, seen: make([]atomic.Bool, all.NumRows())}
	fields := []arrow.Field{{Name: OffsetColumn, Type: arrow.PrimitiveTypes.Int64}}
	for i, f := range in.Fields() {
		if i != key {
			fields = append(fields, f)
		}
	}
	g.schema = arrow.NewSchema(fields, nil)
	if g.keys.NullN() > 0 {
		g.release()
		return nil, fmt.Errorf("key column %q holds nulls: %w", in.Field(key).Name, ErrInvalidOption)
	}
	n := int(all.NumRows())
	switch k := g.keys.(type) {
	case *array.String, *array.LargeString, *array.Binary, *array.LargeBinary:
		g.strs = make(map[string]int32, n)
		for i := 0; i < n; i++ {
			s := keyString(k, i)
			if _, dup := g.strs[s]; dup {
				g.release()
				return nil, fmt.Errorf("key %q: %w", s, ErrDuplicateKey)
			}
			g.strs[s] = int32(i)
		}
	default:
		g.ints = make(map[int64]int32, n)
		for i := 0; i < n; i++ {
			v, ok := intKey(g.keys, i)
			if !ok {
				g.release()
				return nil, fmt.Errorf("key column %q is %s: keys are integers or strings: %w", in.Field(key).Name, g.keys.DataType(), ErrInvalidOption)
			}
			if _, dup := g.ints[v]; dup {
				g.release()
				return nil, fmt.Errorf("key %d: %w", v, ErrDuplicateKey)
			}
			g.ints[v] = int32(i)
		}
	}
	return g, nil
}

// match reads task t's fragment's key column and returns the given rows of
// its live rows, with their live offsets, in WriteAt's form.
func (g *givenRows) match(ctx context.Context, t *BackfillTask, key string, opts []Option) (array.RecordReader, error) {
	kr, err := t.Read(ctx, 0, []string{key}, opts...)
	if err != nil {
		return nil, err
	}
	defer kr.Release()
	var offs []int64
	var rows []int64
	at := int64(0)
	for kr.Next() {
		keys := kr.RecordBatch().Column(0)
		if !sameKeyKind(keys.DataType(), g.keys.DataType()) {
			return nil, fmt.Errorf("the dataset's %q is %s, the given keys %s: %w", key, keys.DataType(), g.keys.DataType(), ErrSchemaMismatch)
		}
		for i := 0; i < keys.Len(); i++ {
			if keys.IsNull(i) {
				continue
			}
			var row int32
			var ok bool
			if g.strs != nil {
				row, ok = g.strs[keyString(keys, i)]
			} else {
				v, _ := intKey(keys, i)
				row, ok = g.ints[v]
			}
			if ok {
				g.seen[row].Store(true)
				offs = append(offs, at+int64(i))
				rows = append(rows, int64(row))
			}
		}
		at += int64(keys.Len())
	}
	if err := kr.Err(); err != nil {
		return nil, err
	}
	rec, err := g.take(ctx, offs, rows)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	return array.NewRecordReader(g.schema, []arrow.RecordBatch{rec})
}

// take returns the given rows rows (in that order) under g.schema, with offs
// as their OffsetColumn.
func (g *givenRows) take(ctx context.Context, offs, rows []int64) (arrow.RecordBatch, error) {
	idx := array.NewInt64Builder(memory.DefaultAllocator)
	defer idx.Release()
	idx.AppendValues(rows, nil)
	ia := idx.NewArray()
	defer ia.Release()
	ob := array.NewInt64Builder(memory.DefaultAllocator)
	defer ob.Release()
	ob.AppendValues(offs, nil)
	cols := []arrow.Array{ob.NewArray()}
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	for i, c := range g.rec.Columns() {
		if i == g.key {
			continue
		}
		tc, err := compute.TakeArray(ctx, c, ia)
		if err != nil {
			return nil, fmt.Errorf("gathering the given rows: %w", err)
		}
		cols = append(cols, tc)
	}
	return array.NewRecordBatch(g.schema, cols, int64(len(rows))), nil
}

// unmatched is a given row that no live row matched, or -1.
func (g *givenRows) unmatched() int {
	for i := range g.seen {
		if !g.seen[i].Load() {
			return i
		}
	}
	return -1
}

func (g *givenRows) keyString(row int) string {
	if g.strs != nil {
		return fmt.Sprintf("%q", keyString(g.keys, row))
	}
	v, _ := intKey(g.keys, row)
	return fmt.Sprint(v)
}

func (g *givenRows) release() {
	if g.rec != nil {
		g.rec.Release()
		g.rec = nil
	}
}

// KeyOf is row i of a key column of a keyed backfill, as the given keys
// are compared: int64 for integer columns, string for string and binary
// columns. Other types are ErrInvalidOption.
func KeyOf(a arrow.Array, i int) (any, error) {
	if v, ok := intKey(a, i); ok {
		return v, nil
	}
	switch a.DataType().ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
		return keyString(a, i), nil
	}
	return nil, fmt.Errorf("a %s key column: keys are integers or strings: %w", a.DataType(), ErrInvalidOption)
}

// keyString is row i of a string or binary key column.
func keyString(a arrow.Array, i int) string {
	switch k := a.(type) {
	case *array.String:
		return k.Value(i)
	case *array.LargeString:
		return k.Value(i)
	case *array.Binary:
		return string(k.Value(i))
	case *array.LargeBinary:
		return string(k.Value(i))
	}
	return ""
}

// intKey is row i of an integer key column; false for other types. A
// uint64 beyond int64 wraps, as it does in every use of it here (equality).
func intKey(a arrow.Array, i int) (int64, bool) {
	switch k := a.(type) {
	case *array.Int64:
		return k.Value(i), true
	case *array.Int32:
		return int64(k.Value(i)), true
	case *array.Int16:
		return int64(k.Value(i)), true
	case *array.Int8:
		return int64(k.Value(i)), true
	case *array.Uint64:
		return int64(k.Value(i)), true
	case *array.Uint32:
		return int64(k.Value(i)), true
	case *array.Uint16:
		return int64(k.Value(i)), true
	case *array.Uint8:
		return int64(k.Value(i)), true
	}
	return 0, false
}

// sameKeyKind reports whether keys of types a and b compare: both integer
// types of one signedness, or both strings or binary.
func sameKeyKind(a, b arrow.DataType) bool {
	kind := func(t arrow.DataType) int {
		switch t.ID() {
		case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
			return 1
		case arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
			return 2
		case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY:
			return 3
		}
		return 0
	}
	return kind(a) != 0 && kind(a) == kind(b)
}
