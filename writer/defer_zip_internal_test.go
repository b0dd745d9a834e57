package writer

import (
	"bytes"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/selector"
)

// TestDeferredZipSameBytes writes pages whose dense zipped trial a sparse
// trial follows (half-null embeddings over several pages, and the random
// corpus cases in format 2.3 under the cost policy) with the dense records
// deferred until kept and written at once: the same bytes. Both ways of
// the deferral are taken: trials dropped for sparse, and trials kept
// (their records then written after the sparse trial ran).
func TestDeferredZipSameBytes(t *testing.T) {
	var deferred, kept atomic.Int64
	testHookDeferred = func(k bool) {
		if k {
			kept.Add(1)
		} else {
			deferred.Add(1)
		}
	}
	defer func() { testHookDeferred = nil }()
	mem := memory.NewGoAllocator()
	type input struct {
		name      string
		schema    *arrow.Schema
		batches   []arrow.RecordBatch
		pageBytes int64
	}
	var ins []input
	// Embeddings, 40% and 60% null, cut into pages of about 1 MiB.
	for _, null := range []float64{0.4, 0.6} {
		r := rand.New(rand.NewPCG(7, uint64(null*100)))
		b := array.NewFixedSizeListBuilder(mem, 256, arrow.PrimitiveTypes.Float32)
		vb := b.ValueBuilder().(*array.Float32Builder)
		for range 3000 {
			if r.Float64() < null {
				b.AppendNull()
				continue
			}
			b.Append(true)
			for range 256 {
				vb.Append(r.Float32())
			}
		}
		a := b.NewArray()
		b.Release()
		schema := arrow.NewSchema([]arrow.Field{{Name: "emb", Type: a.DataType(), Nullable: true}}, nil)
		ins = append(ins, input{"embeddings", schema, []arrow.RecordBatch{array.NewRecordBatch(schema, []arrow.Array{a}, int64(a.Len()))}, 1 << 20})
		a.Release()
	}
	for seed := uint64(1000); seed < 1030; seed++ { // (1006 keeps a deferred trial)
		rc := corpus.RandomCase(mem, seed)
		ins = append(ins, input{rc.String(), rc.Schema, rc.Batches, rc.PageBytes})
	}
	write := func(in input, on bool) ([]byte, error) {
		deferZipTrials = on
		defer func() { deferZipTrials = true }()
		opts := []Option{WithFormat(Format2_3), WithPolicy(selector.PolicyCost)}
		if in.pageBytes > 0 {
			opts = append(opts, WithMaxPageBytes(in.pageBytes))
		}
		var buf bytes.Buffer
		w, err := New(&buf, in.schema, opts...)
		if err != nil {
			return nil, err
		}
		for _, b := range in.batches {
			if err := w.WriteBatch(b); err != nil {
				return nil, err
			}
		}
		return buf.Bytes(), w.Close()
	}
	for _, in := range ins {
		got, err := write(in, true)
		n := deferred.Load()
		want, wantErr := write(in, false)
		if deferred.Load() != n {
			t.Fatalf("%s: a trial was deferred with deferral off", in.name)
		}
		for _, b := range in.batches {
			b.Release()
		}
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%s: deferred %v, not deferred %v", in.name, err, wantErr)
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Fatalf("%s: the file differs from the one written without deferral", in.name)
		}
	}
	if deferred.Load() == 0 || kept.Load() == 0 {
		t.Fatalf("%d trials deferred, %d kept: the test needs both", deferred.Load(), kept.Load())
	}
	t.Logf("%d trials deferred, %d kept", deferred.Load(), kept.Load())
}
