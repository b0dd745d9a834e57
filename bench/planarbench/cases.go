package main

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Row kinds of a generated column: a value, a null row, an empty list.
const (
	rowValue uint8 = iota
	rowNull
	rowEmpty
)

// columnGen generates one column class. build makes one batch whose row i
// has kind kinds[i]; it draws values from rng.
type columnGen interface {
	Type() arrow.DataType
	build(mem memory.Allocator, rng *rand.Rand, kinds []uint8) arrow.Array
}

// benchCase is one column of the suite: a class, a row count and the exact
// share of null (and, for lists, empty) rows, placed at random.
type benchCase struct {
	Name  string
	Rows  int
	Null  float64 // fraction of rows that are null (rounded to a count)
	Empty float64 // fraction of rows that are empty lists
	Big   bool    // only with -big (slow)
	Col   columnGen
}

// suites lists the cases of each suite. A suite is a list so that the table
// keeps its order; later suites add classes here.
var suites = map[string]func() []benchCase{
	"sparse": sparseSuite,
}

func sparseSuite() []benchCase {
	var cs []benchCase
	fsl := fslF32{dim: 768}
	for _, pct := range []float64{0, 50, 50.02, 90, 99, 99.99, 100} {
		cs = append(cs, benchCase{Name: fmt.Sprintf("fsl<f32,768> %s%% null", pctString(pct)), Rows: 20000, Null: pct / 100, Col: fsl})
	}
	cs = append(cs, benchCase{Name: "fsl<f32,768> 99.99% null, 1M rows", Rows: 1_000_000, Null: 0.9999, Big: true, Col: fsl})
	cs = append(cs,
		benchCase{Name: "string ~16 B 99% null", Rows: 20000, Null: 0.99, Col: randString{min: 12, max: 20}},
		benchCase{Name: "string ~400 B 99% null", Rows: 20000, Null: 0.99, Col: randString{min: 350, max: 450}},
	)
	short := lowCard{values: distinct(5, 6, 1)}
	long := lowCard{values: distinct(100, 1024, 2)}
	for _, pct := range []float64{90, 99} {
		cs = append(cs, benchCase{Name: fmt.Sprintf("string 5 distinct short %s%% null", pctString(pct)), Rows: 20000, Null: pct / 100, Col: short})
	}
	for _, pct := range []float64{90, 99} {
		cs = append(cs, benchCase{Name: fmt.Sprintf("string 100 distinct 1 KiB %s%% null", pctString(pct)), Rows: 20000, Null: pct / 100, Col: long})
	}
	cs = append(cs, benchCase{Name: "struct<a:int32,b:string> 99% null", Rows: 20000, Null: 0.99, Col: structAB{}})
	for _, rows := range []int{20000, 100000} {
		cs = append(cs, benchCase{Name: fmt.Sprintf("list<int32> 99%% null or empty, %dk rows", rows/1000), Rows: rows, Null: 0.495, Empty: 0.495, Col: listI32{min: 1, max: 5}})
	}
	return cs
}

func pctString(p float64) string {
	s := fmt.Sprintf("%.2f", p)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// slug is a file-name form of a case name.
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9'
		switch {
		case ok:
			b.WriteRune(r)
			dash = false
		case r == '.' && !dash:
			b.WriteRune('p')
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimRight(b.String(), "-")
}

// kinds draws the row kinds: exactly round(rows·Null) null rows and
// round(rows·Empty) empty rows at random positions.
func (c benchCase) kinds(rng *rand.Rand, rows int) []uint8 {
	nulls := int(float64(rows)*c.Null + 0.5)
	empties := min(int(float64(rows)*c.Empty+0.5), rows-nulls)
	k := make([]uint8, rows)
	perm := rng.Perm(rows)
	for _, i := range perm[:nulls] {
		k[i] = rowNull
	}
	for _, i := range perm[nulls : nulls+empties] {
		k[i] = rowEmpty
	}
	return k
}

// fslF32 is a nullable fixed_size_list<float32, dim>: random vectors, the
// child buffer zero under null rows and without a validity bitmap (how
// vectors arrive from numpy or a vector store).
type fslF32 struct{ dim int }

func (g fslF32) Type() arrow.DataType {
	return arrow.FixedSizeListOf(int32(g.dim), arrow.PrimitiveTypes.Float32)
}

func (g fslF32) build(mem memory.Allocator, rng *rand.Rand, kinds []uint8) arrow.Array {
	n := len(kinds)
	vals := make([]float32, n*g.dim)
	validity := make([]byte, bitutil.BytesForBits(int64(n)))
	nulls := 0
	for i, k := range kinds {
		if k != rowValue {
			nulls++
			continue
		}
		bitutil.SetBit(validity, i)
		for j := range vals[i*g.dim : (i+1)*g.dim] {
			vals[i*g.dim+j] = float32(rng.NormFloat64())
		}
	}
	child := array.NewData(arrow.PrimitiveTypes.Float32, n*g.dim,
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float32Traits.CastToBytes(vals))}, nil, 0, 0)
	defer child.Release()
	d := array.NewData(g.Type(), n, []*memory.Buffer{memory.NewBufferBytes(validity)}, []arrow.ArrayData{child}, nulls, 0)
	defer d.Release()
	return array.MakeFromData(d)
}

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// randString is a nullable string of random alphanumerics, min to max bytes.
type randString struct{ min, max int }

func (randString) Type() arrow.DataType { return arrow.BinaryTypes.String }

func (g randString) build(mem memory.Allocator, rng *rand.Rand, kinds []uint8) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	buf := make([]byte, g.max)
	for _, k := range kinds {
		if k != rowValue {
			b.AppendNull()
			continue
		}
		s := buf[:g.min+rng.IntN(g.max-g.min+1)]
		for i := range s {
			s[i] = alnum[rng.IntN(len(alnum))]
		}
		b.BinaryBuilder.Append(s)
	}
	return b.NewArray()
}

// lowCard is a nullable string drawn from a few distinct values.
type lowCard struct{ values []string }

func (lowCard) Type() arrow.DataType { return arrow.BinaryTypes.String }

func (g lowCard) build(mem memory.Allocator, rng *rand.Rand, kinds []uint8) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	for _, k := range kinds {
		if k != rowValue {
			b.AppendNull()
			continue
		}
		b.Append(g.values[rng.IntN(len(g.values))])
	}
	return b.NewArray()
}

// distinct returns n different random alphanumeric strings of size bytes.
func distinct(n, size int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, 0x10ca4d))
	seen := map[string]bool{}
	out := make([]string, 0, n)
	buf := make([]byte, size)
	for len(out) < n {
		for i := range buf {
			buf[i] = alnum[rng.IntN(len(alnum))]
		}
		if s := string(buf); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// structAB is a nullable struct<a: int32, b: string>; a null row has null
// children.
type structAB struct{}

func (structAB) Type() arrow.DataType {
	return arrow.StructOf(
		arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true})
}

func (g structAB) build(mem memory.Allocator, rng *rand.Rand, kinds []uint8) arrow.Array {
	b := array.NewStructBuilder(mem, g.Type().(*arrow.StructType))
	defer b.Release()
	a := b.FieldBuilder(0).(*array.Int32Builder)
	s := b.FieldBuilder(1).(*array.StringBuilder)
	buf := make([]byte, 24)
	for _, k := range kinds {
		if k != rowValue {
			b.AppendNull()
			continue
		}
		b.Append(true)
		a.Append(rng.Int32N(1_000_000))
		v := buf[:8+rng.IntN(17)]
		for i := range v {
			v[i] = alnum[rng.IntN(len(alnum))]
		}
		s.BinaryBuilder.Append(v)
	}
	return b.NewArray()
}

// listI32 is a nullable list<int32>: null rows, empty rows, else min to max
// random items.
type listI32 struct{ min, max int }

func (listI32) Type() arrow.DataType { return arrow.ListOf(arrow.PrimitiveTypes.Int32) }

func (g listI32) build(mem memory.Allocator, rng *rand.Rand, kinds []uint8) arrow.Array {
	b := array.NewListBuilder(mem, arrow.PrimitiveTypes.Int32)
	defer b.Release()
	v := b.ValueBuilder().(*array.Int32Builder)
	for _, k := range kinds {
		switch k {
		case rowNull:
			b.AppendNull()
		case rowEmpty:
			b.AppendEmptyValue()
		default:
			b.Append(true)
			for range g.min + rng.IntN(g.max-g.min+1) {
				v.Append(rng.Int32N(10_000))
			}
		}
	}
	return b.NewArray()
}
