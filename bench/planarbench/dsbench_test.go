package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/planarlance/planar/internal/s3test"
)

// needWeed skips loudly (fails under CI=true) without the S3 server binary.
func needWeed(t *testing.T) {
	t.Helper()
	if s3test.WeedPath() != "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI: %v", s3test.ErrNoWeed)
	}
	t.Skipf("!!!!! SKIPPING planarbench's dataset suite test: %v !!!!!", s3test.ErrNoWeed)
}

// TestDatasetSuiteQuick runs the dataset suite with -quick on local disk and
// the S3 server, with pylance, and checks that every table has its rows,
// every measurement ran, no concurrent commit failed and every row was
// there exactly once.
func TestDatasetSuiteQuick(t *testing.T) {
	pylance(t)
	needWeed(t)
	out := filepath.Join(t.TempDir(), "results.json")
	var stdout, stderr bytes.Buffer
	args := []string{"-suite", "dataset", "-quick", "-work", t.TempDir(), "-out", out}
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatalf("planarbench %s: %v\nstderr:\n%s\nstdout:\n%s", strings.Join(args, " "), err, stderr.String(), stdout.String())
	}
	table := stdout.String()
	t.Log("\n" + table)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc dsResults
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Failed() || len(doc.Stores) != 3 || doc.Config.Reps != 1 {
		t.Fatalf("failed %v, %d stores, %d reps: %s", doc.Failed(), len(doc.Stores), doc.Config.Reps, doc.Errors)
	}
	for _, s := range doc.Stores {
		if s.Store != "local" && (len(s.Append) != 1 || s.Append[0].ServerCPUSec <= 0) {
			t.Errorf("%s: no server CPU measured: %+v", s.Store, s.Append)
		}
		if s.LinkMBps > 0 {
			// Through the link: the append alone, the same data files stored
			// (a manifest's size varies by a few bytes).
			if len(s.Append) != 1 || s.Append[0].Rows != doc.Config.Rows || s.Append[0].Bytes["data"] != doc.Stores[1].Append[0].Bytes["data"] ||
				len(s.PlanarCommits)+len(s.AddCol)+len(s.Memory)+len(s.Concurrent) != 0 {
				t.Errorf("%s: %+v", s.Store, s)
			}
			continue
		}
		if len(s.Append) != 1 || len(s.PlanarCommits) != 1 || len(s.PylanceCommits) != 1 || len(s.AddCol) != 1 || len(s.Rewrite) != 1 || len(s.Memory) != 1 {
			t.Errorf("%s: a measurement is missing: %+v", s.Store, s)
			continue
		}
		if s.Append[0].Rows != doc.Config.Rows || s.Memory[0].Rows != doc.Config.MemRows || s.Memory[0].HeapPeak <= 0 {
			t.Errorf("%s: append %d rows, memory %d rows, heap peak %d", s.Store, s.Append[0].Rows, s.Memory[0].Rows, s.Memory[0].HeapPeak)
		}
		for _, m := range []dsMeasurement{s.PlanarCommits[0], s.PylanceCommits[0]} {
			if len(m.LatMS) != doc.Config.Commits {
				t.Errorf("%s: %d commit latencies, want %d", s.Store, len(m.LatMS), doc.Config.Commits)
			}
		}
		if ab, rb := total(s.AddCol[0].Bytes), total(s.Rewrite[0].Bytes); ab <= 0 || s.AddCol[0].Bytes["manifest"] <= 0 || s.AddCol[0].Bytes["transaction"] <= 0 || rb <= ab {
			t.Errorf("%s: AddColumns wrote %v, the rewrite %v", s.Store, s.AddCol[0].Bytes, s.Rewrite[0].Bytes)
		}
		for _, c := range s.Concurrent {
			if len(c.Runs) != 1 || c.Runs[0].Commits != c.Writers*doc.Config.PerWriter || c.Runs[0].Check != "ok" {
				t.Errorf("%s, %d writers: %+v", s.Store, c.Writers, c.Runs)
			}
		}
	}

	// The tables: a row per store (and writer, and number of writers),
	// every cell measured.
	want := map[string][]string{
		"1. Append throughput": {"local", "S3", "S3, 100 MB/s link"},
		"2. Commit latency":    {"local | planar", "local | pylance", "S3 | planar", "S3 | pylance"},
		"3. Concurrent writers": {"local | 1", "local | 2", "local | 4", "local | 8",
			"S3 | 1", "S3 | 2", "S3 | 4", "S3 | 8"},
		"4. AddColumns": {"local", "S3"},
		"5. Memory":     {"local", "S3"},
	}
	sections := strings.Split(table, "\n### ")
	for title, keys := range want {
		var rows []string
		for _, sec := range sections {
			if strings.HasPrefix(sec, title) {
				rows = tableRows(sec)
			}
		}
		if len(rows) != len(keys) {
			t.Errorf("%s: %d rows, want %d:\n%s", title, len(rows), len(keys), strings.Join(rows, "\n"))
			continue
		}
		for i, k := range keys {
			if !strings.HasPrefix(rows[i], "| "+k+" |") {
				t.Errorf("%s: row %d is %q, want %q first", title, i, rows[i], k)
			}
			// One rep: no ranges, so a dash is a cell without a number.
			if strings.Contains(rows[i], "–") || strings.Contains(rows[i], "failed") {
				t.Errorf("%s: row %q has a missing cell", title, rows[i])
			}
			if strings.HasPrefix(title, "3.") && !strings.HasSuffix(rows[i], "| 0 | ok |") {
				t.Errorf("%s: row %q has failures or a bad rows check", title, rows[i])
			}
		}
	}
	if strings.Contains(table, "FAILED") {
		t.Errorf("the report has failures:\n%s", table)
	}
}

// tableRows returns the data rows of the first Markdown table in s.
func tableRows(s string) []string {
	var rows []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| store") {
			rows = append(rows, l)
		}
	}
	return rows
}

// TestDSGen checks the suite's rows: ids are the row numbers, the text is
// 20 to 40 bytes, and a batch is the same whoever makes it.
func TestDSGen(t *testing.T) {
	for _, emb := range []bool{false, true} {
		g := newDSGen(3, emb)
		a, b := g.batch(1000, 500), newDSGen(3, emb).batch(1000, 500)
		if !array.RecordEqual(a, b) {
			t.Fatalf("embedding %v: the same batch differs", emb)
		}
		if int(a.NumCols()) != 3+map[bool]int{false: 0, true: 1}[emb] || a.NumRows() != 500 {
			t.Fatalf("embedding %v: %d columns, %d rows", emb, a.NumCols(), a.NumRows())
		}
		ids, text := a.Column(0).(*array.Int64), a.Column(1).(*array.String)
		for i := range 500 {
			if ids.Value(i) != int64(1000+i) || len(text.Value(i)) < dsStrMin || len(text.Value(i)) > dsStrMax {
				t.Fatalf("row %d: id %d, text %q", i, ids.Value(i), text.Value(i))
			}
		}
		if c := g.batch(1500, 500); array.RecordEqual(a, c) {
			t.Fatal("two batches are the same")
		}
	}
}

func TestPercentile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	for _, tc := range []struct{ q, want float64 }{{0.5, 5}, {0.9, 9}, {1, 10}, {0, 1}, {0.01, 1}} {
		if got := percentile(xs, tc.q); got != tc.want {
			t.Errorf("percentile(%v) = %v, want %v", tc.q, got, tc.want)
		}
	}
}

func TestParseInts(t *testing.T) {
	if got, err := parseInts("1, 2,8"); err != nil || fmt.Sprint(got) != "[1 2 8]" {
		t.Errorf("parseInts: %v, %v", got, err)
	}
	for _, bad := range []string{"", "1,,2", "0", "x"} {
		if _, err := parseInts(bad); err == nil {
			t.Errorf("parseInts(%q) accepted", bad)
		}
	}
}
