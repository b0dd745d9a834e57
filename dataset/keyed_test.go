package dataset

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// givenVectors is a reader of 4-d vectors for the given keys (vector of key
// k: k, k+0.25, ...), under key column name of type kt, in batches of two.
func givenVectors(name string, keys []any) array.RecordReader {
	kt := arrow.DataType(arrow.PrimitiveTypes.Int64)
	if _, ok := keys[0].(string); ok {
		kt = arrow.BinaryTypes.String
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "vec", Type: arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: name, Type: kt}}, nil)
	var recs []arrow.RecordBatch
	for at := 0; at < len(keys); at += 2 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		vb := b.Field(0).(*array.FixedSizeListBuilder)
		fb := vb.ValueBuilder().(*array.Float32Builder)
		for _, k := range keys[at:min(at+2, len(keys))] {
			var base float32
			switch k := k.(type) {
			case int64:
				b.Field(1).(*array.Int64Builder).Append(k)
				base = float32(k)
			case string:
				b.Field(1).(*array.StringBuilder).Append(k)
				fmt.Sscanf(k, "row-%g", &base)
			}
			vb.Append(true)
			for j := 0; j < 4; j++ {
				fb.Append(base + float32(j)/4)
			}
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	r, err := array.NewRecordReader(schema, recs)
	if err != nil {
		panic(err)
	}
	for _, rec := range recs {
		rec.Release()
	}
	return r
}

// checkKeyed reads the dataset and checks that exactly the rows whose id is
// in want have the vector of their id.
func checkKeyed(t *testing.T, d *Dataset, want map[int64]bool) {
	t.Helper()
	got, err := d.ReadAll(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer got.Release()
	ids := got.Column(0).(*array.Int64)
	vec := got.Column(got.Schema().FieldIndices("vec")[0]).(*array.FixedSizeList)
	vals := vec.ListValues().(*array.Float32)
	n := 0
	for i := 0; i < ids.Len(); i++ {
		id := ids.Value(i)
		if !want[id] {
			if vec.IsValid(i) {
				t.Fatalf("row %d (id %d) has a vector, none given", i, id)
			}
			continue
		}
		n++
		if vec.IsNull(i) {
			t.Fatalf("row %d (id %d) has no vector", i, id)
		}
		for j := 0; j < 4; j++ {
			if v := vals.Value(i*4 + j); v != float32(id)+float32(j)/4 {
				t.Fatalf("row %d (id %d) value %d is %v", i, id, j, v)
			}
		}
	}
	if n != len(want) {
		t.Fatalf("%d rows matched, %d given", n, len(want))
	}
}

// TestAddColumnsByKey: vectors given for a few ids, out of order and across
// fragment edges, land on those rows only; by integer and by string key.
func TestAddColumnsByKey(t *testing.T) {
	ctx := context.Background()
	ids := []int64{999, 5, 299, 300, 301, 42, 600, 0}
	t.Run("int64 key", func(t *testing.T) {
		uri := backfillTable(t, 1000, 300)
		keys := make([]any, len(ids))
		want := map[int64]bool{}
		for i, id := range ids {
			keys[i], want[id] = id, true
		}
		r := givenVectors("id", keys)
		defer r.Release()
		d, err := AddColumnsByKey(ctx, uri, "id", r)
		if err != nil {
			t.Fatal(err)
		}
		if d.Version() != 2 || d.NumFragments() != 4 {
			t.Fatalf("version %d, %d fragments", d.Version(), d.NumFragments())
		}
		checkKeyed(t, d, want)
	})
	t.Run("string key", func(t *testing.T) {
		uri := backfillTable(t, 1000, 300)
		keys := []any{"row-7", "row-301", "row-998"}
		r := givenVectors("name", keys)
		defer r.Release()
		d, err := AddColumnsByKey(ctx, uri, "name", r)
		if err != nil {
			t.Fatal(err)
		}
		checkKeyed(t, d, map[int64]bool{7: true, 301: true, 998: true})
	})
}

// TestAddColumnsByKeyRefusals: duplicate and unknown keys, a non-nullable
// column and a missing key column commit nothing and leave no file.
func TestAddColumnsByKeyRefusals(t *testing.T) {
	ctx := context.Background()
	uri := backfillTable(t, 1000, 300)
	before := dataFiles(t, uri)
	notNull := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int32}, {Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, notNull)
	b.Field(0).(*array.Int32Builder).Append(1)
	b.Field(1).(*array.Int64Builder).Append(3)
	rec := b.NewRecordBatch()
	b.Release()
	nn, _ := array.NewRecordReader(notNull, []arrow.RecordBatch{rec})
	rec.Release()
	cases := []struct {
		name string
		key  string
		r    array.RecordReader
		want error
	}{
		{"duplicate", "id", givenVectors("id", []any{int64(4), int64(9), int64(4)}), ErrDuplicateKey},
		{"unknown", "id", givenVectors("id", []any{int64(4), int64(1000)}), ErrUnknownKey},
		{"string key for an int column", "id", givenVectors("id", []any{"row-1"}), ErrSchemaMismatch},
		{"no key column", "key", givenVectors("id", []any{int64(4)}), ErrInvalidOption},
		{"not nullable", "id", nn, ErrSchemaMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer c.r.Release()
			_, err := AddColumnsByKey(ctx, uri, c.key, c.r)
			requireRefused(t, uri, before, err, c.want)
		})
	}
}

// TestWriteAtRefusesDisorder: offsets must increase and stay in range.
func TestWriteAtRefusesDisorder(t *testing.T) {
	ctx := context.Background()
	uri := backfillTable(t, 100, 100)
	vs := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil)
	plan, err := PlanBackfill(ctx, uri, vs)
	if err != nil {
		t.Fatal(err)
	}
	in := arrow.NewSchema([]arrow.Field{{Name: OffsetColumn, Type: arrow.PrimitiveTypes.Int64}, vs.Field(0)}, nil)
	for _, offs := range [][]int64{{3, 2}, {5, 5}, {100}, {-1}} {
		b := array.NewRecordBuilder(memory.DefaultAllocator, in)
		for _, o := range offs {
			b.Field(0).(*array.Int64Builder).Append(o)
			b.Field(1).(*array.Int32Builder).Append(int32(o))
		}
		rec := b.NewRecordBatch()
		b.Release()
		r, _ := array.NewRecordReader(in, []arrow.RecordBatch{rec})
		rec.Release()
		if _, err := plan.Tasks[0].WriteAt(ctx, r); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("offsets %v: %v, want ErrInvalidOption", offs, err)
		}
		r.Release()
	}
}
