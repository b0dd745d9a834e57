package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/relayout"
	"github.com/planarlance/planar/writer"
)

// sparseFile writes a 2.3 file whose "note" column is 99% null, which the
// cost policy stores in sparse pages (no 2.2 counterpart).
func sparseFile(t *testing.T, path string) arrow.RecordBatch {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "note", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for i := 0; i < 20000; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i%100 == 7 {
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("note %d", i))
		} else {
			b.Field(1).AppendNull()
		}
	}
	rec := b.NewRecordBatch()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := writer.New(f, schema, writer.WithFormat(writer.Format2_3))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteBatch(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return rec
}

// TestConvertLance: a Lance file converts to the other version through
// relayout; a page without a counterpart fails naming column and page and
// leaves nothing, unless --reencode; the results read back equal.
func TestConvertLance(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.lance")
	want := sparseFile(t, src)
	defer want.Release()
	f, err := reader.OpenPath(src)
	if err != nil {
		t.Fatal(err)
	}
	sparse := false
	for c := 0; c < f.NumColumns(); c++ {
		for _, p := range f.Pages(c) {
			sparse = sparse || strings.HasPrefix(p.Cell, "sparse")
		}
	}
	f.Close()
	if !sparse {
		t.Fatal("the source has no sparse page; the test needs one")
	}

	d22 := filepath.Join(dir, "out22.lance")
	err = run([]string{"convert", "--format", "2.2", src, d22}, new(bytes.Buffer))
	if !errors.Is(err, relayout.ErrNoCounterpart) {
		t.Fatalf("sparse page to 2.2: %v, want ErrNoCounterpart", err)
	}
	for _, w := range []string{`column "note"`, "page 0", "--reencode"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	if got := dirEntries(t, dir); len(got) != 1 {
		t.Fatalf("a failed conversion left %v", got)
	}

	var out bytes.Buffer
	if err := run([]string{"convert", "--format", "2.2", "--reencode", src, d22}, &out); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "re-encoded") || !strings.Contains(s, "note") {
		t.Errorf("summary does not list the re-encoded pages:\n%s", s)
	}
	checkLance(t, d22, 2, want)

	d23 := filepath.Join(dir, "back23.lance")
	out.Reset()
	if err := run([]string{"convert", "--format", "2.3", d22, d23}, &out); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, ", 0 re-encoded") {
		t.Errorf("2.2 to 2.3 should only re-express pages:\n%s", s)
	}
	checkLance(t, d23, 3, want)

	// An existing destination needs --overwrite; usage errors.
	if err := run([]string{"convert", "--format", "2.3", d22, d23}, new(bytes.Buffer)); !errors.Is(err, errDestination) {
		t.Errorf("existing destination: %v", err)
	}
	if err := run([]string{"convert", "-q", "--overwrite", "--format", "2.3", d22, d23}, new(bytes.Buffer)); err != nil {
		t.Errorf("--overwrite: %v", err)
	}
	for _, args := range [][]string{
		{"convert", src, filepath.Join(dir, "x.lance")},
		{"convert", "--format", "2.2", "--policy", "lance", src, filepath.Join(dir, "x.lance")},
		{"convert", "--format", "2.2", "--dataset", src, filepath.Join(dir, "x.lance")},
	} {
		if err := run(args, new(bytes.Buffer)); !errors.Is(err, errUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

func checkLance(t *testing.T, path string, minor uint16, want arrow.RecordBatch) {
	t.Helper()
	f, err := reader.OpenPath(path)
	if err != nil {
		t.Fatal(err)
	}
	if ma, mi := f.Version(); ma != 2 || mi != minor {
		t.Errorf("%s is Lance %d.%d, want 2.%d", path, ma, mi, minor)
	}
	f.Close()
	got := readLanceFile(t, path)
	sameRows(t, path, got, want)
}
