package main

import (
	"bytes"
	"errors"
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
	w, err := writer.Create(path, rec.Schema())
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
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}, {"inspect", "--help"}, {"inspect", "-h"}} {
		var out bytes.Buffer
		if err := run(args, &out); err != nil {
			t.Errorf("%v: %v", args, err)
		}
		if !strings.Contains(out.String(), "planar inspect") {
			t.Errorf("%v printed no usage:\n%s", args, out.String())
		}
	}
	for _, args := range [][]string{nil, {"inspect"}, {"inspect", "-x", "f"}, {"frobnicate"}} {
		var out bytes.Buffer
		if err := run(args, &out); !errors.Is(err, errUsage) {
			t.Errorf("%v: got %v, want a usage error", args, err)
		}
	}
}
