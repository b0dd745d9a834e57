package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/writer"
)

func TestInspect(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lance")
	rec := corpus.NestedRecord(memory.NewGoAllocator(), []corpus.NestedCase{
		{TypeCase: corpus.TypeByName("list_struct"), Nulls: corpus.SomeNulls, Rows: 200},
		{TypeCase: corpus.TypeByName("fsl_f32_768"), Nulls: corpus.AllNulls, Rows: 200},
	}, 1)
	w, err := writer.Create(path, rec.Schema(), writer.WithFormat(writer.Format2_3))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteBatch(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run([]string{"inspect", "-v", path}, &out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{"Lance 2.3, 200 rows, 3 columns", "schema:\n  list_struct__some: list<", "  fsl_f32_768__all: fixed_size_list<", "list_struct__some.item.a", "dense x chunked", "sparse x none", "planar", "chunked:", " values="} {
		if strings.Contains(s, "schema: schema:") {
			t.Errorf("schema printed twice:\n%s", s)
		}
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	if err := run([]string{"inspect", filepath.Join(t.TempDir(), "missing.lance")}, &out); err == nil {
		t.Error("inspect of a missing file succeeded")
	}
	if err := run([]string{"frobnicate"}, &out); err == nil {
		t.Error("unknown command accepted")
	}
	_ = arrow.Null
}

func TestHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"help"}, "planar convert"}, {[]string{"--help"}, "planar cat"}, {[]string{"-h"}, "planar inspect"},
		{[]string{"inspect", "--help"}, "planar inspect"}, {[]string{"inspect", "-h"}, "--json"},
		{[]string{"convert", "--help"}, "planar convert"}, {[]string{"convert", "-h"}, "--mode"},
		{[]string{"cat", "--help"}, "planar cat"}, {[]string{"cat", "-h"}, "-rows"},
		{[]string{"help", "convert"}, "-overwrite"},
	} {
		var out bytes.Buffer
		if err := run(tc.args, &out); err != nil {
			t.Errorf("%v: %v", tc.args, err)
		}
		if !strings.Contains(out.String(), tc.want) {
			t.Errorf("%v printed no usage (%q):\n%s", tc.args, tc.want, out.String())
		}
	}
	for _, args := range [][]string{nil, {"inspect"}, {"inspect", "-x", "f"}, {"frobnicate"}, {"cat"}, {"cat", "-n", "x", "f"}, {"cat", "--rows", "5:2", "f"}, {"cat", "--rows", "a", "f"}, {"inspect", "a", "b"}, {"help", "nosuch"}} {
		var out bytes.Buffer
		if err := run(args, &out); !errors.Is(err, errUsage) {
			t.Errorf("%v: got %v, want a usage error", args, err)
		}
	}
}

// TestExitCodes runs the built command: --help exits 0, usage errors 2,
// other failures 1.
func TestExitCodes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	bin := filepath.Join(t.TempDir(), "planar")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"--help"}, 0}, {[]string{"convert", "--help"}, 0}, {[]string{"cat", "-h"}, 0}, {[]string{"inspect", "--help"}, 0},
		{nil, 2}, {[]string{"convert", "one"}, 2}, {[]string{"cat", "--bogus", "x"}, 2}, {[]string{"nope"}, 2},
		{[]string{"inspect", filepath.Join(t.TempDir(), "missing.lance")}, 1},
	} {
		err := exec.Command(bin, tc.args...).Run()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code {
			t.Errorf("planar %v: exit %d, want %d", tc.args, code, tc.code)
		}
	}
}

// TestWrongPathMessages runs the built command on the commonest wrong
// paths and checks that stderr says, once, what the path is and what to do.
func TestWrongPathMessages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "planar")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	pq := filepath.Join(dir, "t.parquet")
	writeParquet(t, pq, []arrow.RecordBatch{mixedRecord(100, 0)}, 50)
	pqb, _ := os.ReadFile(pq)
	asLance := filepath.Join(dir, "named.lance")
	os.WriteFile(asLance, pqb, 0o644)
	good := filepath.Join(dir, "good.lance")
	if err := run([]string{"convert", "-q", pq, good}, new(bytes.Buffer)); err != nil {
		t.Fatal(err)
	}
	gb, _ := os.ReadFile(good)
	trunc := filepath.Join(dir, "trunc.lance")
	os.WriteFile(trunc, gb[:len(gb)/2], 0o644)
	plain := filepath.Join(dir, "plain")
	os.Mkdir(plain, 0o755)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"inspect", plain}, "is a directory but not a Lance dataset (it has no _versions/)"},
		{[]string{"cat", plain}, "is a directory but not a Lance dataset"},
		{[]string{"inspect", asLance}, "a Parquet file, not a Lance file: convert it with planar convert"},
		{[]string{"inspect", trunc}, "no Lance footer (a Lance file ends in LANC): not a Lance file, or one cut short"},
		{[]string{"convert", "-q", pq, filepath.Join(dir, "no", "such", "x.lance")}, "the directory " + filepath.Join(dir, "no", "such") + " does not exist"},
		{[]string{"convert", "-q", pq, good}, "exists (use --overwrite to replace it)"},
	} {
		var stderr bytes.Buffer
		cmd := exec.Command(bin, tc.args...)
		cmd.Stderr = &stderr
		if err := cmd.Run(); err == nil {
			t.Errorf("planar %v succeeded", tc.args)
			continue
		}
		msg := stderr.String()
		if !strings.Contains(msg, tc.want) {
			t.Errorf("planar %v said %q, want %q in it", tc.args, msg, tc.want)
		}
		if strings.Count(msg, "planar:") != 1 || strings.Contains(msg, ".tmp-") {
			t.Errorf("planar %v said %q: one \"planar:\" and no temporary file name", tc.args, msg)
		}
	}
}
