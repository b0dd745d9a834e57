package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/planarlance/planar/dataset"
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

// pythonOrSkip returns the python with pylance; a missing pylance fails
// under CI=true and skips loudly otherwise.
func pythonOrSkip(t *testing.T) string {
	t.Helper()
	py, version, err := findPython("")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI: " + err.Error())
		}
		t.Skip("!!!!! SKIPPING THE PYLANCE DATASET TEST: " + err.Error() + " !!!!!")
	}
	t.Logf("pylance %s at %s", version, py)
	return py
}

// TestDatasetForm runs the dataset form on a small table: pylance (or
// planar) creates it in several fragments, AddColumns backfills the
// embedding with batches that straddle the fragments (or AddColumnsByKey
// with the rows that have a vector), and the new version
// must hold the vectors where they were written, for planar and pylance.
func TestDatasetForm(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pylance bool
		storage string
		gen     batchGen
		byKey   bool
	}{
		{"pylance 2.3", true, dataset.StorageVersion2_3, batchGen{rows: 5000, batch: 1500, valid: 0.01, seed: 4}, false},
		{"pylance 2.2", true, dataset.StorageVersion2_2, batchGen{rows: 5000, batch: 1500, valid: 0.01, seed: 5}, false},
		{"pylance 2.2 by key", true, dataset.StorageVersion2_2, batchGen{rows: 5000, batch: 1500, valid: 0.01, seed: 7}, true},
		{"planar 2.3", false, dataset.StorageVersion2_3, batchGen{rows: 5000, batch: 2048, valid: 0.002, seed: 6}, false},
		{"planar 2.2 by key", false, dataset.StorageVersion2_2, batchGen{rows: 5000, batch: 2048, valid: 0.002, seed: 8}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := dsConfig{gen: tc.gen, rowsPerFile: 2000, storage: tc.storage, out: t.TempDir(), noPython: "test without pylance", byKey: tc.byKey}
			if tc.pylance {
				cfg.python = pythonOrSkip(t)
			}
			ctx := context.Background()
			res, err := runDataset(ctx, cfg, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.valid) == 0 || len(res.valid) == tc.gen.rows {
				t.Fatalf("%d rows with a vector: the case tests nothing", len(res.valid))
			}
			if res.planarCheck != nil {
				t.Errorf("planar's take: %v", res.planarCheck)
			}
			// Version 1 has id and text in 3 fragments; version 2 adds the
			// embedding as one more file per fragment.
			if len(res.versions) != 2 {
				t.Fatalf("versions %+v, want 2", res.versions)
			}
			v1, v2 := res.versions[0], res.versions[1]
			if v1.version != 1 || v2.version != 2 || v1.fragments != 3 || v2.fragments != 3 ||
				v1.dataFiles != 3 || v2.dataFiles != 6 || v1.rows != 5000 || v2.rows != 5000 ||
				!slices.Equal(v2.columns, []string{"id", "text", "embedding"}) || v2.dataBytes <= v1.dataBytes {
				t.Errorf("versions %+v", res.versions)
			}
			d, err := dataset.OpenVersion(ctx, res.uri, 2)
			if err != nil {
				t.Fatal(err)
			}
			if d.StorageVersion() != tc.storage || d.Schema().Field(2).Type.String() != "fixed_size_list<item: float32, nullable>[768]" {
				t.Errorf("version 2: storage %s, schema %s", d.StorageVersion(), d.Schema())
			}
			var newData int
			for p := range res.newFiles {
				if strings.HasPrefix(p, "data/") {
					newData++
				}
			}
			if newData != 3 || len(res.newFiles) != 5 {
				t.Errorf("the backfill added %v, want 3 data files, a manifest and a transaction", res.newFiles)
			}
			if res.backfillB >= res.rewriteB || res.rewriteN != 3 {
				t.Errorf("backfill wrote %d bytes, the rewrite %d in %d files", res.backfillB, res.rewriteB, res.rewriteN)
			}
			c := res.pylance
			if !tc.pylance {
				if c != nil {
					t.Error("pylance checked a dataset it should not know of")
				}
				return
			}
			if len(res.pyProblems) > 0 {
				t.Errorf("pylance: %q", res.pyProblems)
			}
			if c == nil || c.Version != 2 || c.NonNull != int64(len(res.valid)) || !slices.Equal(c.Positions, res.valid) ||
				len(c.Samples) != len(res.samples) || !slices.Contains(c.Columns, "embedding") {
				t.Fatalf("pylance read %+v; %d rows written with a vector", c, len(res.valid))
			}
			var vectors int
			for _, s := range c.Samples {
				if s.Embedding != nil {
					vectors++
				}
			}
			if vectors != min(10, len(res.valid)) {
				t.Errorf("pylance's samples hold %d vectors", vectors)
			}
			if tc.storage == dataset.StorageVersion2_2 {
				lanceDBFindsBackfill(t, cfg.python, res.uri, len(res.valid))
			}
		})
	}
}

// lanceDBFindsBackfill opens the backfilled 2.2 table with LanceDB 0.40
// (its own Lance 13): it must count the rows, hold valid vectors where
// planar wrote them, and its vector search must find a backfilled row
// first.
func lanceDBFindsBackfill(t *testing.T, py, uri string, valid int) {
	t.Helper()
	script := `
import sys, lancedb
db = lancedb.connect(sys.argv[1])
tbl = db.open_table(sys.argv[2])
t = tbl.to_arrow()
emb = t.column("embedding")
valid = [i for i in range(t.num_rows) if emb[i].is_valid]
i = valid[len(valid) // 2]
hit = tbl.search(emb[i].values.to_numpy(), vector_column_name="embedding").limit(1).to_arrow()
print(tbl.count_rows(), len(valid), int(hit.column("id")[0].as_py() == t.column("id")[i].as_py()))
`
	dir, name := filepath.Split(uri)
	out, err := exec.Command(py, "-c", script, dir, strings.TrimSuffix(name, ".lance")).CombinedOutput()
	if err != nil {
		t.Fatalf("LanceDB: %v\n%s", err, out)
	}
	var rows, vectors, found int
	if _, err := fmt.Sscan(string(out), &rows, &vectors, &found); err != nil || rows != 5000 || vectors != valid || found != 1 {
		t.Errorf("LanceDB 0.40 read %q; want 5000 rows, %d vectors, the search finding its row", out, valid)
	}
}
