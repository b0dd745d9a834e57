package writer_test

import (
	"io"
	"math"
	"math/rand"
	"runtime"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/writer"
)

// vectors builds a nullable fsl<f32,dim> column from runs: positive n is n
// valid rows, negative n is -n null rows.
func vectors(dim int, runs ...int) arrow.Array {
	b := array.NewFixedSizeListBuilder(memory.DefaultAllocator, int32(dim), arrow.PrimitiveTypes.Float32)
	defer b.Release()
	vb := b.ValueBuilder().(*array.Float32Builder)
	row := 0
	for _, r := range runs {
		for k := 0; k < max(r, -r); k++ {
			if r > 0 {
				b.Append(true)
				for j := 0; j < dim; j++ {
					vb.Append(float32(row*dim + j))
				}
			} else {
				b.AppendNull()
			}
			row++
		}
	}
	return b.NewArray()
}

// TestNullRunPages checks where a 2.2 file's pages of wide vectors are cut:
// at the null runs the selector picks, also when runs span batches, and
// nowhere else; and that the file reads back equal.
func TestNullRunPages(t *testing.T) {
	const dim = 768
	schema := arrow.NewSchema([]arrow.Field{{Name: "emb", Type: arrow.FixedSizeListOf(dim, arrow.PrimitiveTypes.Float32), Nullable: true}}, nil)
	// 500 single valid rows each followed by one null, then 200 nulls:
	// cutting the 499 single nulls would cost far more read work than it
	// saves, so only the long run is cut.
	var alternating []int
	for range 500 {
		alternating = append(alternating, 1, -1)
	}
	alternating = append(alternating, -200)
	for _, c := range []struct {
		name    string
		batches [][]int
		pages   []string // "v" a page holding valid rows (maybe short null runs too), "n" an all-null page
		rows    []uint64
	}{
		{"runs in one batch", [][]int{{5, -100, 3, -1, 2, -100}}, []string{"v", "n", "v", "n", "v", "n"},
			[]uint64{5, 100, 3, 1, 2, 100}},
		// The first batch's 3 nulls alone would not pay for two more pages
		// of read work: they stay with the 2 valid rows.
		{"null run over three batches", [][]int{{2, -3}, {-4000}, {-7, 1}}, []string{"v", "n", "v"}, []uint64{5, 4007, 1}},
		{"all null", [][]int{{-5000}, {-5000}}, []string{"n"}, []uint64{10000}},
		{"short runs stay inline under the read budget", [][]int{alternating}, []string{"v", "n"}, []uint64{999, 201}},
		// A batch without nulls after a null page ends it (a keyed
		// backfill writes its given rows and null runs as such batches).
		{"all-valid batch between null batches", [][]int{{-500}, {1}, {-499}, {2}}, []string{"n", "v", "n", "v"}, []uint64{500, 1, 499, 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var recs []arrow.RecordBatch
			for _, runs := range c.batches {
				a := vectors(dim, runs...)
				recs = append(recs, array.NewRecordBatch(schema, []arrow.Array{a}, int64(a.Len())))
				a.Release()
			}
			f := open(t, writeAll(t, schema, recs, writer.WithFormat(writer.Format2_2)))
			var kinds []string
			var rows []uint64
			for _, p := range f.Pages(0) {
				k := "v"
				if p.Cell == "dense x none" {
					k = "n"
				}
				kinds = append(kinds, k)
				rows = append(rows, p.Rows)
			}
			if !slices.Equal(kinds, c.pages) || !slices.Equal(rows, c.rows) {
				t.Fatalf("pages %v of %v rows, want %v of %v", kinds, rows, c.pages, c.rows)
			}
			got, err := f.ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			var want []arrow.Array
			for _, r := range recs {
				want = append(want, r.Column(0))
			}
			wa, _ := array.Concatenate(want, memory.DefaultAllocator)
			defer wa.Release()
			if !array.Equal(got.Column(0), wa) {
				t.Fatal("read back differs")
			}
		})
	}
	// The lance policy keeps Lance's cuts.
	a := vectors(dim, 5, -100, 5)
	rec := array.NewRecordBatch(schema, []arrow.Array{a}, int64(a.Len()))
	f := open(t, writeAll(t, schema, []arrow.RecordBatch{rec}, writer.WithFormat(writer.Format2_2), writer.WithPolicy(selector.PolicyLance)))
	if n := len(f.Pages(0)); n != 1 {
		t.Errorf("lance policy: %d pages, want 1", n)
	}
}

// TestMinNullRun checks the selector's rule against every threshold: the
// one it picks stores the fewest bytes among those within the read budget,
// and every cut run pays for its pages' metadata.
func TestMinNullRun(t *testing.T) {
	o := selector.Options{}
	if selector.CutsNullRuns(selector.MinNullRunPayload-1, o) || selector.CutsNullRuns(3072, selector.Options{Policy: selector.PolicyLance}) ||
		selector.CutsNullRuns(3072, selector.Options{Structural: selector.StructuralFullZip}) {
		t.Error("null runs cut where they must not be")
	}
	rng := rand.New(rand.NewSource(5))
	for iter := 0; iter < 2000; iter++ {
		rb := []int{64, 256, 3072}[rng.Intn(3)]
		var runs []int64
		rows := int64(0)
		for range 1 + rng.Intn(200) {
			l := int64(1 + rng.Intn([]int{2, 20, 500}[rng.Intn(3)]))
			runs = append(runs, l)
			rows += l + int64(rng.Intn(5))
		}
		cost := func(th int64) (stored, work float64) {
			stored, pages := float64(rows)*float64(rb), 1.0
			for _, l := range runs {
				if l >= th {
					stored -= float64(l) * float64(rb)
					pages += 2
				}
			}
			return stored, stored + pages*selector.PageReadWork
		}
		got, _ := selector.MinNullRun(slices.Clone(runs), rows, rb, o, selector.NewCutWork())
		if got != math.MaxInt64 && float64(got)*float64(rb) < 2*selector.PageMetaBytes {
			t.Fatalf("cut at %d rows of %d B: the run does not pay its pages", got, rb)
		}
		gs, gw := cost(got)
		if got != math.MaxInt64 && gw > selector.MaxCutReadRatio*float64(rows)*float64(rb)+1e-6 {
			t.Fatalf("cut at %d: read work %.0f over the budget", got, gw)
		}
		for _, th := range runs {
			if float64(th)*float64(rb) < 2*selector.PageMetaBytes {
				continue
			}
			s, w := cost(th)
			if w <= selector.MaxCutReadRatio*float64(rows)*float64(rb) && s < gs {
				t.Fatalf("cut at %d stores %.0f; %d would store %.0f within the budget", got, gs, th, s)
			}
		}
	}
}

// TestNullRunRandom writes random null patterns in random batch splits and
// reads them back equal; every all-null page must be at least MinNullRun
// rows or continue across a batch, and no page but an all-null one may
// hold a null run of that length.
func TestNullRunRandom(t *testing.T) {
	const dim = 64
	schema := arrow.NewSchema([]arrow.Field{{Name: "emb", Type: arrow.FixedSizeListOf(dim, arrow.PrimitiveTypes.Float32), Nullable: true}}, nil)
	rng := rand.New(rand.NewSource(3))
	for iter := 0; iter < 30; iter++ {
		var runs []int
		total := 0
		for total < 20000 {
			n := 1 + rng.Intn([]int{3, 50, 2000}[rng.Intn(3)])
			if len(runs)%2 == 1 {
				n = -n
			}
			runs = append(runs, n)
			total += max(n, -n)
		}
		full := vectors(dim, runs...)
		var recs []arrow.RecordBatch
		for off := 0; off < full.Len(); {
			n := min(full.Len()-off, 1+rng.Intn(5000))
			s := array.NewSlice(full, int64(off), int64(off+n))
			recs = append(recs, array.NewRecordBatch(schema, []arrow.Array{s}, int64(n)))
			s.Release()
			off += n
		}
		f := open(t, writeAll(t, schema, recs, writer.WithFormat(writer.Format2_2), writer.WithMaxPageBytes(64<<10)))
		got, err := f.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if !array.Equal(got.Column(0), full) {
			t.Fatalf("iteration %d: read back differs", iter)
		}
		got.Release()
		full.Release()
	}
}

// TestNullRunCutsIgnoreBatching: the rows decide the cuts, not how they
// arrive: 1% of 30,000 768-d vectors valid at random, written in one batch
// and with every run a batch of its own (a keyed backfill's shape), store
// within 2% of each other. (Per batch, a short run alone in its batch had no
// read budget to be cut: 96.5x the bytes here.)
func TestNullRunCutsIgnoreBatching(t *testing.T) {
	const dim = 768
	schema := arrow.NewSchema([]arrow.Field{{Name: "emb", Type: arrow.FixedSizeListOf(dim, arrow.PrimitiveTypes.Float32), Nullable: true}}, nil)
	rng := rand.New(rand.NewSource(9))
	var runs []int
	for total := 0; total < 30000; {
		gap := 1 + rng.Intn(200)
		runs = append(runs, -gap, 1)
		total += gap + 1
	}
	full := vectors(dim, runs...)
	defer full.Release()
	one := []arrow.RecordBatch{array.NewRecordBatch(schema, []arrow.Array{full}, int64(full.Len()))}
	var each []arrow.RecordBatch
	off := 0
	for _, r := range runs {
		n := max(r, -r)
		s := array.NewSlice(full, int64(off), int64(off+n))
		each = append(each, array.NewRecordBatch(schema, []arrow.Array{s}, int64(n)))
		s.Release()
		off += n
	}
	a := len(writeAll(t, schema, one, writer.WithFormat(writer.Format2_2)))
	b := len(writeAll(t, schema, each, writer.WithFormat(writer.Format2_2)))
	valid := len(runs) / 2 * dim * 4
	t.Logf("one batch %d B, a batch a run %d B, valid payload %d B", a, b, valid)
	if float64(b) > 1.02*float64(a) || float64(a) > 1.02*float64(b) {
		t.Fatalf("one batch %d B, a batch a run %d B", a, b)
	}
	if float64(b) > 1.2*float64(valid) {
		t.Fatalf("%d B for %d B of valid vectors", b, valid)
	}
}

// TestMostlyNullWriteIsOValid: writing a column of wide vectors that is
// almost all null allocates about what its valid rows hold, in 2.2 (null
// runs cut into pages that store nothing) and in 2.3 (sparse pages that
// gather only the valid rows), not what its null rows' payload takes in
// Arrow (307 MB here).
func TestMostlyNullWriteIsOValid(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 307 MB of Arrow input")
	}
	const dim, rows = 768, 100_000
	schema := arrow.NewSchema([]arrow.Field{{Name: "emb", Type: arrow.FixedSizeListOf(dim, arrow.PrimitiveTypes.Float32), Nullable: true}}, nil)
	var recs []arrow.RecordBatch
	for off := 0; off < rows; off += 25_000 {
		var runs []int
		for k := 0; k < 5; k++ {
			runs = append(runs, -4999, 1)
		}
		a := vectors(dim, runs...)
		recs = append(recs, array.NewRecordBatch(schema, []arrow.Array{a}, int64(a.Len())))
		a.Release()
	}
	for _, f := range []writer.Format{writer.Format2_2, writer.Format2_3} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		w, err := writer.New(io.Discard, schema, writer.WithFormat(f))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if err := w.WriteBatch(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d valid of %d rows: %.1f MB allocated", f, 20, rows, float64(alloc)/1e6)
		if alloc > 40<<20 {
			t.Errorf("%s: writing 20 valid vectors among %d null rows allocated %d bytes", f, rows, alloc)
		}
	}
}
