package main

import (
	"math/rand/v2"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// dim is the embedding width.
const dim = 768

// baseSchema is the job's table: an id and a nullable embedding.
func baseSchema(embMeta map[string]string) *arrow.Schema {
	emb := arrow.Field{Name: "embedding", Type: arrow.FixedSizeListOf(dim, arrow.PrimitiveTypes.Float32), Nullable: true}
	if len(embMeta) > 0 {
		emb.Metadata = arrow.MetadataFrom(embMeta)
	}
	return arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}, emb}, nil)
}

// batchGen produces the job's rows batch by batch. Batch k depends only on
// (seed, k), so any batch can be produced again to check a file against it
// without holding the whole table.
type batchGen struct {
	rows, batch int
	valid       float64
	seed        uint64
}

func (g batchGen) numBatches() int { return (g.rows + g.batch - 1) / g.batch }

// span returns the first row and the row count of batch k.
func (g batchGen) span(k int) (int, int) {
	start := k * g.batch
	return start, min(g.batch, g.rows-start)
}

// gen builds batch k under schema (which carries the field metadata of the
// variant being written). The embedding's values are one float32 buffer of
// n·dim values, zero under null rows (as a vector store or numpy hands them
// over); the returned slice lists the rows (file row numbers) that have a
// vector.
func (g batchGen) gen(schema *arrow.Schema, k int) (arrow.RecordBatch, []int64) {
	start, n := g.span(k)
	rng := rand.New(rand.NewPCG(g.seed, uint64(k)))
	ids := make([]int64, n)
	vals := make([]float32, n*dim)
	validity := make([]byte, bitutil.BytesForBits(int64(n)))
	var validRows []int64
	for i := range n {
		ids[i] = int64(start + i)
		if rng.Float64() >= g.valid {
			continue
		}
		bitutil.SetBit(validity, i)
		validRows = append(validRows, int64(start+i))
		v := vals[i*dim : (i+1)*dim]
		for j := range v {
			v[j] = rng.Float32()*2 - 1
		}
	}
	return embeddingBatch(schema, ids, vals, validity, n-len(validRows)), validRows
}

// given returns the rows of batch k that have a vector (file row numbers,
// which are also their ids) and their vectors back to back: the values gen
// puts in those rows, drawn in the same order, without building the null
// rows.
func (g batchGen) given(k int) ([]int64, []float32) {
	start, n := g.span(k)
	rng := rand.New(rand.NewPCG(g.seed, uint64(k)))
	var ids []int64
	var vals []float32
	for i := range n {
		if rng.Float64() >= g.valid {
			continue
		}
		ids = append(ids, int64(start+i))
		for range dim {
			vals = append(vals, rng.Float32()*2-1)
		}
	}
	return ids, vals
}

// vectorsOf is a batch of schema (id, embedding) from ids and their vectors.
func vectorsOf(schema *arrow.Schema, ids []int64, vals []float32) arrow.RecordBatch {
	return embeddingBatch(schema, ids, vals, nil, 0)
}

// embeddingBatch is a batch of schema (id, embedding) over ids and the
// vectors' values back to back (zeros under null rows), with the given
// validity bitmap (nil: all valid) and null count.
func embeddingBatch(schema *arrow.Schema, ids []int64, vals []float32, validity []byte, nulls int) arrow.RecordBatch {
	n := len(ids)
	var vb *memory.Buffer
	if validity != nil {
		vb = memory.NewBufferBytes(validity)
	}
	idData := array.NewData(arrow.PrimitiveTypes.Int64, n,
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int64Traits.CastToBytes(ids))}, nil, 0, 0)
	valData := array.NewData(arrow.PrimitiveTypes.Float32, n*dim,
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float32Traits.CastToBytes(vals))}, nil, 0, 0)
	embData := array.NewData(schema.Field(1).Type, n, []*memory.Buffer{vb}, []arrow.ArrayData{valData}, nulls, 0)
	idArr, embArr := array.MakeFromData(idData), array.MakeFromData(embData)
	idData.Release()
	valData.Release()
	embData.Release()
	defer idArr.Release()
	defer embArr.Release()
	return array.NewRecordBatch(schema, []arrow.Array{idArr, embArr}, int64(n))
}

// arrowBytes is the size of a batch's Arrow buffers: the input the writer
// is given.
func arrowBytes(rec arrow.RecordBatch) int64 {
	var n int64
	var walk func(d arrow.ArrayData)
	walk = func(d arrow.ArrayData) {
		for _, b := range d.Buffers() {
			if b != nil {
				n += int64(b.Len())
			}
		}
		for _, c := range d.Children() {
			walk(c)
		}
	}
	for _, c := range rec.Columns() {
		walk(c.Data())
	}
	return n
}

// words are the vocabulary of the text column.
var words = [16]string{"amber", "brisk", "cedar", "delta", "ember", "fjord", "granite", "harbor",
	"indigo", "juniper", "kestrel", "lumen", "meadow", "nimbus", "orchid", "prairie"}

// appendSentence appends row i's text, "row 7: cedar amber fjord lumen
// delta.": five words picked by a multiplicative hash of i. The pylance
// script (backfill_pylance.py) makes the same sentences.
func appendSentence(b []byte, i int64) []byte {
	h := uint32(uint64(i) * 2654435761)
	b = append(b, "row "...)
	b = strconv.AppendInt(b, i, 10)
	b = append(b, ':')
	for k := range 5 {
		b = append(b, ' ')
		b = append(b, words[(h>>(4*k))&15]...)
	}
	return append(b, '.')
}

// textArray is the text column of rows start..start+n-1, built straight
// into one offsets and one data buffer.
func textArray(start, n int) arrow.Array {
	offsets := make([]int32, n+1)
	data := make([]byte, 0, n*48)
	for i := range n {
		data = appendSentence(data, int64(start+i))
		offsets[i+1] = int32(len(data))
	}
	d := array.NewData(arrow.BinaryTypes.String, n,
		[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offsets)), memory.NewBufferBytes(data)}, nil, 0, 0)
	defer d.Release()
	return array.MakeFromData(d)
}
