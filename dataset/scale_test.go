package dataset

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/proto/tablepb"
	"github.com/planarlance/planar/writer"
)

var (
	scaleFragments = flag.Int("scale.fragments", 100_000, "BenchmarkBackfillScale: fragments of the synthetic table")
	scaleRows      = flag.Int64("scale.rows", 1_000_000, "BenchmarkBackfillScale: rows a fragment")
)

// BenchmarkBackfillScale plans and commits a backfill of a 768-d vector
// column over a synthetic table of -scale.fragments fragments of
// -scale.rows rows each (10^5 × 10^6 = 10^11 rows by default) without
// writing the table's data: version 1 is a manifest whose fragments name
// data files that do not exist (planning reads only the manifest), and
// every task's result names one real file of -scale.rows null vectors
// (the commit checks each result's file). It reports the plan and commit
// times, the plan's, a task's and a result's JSON sizes, the manifests'
// sizes and the heap's peak in each.
//
//	go test ./dataset -run '^$' -bench BackfillScale -benchtime 1x
func BenchmarkBackfillScale(b *testing.B) {
	frags, rows := *scaleFragments, *scaleRows
	ctx := context.Background()
	for range b.N {
		b.StopTimer()
		uri := filepath.Join(b.TempDir(), "t.lance")
		w, err := Create(ctx, uri, arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := w.Commit(ctx); err != nil {
			b.Fatal(err)
		}
		// Version 1 gets frags fragments of rows rows each.
		_, root, _ := locate(uri, nil)
		mf, err := readManifestVersion(ctx, root, 1)
		if err != nil {
			b.Fatal(err)
		}
		m := mf.m
		for i := range frags {
			m.Fragments = append(m.Fragments, &tablepb.DataFragment{Id: uint64(i), PhysicalRows: uint64(rows),
				Files: []*tablepb.DataFile{{Path: fmt.Sprintf("base-%d.lance", i), Fields: []int32{0}, ColumnIndices: []int32{0},
					FileMajorVersion: 2, FileMinorVersion: 2, FileSizeBytes: 8 * uint64(rows)}}})
		}
		mx := uint32(frags)
		m.MaxFragmentId = &mx
		enc, err := encodeManifestFile(m, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		mpath := filepath.Join(uri, versionsDir, manifestName(1))
		if err := os.WriteFile(mpath, enc, 0o644); err != nil {
			b.Fatal(err)
		}
		emb := arrow.NewSchema([]arrow.Field{{Name: "emb", Type: arrow.FixedSizeListOf(768, arrow.PrimitiveTypes.Float32), Nullable: true}}, nil)
		runtime.GC()
		planPeak := watchHeap()
		b.StartTimer()
		t0 := time.Now()
		plan, err := PlanBackfill(ctx, uri, emb)
		if err != nil {
			b.Fatal(err)
		}
		planTime := time.Since(t0)
		b.StopTimer()
		planHeap := planPeak()
		pj, _ := json.Marshal(plan)
		tj, _ := json.Marshal(plan.Tasks[0])
		// One real file of rows null vectors, the result of every task.
		name := dataFileName()
		_ = os.MkdirAll(filepath.Join(uri, dataDir), 0o755)
		f, err := os.Create(filepath.Join(uri, dataDir, name))
		if err != nil {
			b.Fatal(err)
		}
		s, _ := plan.Tasks[0].Schema()
		fw, err := writer.New(f, s)
		if err != nil {
			b.Fatal(err)
		}
		nulls := array.MakeArrayOfNull(memory.DefaultAllocator, s.Field(0).Type, 1<<16)
		for at := int64(0); at < rows; at += 1 << 16 {
			n := min(1<<16, rows-at)
			part := array.NewSlice(nulls, 0, n)
			rec := array.NewRecordBatch(s, []arrow.Array{part}, n)
			if err := fw.WriteBatch(rec); err != nil {
				b.Fatal(err)
			}
			rec.Release()
			part.Release()
		}
		if err := fw.Close(); err != nil {
			b.Fatal(err)
		}
		st, _ := f.Stat()
		f.Close()
		_, ids, _ := plan.Tasks[0].schema()
		results := make([]BackfillResult, frags)
		for i := range results {
			results[i] = BackfillResult{FragmentID: uint64(i), File: DataFile{Path: name, Fields: ids, ColumnIndices: []int32{0},
				FileMajorVersion: 2, FileMinorVersion: 2, FileSizeBytes: uint64(st.Size())}}
		}
		rj, _ := json.Marshal(results[0])
		nulls.Release()
		runtime.GC()
		commitPeak := watchHeap()
		b.StartTimer()
		t1 := time.Now()
		d, err := CommitBackfill(ctx, plan, results)
		if err != nil {
			b.Fatal(err)
		}
		commitTime := time.Since(t1)
		b.StopTimer()
		commitHeap := commitPeak()
		after, _ := os.ReadDir(filepath.Join(uri, versionsDir))
		var m2 int64
		for _, e := range after {
			if v, ok := parseManifestName(e.Name()); ok && v == d.Version() {
				info, _ := e.Info()
				m2 = info.Size()
			}
		}
		b.ReportMetric(planTime.Seconds(), "plan-s")
		b.ReportMetric(commitTime.Seconds(), "commit-s")
		b.ReportMetric(float64(len(pj))/1e6, "plan-MB")
		b.ReportMetric(float64(len(tj)), "task-B")
		b.ReportMetric(float64(len(rj)), "result-B")
		b.ReportMetric(float64(len(enc))/1e6, "manifest1-MB")
		b.ReportMetric(float64(m2)/1e6, "manifest2-MB")
		b.ReportMetric(float64(planHeap)/(1<<20), "plan-heap-MiB")
		b.ReportMetric(float64(commitHeap)/(1<<20), "commit-heap-MiB")
		b.Logf("%d fragments of %d rows: plan %v (%.1f MB of JSON, a task %d B), commit %v (a result %d B), manifests %.1f → %.1f MB",
			frags, rows, planTime, float64(len(pj))/1e6, len(tj), commitTime, len(rj), float64(len(enc))/1e6, float64(m2)/1e6)
	}
}

// watchHeap samples the heap in use every 5 ms until the returned function
// is called, which returns the largest sample.
func watchHeap() func() uint64 {
	var top atomic.Uint64
	done := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > top.Load() {
				top.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() uint64 { close(done); return top.Load() }
}
