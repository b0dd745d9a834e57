package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/planarlance/planar/internal/pyenv"
)

// pylanceCompare reads a Parquet or CSV file with pyarrow (read_csv with its
// defaults) and Lance files and
// datasets with pylance, and prints "ok PATH" or "diff PATH: ..." per Lance
// argument ("file:PATH" or "dataset:PATH").
const pylanceCompare = `
import sys
import lance
import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
from lance.file import LanceFileReader

src = sys.argv[1]
want = pcsv.read_csv(src) if src.endswith(".csv") else pq.read_table(src)
for arg in sys.argv[2:]:
    kind, path = arg.split(":", 1)
    try:
        if kind == "file":
            got = LanceFileReader(path).read_all().to_table()
        else:
            got = lance.dataset(path).to_table()
        if got.schema.names != want.schema.names:
            print("diff", path, "names", got.schema.names, want.schema.names)
            continue
        bad = [n for n in want.schema.names if not got.column(n).type.equals(want.column(n).type)]
        if bad:
            print("diff", path, "types", [(n, str(got.column(n).type), str(want.column(n).type)) for n in bad])
            continue
        bad = [n for n in want.schema.names if not got.column(n).equals(want.column(n))]
        if bad:
            print("diff", path, "values of", bad)
            continue
        wm = {k: v for k, v in (want.schema.metadata or {}).items() if k != b"ARROW:schema"}
        gm = got.schema.metadata or {}
        lost = [k for k, v in wm.items() if gm.get(k) != v]
        if lost:
            print("diff", path, "schema metadata lost", lost)
            continue
        print("ok", path, got.num_rows)
    except Exception as e:
        print("diff", path, "error", repr(e))
`

// TestPylanceReadsConverted converts a Parquet file to Lance files (both
// formats) and datasets, and checks that pylance reads each equal to
// pyarrow's reading of the Parquet file. Without pylance it skips, but
// fails under CI=true.
func TestPylanceReadsConverted(t *testing.T) {
	py, ver, err := pyenv.Find("")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI: %v", err)
		}
		t.Skipf("!!!!! SKIPPING PYLANCE TEST: %v !!!!!", err)
	}
	t.Logf("pylance %s", ver)
	dir := t.TempDir()
	pq := filepath.Join(dir, "src.parquet")
	// With schema metadata, as pyarrow writes a pandas frame's.
	withMeta := func(rec arrow.RecordBatch) arrow.RecordBatch {
		md := arrow.NewMetadata([]string{"pandas", "origin"}, []string{`{"index_columns": [], "columns": []}`, "planar test"})
		return array.NewRecordBatch(arrow.NewSchema(rec.Schema().Fields(), &md), rec.Columns(), rec.NumRows())
	}
	writeParquet(t, pq, []arrow.RecordBatch{withMeta(mixedRecord(3000, 0)), withMeta(mixedRecord(2000, 3000))}, 1800)
	targets := []struct {
		args []string
		spec string
	}{
		{[]string{filepath.Join(dir, "f23.lance")}, "file:" + filepath.Join(dir, "f23.lance")},
		{[]string{"--format", "2.2", "--policy", "lance", filepath.Join(dir, "f22.lance")}, "file:" + filepath.Join(dir, "f22.lance")},
		{[]string{"--dataset", "--max-rows-per-file", "2000", filepath.Join(dir, "d22")}, "dataset:" + filepath.Join(dir, "d22")},
		{[]string{"--dataset", "--format", "2.3", filepath.Join(dir, "d23")}, "dataset:" + filepath.Join(dir, "d23")},
	}
	pyArgs := []string{"-c", pylanceCompare, pq}
	for _, tg := range targets {
		args := append([]string{"convert", "-q"}, tg.args[:len(tg.args)-1]...)
		args = append(args, pq, tg.args[len(tg.args)-1])
		if err := run(args, new(bytes.Buffer)); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		pyArgs = append(pyArgs, tg.spec)
	}
	out, err := exec.Command(py, pyArgs...).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(targets) {
		t.Fatalf("python printed %d lines, want %d:\n%s", len(lines), len(targets), out)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "ok ") || !strings.HasSuffix(l, " 5000") {
			t.Errorf("pylance: %s", l)
		}
	}
}

// TestPylanceReadsConvertedCSV: a CSV as R and pandas write it (NA for a
// missing number, NaN in a float column, the literal text NA in a string
// column) converts to what pyarrow's read_csv makes of it, with its
// defaults: pylance reads the Lance file and dataset equal to that.
func TestPylanceReadsConvertedCSV(t *testing.T) {
	py, _, err := pyenv.Find("")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI: %v", err)
		}
		t.Skipf("!!!!! SKIPPING PYLANCE TEST: %v !!!!!", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "flights.csv")
	var b strings.Builder
	b.WriteString("year,month,dep_time,arr_delay,carrier,tailnum,distance\n")
	for i := range 3000 {
		dep, delay, tail := fmt.Sprint(500+i%900), fmt.Sprintf("%d", i%60-20), fmt.Sprintf("N%dUA", i%97)
		switch i % 7 {
		case 3:
			dep, delay = "NA", "NA"
		case 5:
			tail = "NA"
		}
		dist := fmt.Sprintf("%.1f", float64(i%1000)*1.5)
		if i%11 == 4 {
			dist = "NaN"
		}
		fmt.Fprintf(&b, "2013,%d,%s,%s,%s,%s,%s\n", 1+i%12, dep, delay, []string{"UA", "AA", "B6"}[i%3], tail, dist)
	}
	if err := os.WriteFile(src, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	file, ds := filepath.Join(dir, "f.lance"), filepath.Join(dir, "d.lance")
	for _, args := range [][]string{{"convert", "-q", src, file}, {"convert", "-q", "--dataset", src, ds}} {
		if err := run(args, new(bytes.Buffer)); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	out, err := exec.Command(py, "-c", pylanceCompare, src, "file:"+file, "dataset:"+ds).CombinedOutput()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, out)
	}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(l, "ok ") || !strings.HasSuffix(l, " 3000") {
			t.Errorf("pylance against pyarrow's read_csv: %s", l)
		}
	}
}
