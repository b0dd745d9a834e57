package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestMain lets the test binary stand in for the command: the runner
// starts os.Executable() with workerFlag for every planar measurement.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == dsWorkerFlag {
		os.Exit(dsWorkerMain(os.Args[2:], os.Stdout))
	}
	if len(os.Args) > 1 && os.Args[1] == workerFlag {
		os.Exit(workerMain(os.Args[2:], os.Stdout))
	}
	if len(os.Args) > 1 && os.Args[1] == classesWorkerFlag {
		os.Exit(classesWorkerMain(os.Args[2:], os.Stdout))
	}
	os.Exit(m.Run())
}

// pylance returns the venv's python, or skips (fails under CI=true).
func pylance(t *testing.T) string {
	t.Helper()
	py, version, err := findPylance("")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI: %v", err)
		}
		t.Skipf("!!!!! SKIPPING planarbench's pylance test: %v !!!!!", err)
	}
	t.Logf("pylance %s at %s", version, py)
	return py
}

type resultsDoc struct {
	Environment environment  `json:"environment"`
	Sides       []side       `json:"sides"`
	Cases       []caseResult `json:"cases"`
}

func runSuite(t *testing.T, args ...string) (string, resultsDoc) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "results.json")
	var stdout, stderr bytes.Buffer
	args = append([]string{"-suite", "sparse", "-work", t.TempDir(), "-out", out}, args...)
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatalf("planarbench %s: %v\nstderr:\n%s\nstdout:\n%s", strings.Join(args, " "), err, stderr.String(), stdout.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc resultsDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return stdout.String(), doc
}

// TestSparseSuiteTiny runs the whole sparse suite on 2,000 rows, once, and
// checks that every writer measured every case and that every file read
// back equal to the data (planar's also in pylance).
func TestSparseSuiteTiny(t *testing.T) {
	pylance(t)
	table, doc := runSuite(t, "-rows", "2000", "-reps", "1")
	var want []string
	for _, c := range sparseSuite() {
		if !c.Big {
			want = append(want, c.Name)
		}
	}
	if len(doc.Cases) != len(want) {
		t.Fatalf("%d cases, want %d", len(doc.Cases), len(want))
	}
	wantSides := []string{"planar cost", "planar lance", "pylance 2.3"}
	for i, c := range doc.Cases {
		if c.Name != want[i] || c.Rows != 2000 || c.ArrowBytes <= 0 {
			t.Errorf("case %d: %s, %d rows, %d bytes; want %s, 2000 rows", i, c.Name, c.Rows, c.ArrowBytes, want[i])
		}
		if !strings.Contains(table, "**`"+c.Name+"`**") {
			t.Errorf("table has no row for %s", c.Name)
		}
		if len(c.Sides) != len(wantSides) {
			t.Fatalf("%s: %d sides", c.Name, len(c.Sides))
		}
		for k, s := range c.Sides {
			checkSide(t, c, s, wantSides[k])
		}
	}
	if !strings.Contains(table, "| case | measure | planar cost | planar lance | pylance 2.3 |") {
		t.Errorf("table header missing:\n%s", table)
	}
	if strings.Contains(table, "MISMATCH") {
		t.Errorf("table reports a mismatch:\n%s", table)
	}
}

func checkSide(t *testing.T, c caseResult, s sideResult, name string) {
	t.Helper()
	where := c.Name + ", " + s.Side
	if s.Side != name {
		t.Errorf("%s: side, want %s", where, name)
	}
	if len(s.Errors) > 0 || len(s.Samples) != 1 {
		t.Errorf("%s: errors %q, %d samples", where, s.Errors, len(s.Samples))
		return
	}
	if s.FileBytes <= 0 || len(s.Cells) == 0 || s.WriteMBps.Median <= 0 || s.ReadMBps.Median <= 0 {
		t.Errorf("%s: %d bytes, cells %q, write %v, read %v", where, s.FileBytes, s.Cells, s.WriteMBps, s.ReadMBps)
	}
	if s.ReadBack != "ok" {
		t.Errorf("%s: read back: %s", where, s.ReadBack)
	}
	if strings.HasPrefix(s.Side, "planar") && s.PylanceReadBack != "ok" {
		t.Errorf("%s: pylance read back: %q", where, s.PylanceReadBack)
	}
	// Every take is counted by both readers where its row exists.
	for _, x := range []struct {
		what          string
		row           int64
		planar, lance *ioCount
	}{{"valid", c.ValidRow, s.PlanarTakeValid, s.LanceTakeValid}, {"null", c.NullRow, s.PlanarTakeNull, s.LanceTakeNull}} {
		if (x.row >= 0) != (x.planar != nil) || (x.row >= 0) != (x.lance != nil || s.LanceIONote != "") {
			t.Errorf("%s: take %s of row %d: planar %v, lance %v (%s)", where, x.what, x.row, x.planar, x.lance, s.LanceIONote)
		}
	}
}

// TestPlanarOnly runs planar's sides without pylance, so the worker path is
// exercised also where the venv is missing.
func TestPlanarOnly(t *testing.T) {
	table, doc := runSuite(t, "-rows", "3000", "-reps", "2", "-pylance=false", "-cases", `^fsl.* (50|99)% null$|^list.*20k`)
	if len(doc.Cases) != 3 || doc.Environment.Pylance != "" {
		t.Fatalf("%d cases, pylance %q", len(doc.Cases), doc.Environment.Pylance)
	}
	for _, c := range doc.Cases {
		if len(c.Sides) != 2 {
			t.Fatalf("%s: %d sides", c.Name, len(c.Sides))
		}
		for _, s := range c.Sides {
			if len(s.Samples) != 2 || len(s.WriteMBps.All) != 2 || s.ReadBack != "ok" || s.PylanceReadBack != "" {
				t.Errorf("%s, %s: %d samples, %d rates, read back %q, pylance %q", c.Name, s.Side, len(s.Samples), len(s.WriteMBps.All), s.ReadBack, s.PylanceReadBack)
			}
			if s.Samples[0].FileBytes != s.Samples[1].FileBytes {
				t.Errorf("%s, %s: file sizes %d, %d differ between reps", c.Name, s.Side, s.Samples[0].FileBytes, s.Samples[1].FileBytes)
			}
		}
	}
	if strings.Contains(table, "pylance 2.3") || strings.Contains(table, "Lance's reader") {
		t.Errorf("table mentions pylance, which did not run:\n%s", table)
	}
}

// TestPrepareExactNulls checks the generator: exact null and empty counts,
// the picked rows of the right kind, and the same data for the same seed.
func TestPrepareExactNulls(t *testing.T) {
	dir := t.TempDir()
	for _, c := range sparseSuite() {
		if c.Big {
			continue
		}
		const rows = 5000
		p, err := prepare(c, rows, 7, dir)
		if err != nil {
			t.Fatal(err)
		}
		wantNulls := int(float64(rows)*c.Null + 0.5)
		_, recs, release, err := readIPC(p.IPC)
		if err != nil {
			t.Fatal(err)
		}
		defer release()
		col, err := array.Concatenate(columns(recs), memory.NewGoAllocator())
		if err != nil {
			t.Fatal(err)
		}
		if p.Nulls != wantNulls || col.NullN() != wantNulls || col.Len() != rows {
			t.Errorf("%s: %d nulls recorded, %d in the data, want %d", c.Name, p.Nulls, col.NullN(), wantNulls)
		}
		if p.ValidRow >= 0 && (col.IsNull(int(p.ValidRow)) || isEmptyList(col, int(p.ValidRow))) {
			t.Errorf("%s: valid row %d is not a value", c.Name, p.ValidRow)
		}
		if p.NullRow >= 0 && col.IsValid(int(p.NullRow)) {
			t.Errorf("%s: null row %d is valid", c.Name, p.NullRow)
		}
		if (p.ValidRow < 0) != (p.Nulls+p.Empties == rows) || (p.NullRow < 0) != (p.Nulls == 0) {
			t.Errorf("%s: valid row %d, null row %d with %d nulls", c.Name, p.ValidRow, p.NullRow, p.Nulls)
		}
		again, err := prepare(c, rows, 7, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		_, recs2, release2, err := readIPC(again.IPC)
		if err != nil {
			t.Fatal(err)
		}
		defer release2()
		if got := compare(array.NewRecordBatch(recs[0].Schema(), []arrow.Array{col}, int64(rows)), recs2); got != "ok" || again != withIPC(p, again.IPC) {
			t.Errorf("%s: not deterministic: %s, %+v vs %+v", c.Name, got, p, again)
		}
		col.Release()
	}
}

func columns(recs []arrow.RecordBatch) []arrow.Array {
	out := make([]arrow.Array, len(recs))
	for i, r := range recs {
		out[i] = r.Column(0)
	}
	return out
}

func isEmptyList(a arrow.Array, i int) bool {
	l, ok := a.(*array.List)
	if !ok {
		return false
	}
	lo, hi := l.ValueOffsets(i)
	return lo == hi
}

func withIPC(p preparedCase, path string) preparedCase {
	p.IPC = path
	return p
}

// TestCompare checks the read-back check itself.
func TestCompare(t *testing.T) {
	mem := memory.NewGoAllocator()
	mk := func(vals []int32, valid []bool) arrow.RecordBatch {
		b := array.NewInt32Builder(mem)
		defer b.Release()
		b.AppendValues(vals, valid)
		a := b.NewArray()
		defer a.Release()
		schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil)
		return array.NewRecordBatch(schema, []arrow.Array{a}, int64(a.Len()))
	}
	all := mk([]int32{1, 2, 3, 4}, []bool{true, false, true, true})
	for _, tc := range []struct {
		name string
		recs []arrow.RecordBatch
		want string
	}{
		{"equal in two batches", []arrow.RecordBatch{mk([]int32{1, 0}, []bool{true, false}), mk([]int32{3, 4}, nil)}, "ok"},
		{"a value", []arrow.RecordBatch{mk([]int32{1, 0}, []bool{true, false}), mk([]int32{3, 5}, nil)}, `column "v" differs in rows [2, 4)`},
		{"a null", []arrow.RecordBatch{mk([]int32{1, 2, 3, 4}, nil)}, `column "v" differs in rows [0, 4)`},
		{"rows", []arrow.RecordBatch{mk([]int32{1}, nil)}, "4 rows, want 1"},
	} {
		if got := compare(all, tc.recs); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestFailedMarksMismatch checks that a wrong file fails the run loudly.
func TestFailedMarksMismatch(t *testing.T) {
	ok := sideResult{Side: "planar cost", ReadBack: "ok", PylanceReadBack: "ok", Samples: []measurement{{}}}
	bad := ok
	bad.PylanceReadBack = "v: 3 rows differ, first [1 2 3]"
	c := caseResult{preparedCase: preparedCase{Name: "x", ValidRow: -1, NullRow: -1}, Sides: []sideResult{ok}}
	if c.Failed() {
		t.Fatal("a good case failed")
	}
	c.Sides = append(c.Sides, bad)
	if !c.Failed() {
		t.Fatal("a pylance mismatch did not fail the case")
	}
	var buf bytes.Buffer
	printMarkdown(&buf, environment{Suite: "sparse", Reps: 1, Pylance: "14"}, []side{{Name: "a"}, {Name: "b"}}, []caseResult{c})
	if !strings.Contains(buf.String(), "MISMATCH, pylance reads: v: 3 rows differ") {
		t.Errorf("table does not report the mismatch:\n%s", buf.String())
	}
}

func TestSpread(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want spread
	}{
		{[]float64{3}, spread{3, 3, 3, nil}},
		{[]float64{5, 1, 3}, spread{3, 1, 5, nil}},
		{[]float64{4, 1, 3, 10}, spread{3.5, 1, 10, nil}},
	} {
		got := spreadOf(tc.in)
		if got.Median != tc.want.Median || got.Min != tc.want.Min || got.Max != tc.want.Max || len(got.All) != len(tc.in) {
			t.Errorf("spreadOf(%v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{"-suite", "nope"}, {"-reps", "0"}, {"extra"}, {"-cases", "("}, {"-suite", "dataset", "-writers", "1,0"}} {
		err := run(args, &bytes.Buffer{}, &bytes.Buffer{})
		if !errors.Is(err, errUsage) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
	if _, _, err := findPylance(filepath.Join(t.TempDir(), "no-python")); !errors.Is(err, errNoPylance) {
		t.Errorf("a missing python: %v", err)
	}
}
