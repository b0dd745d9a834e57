package writer_test

import (
	"fmt"
	"math"
	"sort"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/writer"
)

// TestEstimateAccuracy compares, for every chunked page of the codec corpus
// and the flat corpus under both policies, the selector's estimate of the
// winning codec's value bytes with the bytes its chunks hold. The target is
// within 10% for the chosen candidate; the test requires it for 90% of the
// pages and reports the distribution.
func TestEstimateAccuracy(t *testing.T) {
	mem := memory.NewGoAllocator()
	var recs []arrow.RecordBatch
	for _, c := range corpus.CodecCases(20000) {
		recs = append(recs, c.Record(mem))
	}
	recs = append(recs, corpus.Record(mem, corpus.Flat(20000), 3))
	var errs []float64
	worst := ""
	for _, pol := range []selector.Policy{selector.PolicyCost, selector.PolicyLance} {
		for _, rec := range recs {
			_, report := writeReport(t, rec.Schema(), []arrow.RecordBatch{rec}, writer.WithPolicy(pol))
			for _, p := range report {
				if p.EstimatedValueBytes == 0 || p.ValueBytes < 256 {
					continue // not chunked, or too small to matter
				}
				e := math.Abs(float64(p.EstimatedValueBytes-p.ValueBytes)) / float64(p.ValueBytes)
				if e > 0.1 && testing.Verbose() {
					t.Logf("%s %v: %s est %d actual %d", p.Column, pol, p.Candidates[0].Codec, p.EstimatedValueBytes, p.ValueBytes)
				}
				if len(errs) == 0 || e > maxOf(errs) {
					worst = fmt.Sprintf("%s (%v): %s estimated %d, actual %d", p.Column, pol, p.Candidates[0].Codec, p.EstimatedValueBytes, p.ValueBytes)
				}
				errs = append(errs, e)
			}
		}
	}
	sort.Float64s(errs)
	within := sort.SearchFloat64s(errs, 0.1000001)
	q := func(f float64) float64 { return 100 * errs[int(f*float64(len(errs)-1))] }
	t.Logf("%d chunked pages: %d (%.1f%%) within 10%%; error median %.2f%%, p90 %.2f%%, max %.1f%% (%s)",
		len(errs), within, 100*float64(within)/float64(len(errs)), q(0.5), q(0.9), q(1), worst)
	if len(errs) < 100 {
		t.Fatalf("only %d pages measured", len(errs))
	}
	if float64(within) < 0.9*float64(len(errs)) {
		t.Errorf("only %d of %d estimates within 10%%", within, len(errs))
	}
}

func maxOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}
