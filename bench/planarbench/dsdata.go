package main

import (
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
)

// The dataset suite's table: a row id, a short text, a score and optionally
// an embedding, the shape of a typical LanceDB table.
const (
	dsEmbeddingDim = 128
	dsStrMin       = 20 // bytes of the text column, uniform in [min, max]
	dsStrMax       = 40
	dsNewColumn    = "extra" // the column AddColumns adds (float64)
)

func dsSchema(embedding bool) *arrow.Schema {
	fs := []arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "text", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "score", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}
	if embedding {
		fs = append(fs, arrow.Field{Name: "embedding", Type: arrow.FixedSizeListOf(dsEmbeddingDim, arrow.PrimitiveTypes.Float32), Nullable: true})
	}
	return arrow.NewSchema(fs, nil)
}

// dsGen makes the rows of the suite: row i has id i, and every other value
// is drawn from a generator seeded by the seed and the batch's first row, so
// a batch is the same whoever makes it.
type dsGen struct {
	mem    memory.Allocator
	schema *arrow.Schema
	seed   uint64
	text   []byte // reused value buffer of the text column
}

func newDSGen(seed uint64, embedding bool) *dsGen {
	return &dsGen{mem: memory.NewGoAllocator(), schema: dsSchema(embedding), seed: seed}
}

// batch returns rows [first, first+n).
func (g *dsGen) batch(first int64, n int) arrow.RecordBatch {
	rng := rand.New(rand.NewPCG(g.seed, uint64(first)))
	ids := make([]int64, n)
	offs := make([]int32, n+1)
	scores := make([]float64, n)
	g.text = g.text[:0]
	for i := range n {
		ids[i] = first + int64(i)
		scores[i] = rng.Float64() * 100
		l := dsStrMin + rng.IntN(dsStrMax-dsStrMin+1)
		for l > 0 {
			r := rng.Uint64()
			for k := 0; k < 8 && l > 0; k, l = k+1, l-1 {
				g.text = append(g.text, 'a'+byte(r%26))
				r >>= 8
			}
		}
		offs[i+1] = int32(len(g.text))
	}
	cols := []arrow.Array{
		fromData(array.NewData(arrow.PrimitiveTypes.Int64, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(ids))}, nil, 0, 0)),
		fromData(array.NewData(arrow.BinaryTypes.String, n, []*memory.Buffer{nil,
			memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offs)), memory.NewBufferBytes(append([]byte(nil), g.text...))}, nil, 0, 0)),
		fromData(array.NewData(arrow.PrimitiveTypes.Float64, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(scores))}, nil, 0, 0)),
	}
	if len(g.schema.Fields()) > 3 {
		vals := make([]float32, n*dsEmbeddingDim)
		for i := range vals {
			vals[i] = rng.Float32()
		}
		child := array.NewData(arrow.PrimitiveTypes.Float32, len(vals), []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float32Traits.CastToBytes(vals))}, nil, 0, 0)
		cols = append(cols, fromData(array.NewData(g.schema.Field(3).Type, n, []*memory.Buffer{nil}, []arrow.ArrayData{child}, 0, 0)))
		child.Release()
	}
	rec := array.NewRecordBatch(g.schema, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return rec
}

// newColumn is the column AddColumns adds for rows [first, first+n): a
// float64 drawn from the seed and the row.
func newColumn(seed uint64, first int64, n int) arrow.Array {
	rng := rand.New(rand.NewPCG(seed^0x9e3779b97f4a7c15, uint64(first)))
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = rng.NormFloat64()
	}
	return fromData(array.NewData(arrow.PrimitiveTypes.Float64, n, []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(vals))}, nil, 0, 0))
}

var newColumnField = arrow.Field{Name: dsNewColumn, Type: arrow.PrimitiveTypes.Float64, Nullable: true}

// writeDSIPC generates rows rows into an Arrow IPC file at path, in batches
// of batchRows, and returns their Arrow bytes.
func writeDSIPC(path string, seed uint64, rows int64, embedding bool) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	g := newDSGen(seed, embedding)
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(g.schema))
	if err != nil {
		return 0, err
	}
	var bytes int64
	for lo := int64(0); lo < rows; lo += batchRows {
		rec := g.batch(lo, int(min(batchRows, rows-lo)))
		bytes += corpus.ArrowBytes(rec)
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
	}
	if err := w.Close(); err != nil {
		return 0, err
	}
	return bytes, f.Close()
}

// fromData makes the array of d and drops the caller's reference to d.
func fromData(d *array.Data) arrow.Array {
	a := array.MakeFromData(d)
	d.Release()
	return a
}
