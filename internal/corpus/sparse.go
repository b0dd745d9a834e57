package corpus

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// SparseCase is one column of the sparse corpus: data whose pages Lance 14
// (or planar's cost policy) stores with sparse structure, or that sits on a
// boundary of those rules.
type SparseCase struct {
	Name string
	Rows int
	// Build makes the column; nulls are at exact, seeded random positions.
	Build func(mem memory.Allocator, rows int, seed uint64) arrow.Array
}

// Sparse lists the sparse corpus at the given row counts: embeddings
// (rowsFSL rows; 768-d float32) at 0-100% null, strings and low-cardinality
// strings mostly null, a mostly-null struct, lists mostly null or empty
// (rows and rowsLong rows), and constant / all-null structured pages.
func Sparse(rows, rowsFSL, rowsLong int) []SparseCase {
	var out []SparseCase
	for _, pct := range []float64{0, 50, 50.02, 90, 99, 99.99, 100} {
		out = append(out, SparseCase{Name: strings.ReplaceAll(fmt.Sprintf("emb768_null%g", pct), ".", "_"), Rows: rowsFSL, Build: embeddings(768, pct)})
	}
	out = append(out,
		SparseCase{Name: "emb768_10distinct_null90", Rows: rowsFSL, Build: embeddingsDistinct(768, 90, 10)},
		SparseCase{Name: "str16_null99", Rows: rows, Build: strs(99, 16, 0)},
		SparseCase{Name: "str400_null99", Rows: rows, Build: strs(99, 400, 0)},
		SparseCase{Name: "lowcard5_short_null90", Rows: rows, Build: strs(90, 8, 5)},
		SparseCase{Name: "lowcard5_short_null99", Rows: rows, Build: strs(99, 8, 5)},
		SparseCase{Name: "lowcard100_1k_null90", Rows: rows, Build: strs(90, 1024, 100)},
		SparseCase{Name: "lowcard100_1k_null99", Rows: rows, Build: strs(99, 1024, 100)},
		SparseCase{Name: "struct_int_str_null99", Rows: rows, Build: structIntStr(99)},
		SparseCase{Name: "list_int32_nullempty99", Rows: rows, Build: listNullEmpty(99)},
		SparseCase{Name: "list_int32_nullempty99_long", Rows: rowsLong, Build: listNullEmpty(99)},
		SparseCase{Name: "int64_const42_null99", Rows: rows, Build: int64Const(99)},
		SparseCase{Name: "int64_null99", Rows: rows, Build: int64Random(99)},
		SparseCase{Name: "list_all_null", Rows: rows, Build: listNullEmpty(100)},
	)
	return out
}

// nullMask marks exactly round(rows·pct/100) rows null (at least one row
// valid when pct < 100), at seeded random positions.
func nullMask(rows int, pct float64, seed uint64) []bool {
	nulls := int(float64(rows)*pct/100 + 0.5)
	if pct < 100 && nulls >= rows && rows > 0 {
		nulls = rows - 1
	}
	r := rand.New(rand.NewPCG(seed, 0x5a5a))
	perm := r.Perm(rows)
	null := make([]bool, rows)
	for _, i := range perm[:nulls] {
		null[i] = true
	}
	return null
}

func embeddings(dim int, pct float64) func(memory.Allocator, int, uint64) arrow.Array {
	return func(mem memory.Allocator, rows int, seed uint64) arrow.Array {
		null := nullMask(rows, pct, seed)
		r := rand.New(rand.NewPCG(seed, 1))
		b := array.NewFixedSizeListBuilder(mem, int32(dim), arrow.PrimitiveTypes.Float32)
		defer b.Release()
		vb := b.ValueBuilder().(*array.Float32Builder)
		vec := make([]float32, dim)
		for i := 0; i < rows; i++ {
			if null[i] {
				b.AppendNull()
				continue
			}
			b.Append(true)
			for k := range vec {
				vec[k] = r.Float32()*2 - 1
			}
			vb.AppendValues(vec, nil)
		}
		return b.NewArray()
	}
}

func embeddingsDistinct(dim int, pct float64, distinct int) func(memory.Allocator, int, uint64) arrow.Array {
	return func(mem memory.Allocator, rows int, seed uint64) arrow.Array {
		null := nullMask(rows, pct, seed)
		r := rand.New(rand.NewPCG(seed, 2))
		pool := make([][]float32, distinct)
		for i := range pool {
			pool[i] = make([]float32, dim)
			for k := range pool[i] {
				pool[i][k] = r.Float32()
			}
		}
		b := array.NewFixedSizeListBuilder(mem, int32(dim), arrow.PrimitiveTypes.Float32)
		defer b.Release()
		vb := b.ValueBuilder().(*array.Float32Builder)
		for i := 0; i < rows; i++ {
			if null[i] {
				b.AppendNull()
				continue
			}
			b.Append(true)
			vb.AppendValues(pool[r.IntN(distinct)], nil)
		}
		return b.NewArray()
	}
}

// strs makes strings of about size bytes (exactly size when distinct > 0,
// drawn from that many values).
func strs(pct float64, size, distinct int) func(memory.Allocator, int, uint64) arrow.Array {
	return func(mem memory.Allocator, rows int, seed uint64) arrow.Array {
		null := nullMask(rows, pct, seed)
		r := rand.New(rand.NewPCG(seed, 3))
		word := func() string {
			n := size
			if distinct == 0 {
				n = size/2 + r.IntN(size+1)
			}
			buf := make([]byte, n)
			for k := range buf {
				buf[k] = "abcdefghijklmnopqrstuvwxyz0123456789/._-"[r.IntN(40)]
			}
			return string(buf)
		}
		var pool []string
		for i := 0; i < distinct; i++ {
			pool = append(pool, word())
		}
		b := array.NewStringBuilder(mem)
		defer b.Release()
		for i := 0; i < rows; i++ {
			switch {
			case null[i]:
				b.AppendNull()
			case distinct > 0:
				b.Append(pool[r.IntN(distinct)])
			default:
				b.Append(word())
			}
		}
		return b.NewArray()
	}
}

func structIntStr(pct float64) func(memory.Allocator, int, uint64) arrow.Array {
	return func(mem memory.Allocator, rows int, seed uint64) arrow.Array {
		null := nullMask(rows, pct, seed)
		r := rand.New(rand.NewPCG(seed, 4))
		st := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true})
		b := array.NewStructBuilder(mem, st)
		defer b.Release()
		ab, sb := b.FieldBuilder(0).(*array.Int32Builder), b.FieldBuilder(1).(*array.StringBuilder)
		for i := 0; i < rows; i++ {
			if null[i] {
				b.AppendNull()
				continue
			}
			b.Append(true)
			ab.Append(r.Int32N(1 << 20))
			sb.Append(fmt.Sprintf("name-%d-%x", i, r.Uint32()))
		}
		return b.NewArray()
	}
}

// listNullEmpty makes list<int32> rows, pct% of them null or empty (half
// each), the others with 1-5 items.
func listNullEmpty(pct float64) func(memory.Allocator, int, uint64) arrow.Array {
	return func(mem memory.Allocator, rows int, seed uint64) arrow.Array {
		null := nullMask(rows, pct, seed)
		r := rand.New(rand.NewPCG(seed, 5))
		b := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int32)
		defer b.Release()
		vb := b.ValueBuilder().(*array.Int32Builder)
		for i := 0; i < rows; i++ {
			switch {
			case null[i] && (pct == 100 || r.IntN(2) == 0):
				b.AppendNull()
			case null[i]:
				b.Append(true) // empty
			default:
				b.Append(true)
				for k := r.IntN(5) + 1; k > 0; k-- {
					vb.Append(r.Int32N(1000))
				}
			}
		}
		return b.NewArray()
	}
}

func int64Const(pct float64) func(memory.Allocator, int, uint64) arrow.Array {
	return func(mem memory.Allocator, rows int, seed uint64) arrow.Array {
		null := nullMask(rows, pct, seed)
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for i := 0; i < rows; i++ {
			if null[i] {
				b.AppendNull()
			} else {
				b.Append(42)
			}
		}
		return b.NewArray()
	}
}

func int64Random(pct float64) func(memory.Allocator, int, uint64) arrow.Array {
	return func(mem memory.Allocator, rows int, seed uint64) arrow.Array {
		null := nullMask(rows, pct, seed)
		r := rand.New(rand.NewPCG(seed, 6))
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for i := 0; i < rows; i++ {
			if null[i] {
				b.AppendNull()
			} else {
				b.Append(r.Int64())
			}
		}
		return b.NewArray()
	}
}

// Record makes a one-column record of the case.
func (c SparseCase) Record(mem memory.Allocator, seed uint64) arrow.RecordBatch {
	a := c.Build(mem, c.Rows, seed)
	defer a.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: c.Name, Type: a.DataType(), Nullable: true}}, nil)
	return array.NewRecordBatch(schema, []arrow.Array{a}, int64(a.Len()))
}
