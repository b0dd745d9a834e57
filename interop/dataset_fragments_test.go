package interop

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	lds "github.com/planarlance/planar/dataset"
)

// goWorkers writes rows first..first+n-1 to uri as fragments from workers
// goroutines (each its own slice of rows, files cut at 700 rows) and stores
// the fragments, in row order, as a JSON list in path.
func goWorkers(t *testing.T, uri, path string, first, n int64, workers int, opts ...lds.Option) []lds.FragmentMetadata {
	t.Helper()
	per := n / int64(workers)
	res := make([][]lds.FragmentMetadata, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo := first + int64(g)*per
			hi := lo + per
			if g == workers-1 {
				hi = first + n
			}
			var recs []arrow.RecordBatch
			for at := lo; at < hi; at += 500 {
				recs = append(recs, dsBatch(at, min(500, hi-at)))
			}
			res[g], errs[g] = lds.WriteFragments(context.Background(), uri, dsSchema, recs,
				append([]lds.Option{lds.WithMaxRowsPerFile(700)}, opts...)...)
			for _, r := range recs {
				r.Release()
			}
		}()
	}
	wg.Wait()
	var all []lds.FragmentMetadata
	for g := range workers {
		if errs[g] != nil {
			t.Fatalf("worker %d: %v", g, errs[g])
		}
		all = append(all, res[g]...)
	}
	b, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return all
}

// TestDatasetGoFragmentsPylanceCommits: Go workers write fragments, pylance
// commits them (LanceOperation.Overwrite to create the dataset, then
// LanceOperation.Append), and both pylance and planar read every row once.
func TestDatasetGoFragmentsPylanceCommits(t *testing.T) {
	py := python(t)
	for _, sv := range []string{lds.StorageVersion2_2, lds.StorageVersion2_3} {
		t.Run(sv, func(t *testing.T) {
			dir := t.TempDir()
			uri := filepath.Join(dir, "ds")
			frags := filepath.Join(dir, "frags1.json")
			goWorkers(t, uri, frags, 0, 3000, 3, lds.WithStorageVersion(sv))
			schema := filepath.Join(dir, "v1.arrow")
			writeDatasetIPC(t, schema, [2]int64{0, 3000})
			res := pyDataset(t, py, "commit_overwrite", uri, frags, schema)
			if res["version"] != 1.0 || res["storage"] != sv {
				t.Fatalf("pylance commit: %v", res)
			}
			pyDataset(t, py, "check", uri, schema, "1")
			planarCheck(t, uri, 1, 3000)

			frags2 := filepath.Join(dir, "frags2.json")
			written := goWorkers(t, uri, frags2, 3000, 2500, 4)
			res = pyDataset(t, py, "commit_append", uri, frags2)
			if res["version"] != 2.0 || res["fragments"] != float64(len(written)) {
				t.Fatalf("pylance commit: %v", res)
			}
			v2 := filepath.Join(dir, "v2.arrow")
			writeDatasetIPC(t, v2, [2]int64{0, 5500})
			pyDataset(t, py, "check", uri, v2, "2")
			planarCheck(t, uri, 2, 5500)
		})
	}
}

// TestDatasetPylanceFragmentsPlanarCommits: pylance's write_fragments writes
// fragments, planar commits them (CommitOverwrite to create a dataset,
// CommitAppend onto it and onto a planar dataset), and both read every row.
func TestDatasetPylanceFragmentsPlanarCommits(t *testing.T) {
	py := python(t)
	ctx := context.Background()
	dir := t.TempDir()
	readFrags := func(path string) []lds.FragmentMetadata {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var frags []lds.FragmentMetadata
		if err := json.Unmarshal(b, &frags); err != nil {
			t.Fatal(err)
		}
		return frags
	}
	pyFrags := func(uri string, first, n int64, name string) []lds.FragmentMetadata {
		t.Helper()
		arrow := filepath.Join(dir, name+".arrow")
		writeDatasetIPC(t, arrow, [2]int64{first, n})
		out := filepath.Join(dir, name+".json")
		pyDataset(t, py, "write_fragments", uri, arrow, out, "900", lds.StorageVersion2_2)
		frags := readFrags(out)
		if want := int((n + 899) / 900); len(frags) != want {
			t.Fatalf("pylance wrote %d fragments, want %d", len(frags), want)
		}
		return frags
	}

	// A new dataset from pylance's fragments, committed by planar.
	uri := filepath.Join(dir, "ds")
	d, err := lds.CommitOverwrite(ctx, uri, dsSchema, pyFrags(uri, 0, 2000, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Version() != 1 || d.StorageVersion() != lds.StorageVersion2_2 {
		t.Fatalf("version %d storage %s", d.Version(), d.StorageVersion())
	}
	// pylance's fragments for the existing dataset, mixed with planar's.
	mixed := append(pyFrags(uri, 2000, 1800, "b"), goWorkers(t, uri, filepath.Join(dir, "go.json"), 3800, 1200, 2)...)
	if d, err = lds.CommitAppend(ctx, uri, mixed); err != nil {
		t.Fatal(err)
	}
	if d.Version() != 2 {
		t.Fatalf("version %d, want 2", d.Version())
	}
	for v, n := range map[uint64]int64{1: 2000, 2: 5000} {
		arrow := filepath.Join(dir, fmt.Sprintf("v%d.arrow", v))
		writeDatasetIPC(t, arrow, [2]int64{0, n})
		pyDataset(t, py, "check", uri, arrow, fmt.Sprint(v))
		planarCheck(t, uri, v, n)
	}

	// pylance's fragments appended to a dataset planar created.
	uri2 := filepath.Join(dir, "planar")
	w, err := lds.Create(ctx, uri2, dsSchema)
	if err != nil {
		t.Fatal(err)
	}
	planarWrite(t, w, 0, 1000, 1000)
	if d, err = lds.CommitAppend(ctx, uri2, pyFrags(uri2, 1000, 1000, "c")); err != nil {
		t.Fatal(err)
	}
	arrow := filepath.Join(dir, "p2.arrow")
	writeDatasetIPC(t, arrow, [2]int64{0, 2000})
	pyDataset(t, py, "check", uri2, arrow, "2")
	planarCheck(t, uri2, 2, 2000)
}
