package main

import (
	"io"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/planarlance/planar/reader"
)

// TestJob runs the job on a small table and checks that both planar files
// read back equal to the rows generated: ids, which embeddings are null, and
// every vector.
func TestJob(t *testing.T) {
	for _, tc := range []struct {
		name  string
		gen   batchGen
		valid int // at least this many rows with a vector
	}{
		{"sparse", batchGen{rows: 20000, batch: 4096, valid: 0.0005, seed: 1}, 1},
		{"one percent", batchGen{rows: 20000, batch: 6000, valid: 0.01, seed: 2}, 100},
		{"all valid", batchGen{rows: 3000, batch: 1024, valid: 1, seed: 3}, 3000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config{gen: tc.gen, out: t.TempDir()}
			res, err := run(cfg, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if res.valid < tc.valid || res.valid == res.rows && tc.gen.valid < 1 {
				t.Fatalf("%d rows with a vector, want at least %d", res.valid, tc.valid)
			}
			if len(res.files) != 2 {
				t.Fatalf("%d planar files, want 2", len(res.files))
			}
			for _, f := range res.files {
				checkFile(t, f, cfg.gen)
				if f.validTaken != min(10, res.valid) || f.nullTaken != min(10, res.rows-res.valid) {
					t.Errorf("%s: took %d valid and %d null rows", f.name, f.validTaken, f.nullTaken)
				}
				if f.nullTaken > 0 && f.takeNull.Requests == 0 || f.validTaken > 0 && f.takeValid.Requests == 0 {
					t.Errorf("%s: a take read nothing: %+v %+v", f.name, f.takeValid, f.takeNull)
				}
				if len(f.cells) != 2 {
					t.Errorf("%s: cells %q, want one entry per column", f.name, f.cells)
				}
			}
			// With every row valid, Parquet can store the column: the job
			// must then read it back and find no null rows.
			p := res.parquet
			if tc.gen.valid == 1 && (p.writeErr != nil || p.readErr != nil || p.nullsLost || p.rows != int64(res.rows)) {
				t.Errorf("pqarrow on a column without nulls: %+v", p)
			}
		})
	}
}

// checkFile compares a file with the generator's batches, one at a time.
func checkFile(t *testing.T, fr fileResult, g batchGen) {
	t.Helper()
	f, err := reader.OpenPath(fr.path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.NumRows() != int64(g.rows) {
		t.Fatalf("%s: %d rows, want %d", fr.name, f.NumRows(), g.rows)
	}
	for k := range g.numBatches() {
		want, _ := g.gen(fr.schema, k)
		start, n := g.span(k)
		got, err := f.ReadRange(int64(start), int64(n))
		if err != nil {
			t.Fatalf("%s: rows [%d, +%d): %v", fr.name, start, n, err)
		}
		wantIDs := want.Column(0).(*array.Int64).Int64Values()
		gotIDs := got.Column(0).(*array.Int64).Int64Values()
		if !slices.Equal(gotIDs, wantIDs) {
			t.Fatalf("%s: ids of batch %d differ", fr.name, k)
		}
		we, ge := want.Column(1).(*array.FixedSizeList), got.Column(1).(*array.FixedSizeList)
		wv := we.ListValues().(*array.Float32).Float32Values()
		gv := ge.ListValues().(*array.Float32)
		for i := range n {
			if ge.IsNull(i) != we.IsNull(i) {
				t.Fatalf("%s: row %d null %v, want %v", fr.name, start+i, ge.IsNull(i), we.IsNull(i))
			}
			if we.IsNull(i) {
				continue
			}
			lo, hi := ge.ValueOffsets(i)
			if hi-lo != dim {
				t.Fatalf("%s: row %d has %d values", fr.name, start+i, hi-lo)
			}
			for j := range dim {
				if gv.IsNull(int(lo)+j) || gv.Value(int(lo)+j) != wv[i*dim+j] {
					t.Fatalf("%s: row %d value %d: got %v, want %v", fr.name, start+i, j, gv.Value(int(lo)+j), wv[i*dim+j])
				}
			}
		}
		want.Release()
		got.Release()
	}
}
