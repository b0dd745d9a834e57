package writer_test

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/writer"
)

// BenchmarkClasses writes each class of corpus.PerfClasses under both
// policies; MB/s are Arrow input bytes. Compare cores with -cpu 1,2:
//
//	go test ./writer -run '^$' -bench Classes -benchtime 3x -cpu 1,2
func BenchmarkClasses(b *testing.B) {
	mem := memory.NewGoAllocator()
	for _, pc := range corpus.PerfClasses(1) {
		b.Run(pc.Name, func(b *testing.B) {
			rec := pc.Record(mem, 1)
			defer rec.Release()
			in := corpus.ArrowBytes(rec)
			for _, pol := range []selector.Policy{selector.PolicyCost, selector.PolicyLance} {
				b.Run(pol.String(), func(b *testing.B) { benchPlanar(b, rec, in, writer.WithPolicy(pol)) })
			}
		})
	}
}
