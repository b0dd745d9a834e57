package dataset_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/dataset"
)

// A backfill run by a worker pool: one task a fragment, each reading its
// fragment's ids and writing a column computed from them, one commit.
func ExamplePlanBackfill() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	uri := filepath.Join(dir, "t.lance")

	ids := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64}}, nil)
	w, err := dataset.Create(ctx, uri, ids, dataset.WithMaxRowsPerFile(3))
	if err != nil {
		log.Fatal(err)
	}
	b := array.NewInt64Builder(memory.DefaultAllocator)
	b.AppendValues([]int64{1, 2, 3, 4, 5, 6, 7}, nil)
	col := b.NewArray()
	if err := w.Write(array.NewRecordBatch(ids, []arrow.Array{col}, 7)); err != nil {
		log.Fatal(err)
	}
	if _, err := w.Commit(ctx); err != nil {
		log.Fatal(err)
	}

	squares := arrow.NewSchema([]arrow.Field{{Name: "square", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	plan, err := dataset.PlanBackfill(ctx, uri, squares)
	if err != nil {
		log.Fatal(err)
	}
	results := make([]dataset.BackfillResult, len(plan.Tasks))
	errs := make([]error, len(plan.Tasks))
	var wg sync.WaitGroup
	for i, t := range plan.Tasks {
		wg.Go(func() {
			in, err := t.Read(ctx, 0, []string{"id"})
			if err != nil {
				errs[i] = err
				return
			}
			defer in.Release()
			var out []arrow.RecordBatch
			for in.Next() {
				sb := array.NewInt64Builder(memory.DefaultAllocator)
				for _, v := range in.RecordBatch().Column(0).(*array.Int64).Int64Values() {
					sb.Append(v * v)
				}
				a := sb.NewArray()
				out = append(out, array.NewRecordBatch(squares, []arrow.Array{a}, int64(a.Len())))
			}
			r, _ := array.NewRecordReader(squares, out)
			results[i], errs[i] = t.Write(ctx, r)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			log.Fatal(err)
		}
	}
	d, err := dataset.CommitBackfill(ctx, plan, results)
	if err != nil {
		log.Fatal(err)
	}
	all, err := d.ReadAll(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(plan.Tasks), "tasks; version", d.Version())
	fmt.Println(all.Column(1))
	// Output:
	// 3 tasks; version 2
	// [1 4 9 16 25 36 49]
}
