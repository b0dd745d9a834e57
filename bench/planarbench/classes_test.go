package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestClassesSuiteTiny runs the classes suite at a tiny scale, once, and
// checks that the three tables have every class and side, that every side
// measured every class (Parquet excepted where pqarrow cannot store null
// fixed-size-list rows, with a note saying so) and that nothing failed.
func TestClassesSuiteTiny(t *testing.T) {
	pylance(t)
	out := filepath.Join(t.TempDir(), "results.json")
	var stdout, stderr bytes.Buffer
	args := []string{"-suite", "classes", "-scale", "0.005", "-reps", "1", "-work", t.TempDir(), "-out", out}
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatalf("planarbench %s: %v\nstderr:\n%s\nstdout:\n%s", strings.Join(args, " "), err, stderr.String(), stdout.String())
	}
	table := stdout.String()
	t.Log("\n" + table)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc classResults
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	cases := classCases(0.005)
	if len(doc.Cases) != len(cases) {
		t.Fatalf("%d cases, want %d", len(doc.Cases), len(cases))
	}
	sides := []string{"planar cost", "planar lance", "planar cost 1 core", "pylance 2.3", "parquet zstd"}
	for _, h := range []string{"| class | rows, Arrow |", "| class | measure |", "| class | Arrow |"} {
		if want := h + " " + strings.Join(sides, " | ") + " |"; !strings.Contains(table, want) {
			t.Errorf("no table header %q", want)
		}
	}
	if !strings.Contains(table, " cost all cores÷1 core | raw copy | cost÷raw |") {
		t.Error("no raw copy columns in the write table")
	}
	for _, bad := range []string{"FAILED", "MISMATCH", "failed |"} {
		if strings.Contains(table, bad) {
			t.Errorf("the tables say %q", bad)
		}
	}
	for i, c := range doc.Cases {
		if c.Name != cases[i].Name || c.Rows != cases[i].Rows || c.ArrowBytes <= 0 {
			t.Errorf("case %d: %s, %d rows, %d bytes; want %s, %d rows", i, c.Name, c.Rows, c.ArrowBytes, cases[i].Name, cases[i].Rows)
		}
		if n := strings.Count(table, "| `"+c.Name+"` |"); n != 3 {
			t.Errorf("%s: in %d tables, want 3", c.Name, n)
		}
		if c.RawError != "" || len(c.RawMBps.All) != 1 || c.RawMBps.Median <= 0 {
			t.Errorf("%s: raw copy %v (%q)", c.Name, c.RawMBps, c.RawError)
		}
		if c.Take100 != min(100, c.Rows) || c.Take10k != min(10_000, c.Rows) {
			t.Errorf("%s: takes of %d and %d rows", c.Name, c.Take100, c.Take10k)
		}
		if len(c.Sides) != len(sides) {
			t.Fatalf("%s: %d sides", c.Name, len(c.Sides))
		}
		for k, s := range c.Sides {
			where := c.Name + ", " + s.Side
			if s.Side != sides[k] {
				t.Errorf("%s: want side %s", where, sides[k])
			}
			if len(s.Errors) > 0 {
				t.Errorf("%s: errors %q", where, s.Errors)
			}
			if len(s.Samples) == 0 {
				// pqarrow: "lists with non-zero length null components
				// are not supported".
				if s.Kind != "parquet" || !strings.Contains(c.Name, "fsl") || c.Nulls == 0 || len(s.Notes) == 0 {
					t.Errorf("%s: not measured (notes %q)", where, s.Notes)
				}
				continue
			}
			if s.FileBytes <= 0 || s.WriteMBps.Median <= 0 || s.WriteCPU.Median < 0 || s.ReadMBps.Median <= 0 ||
				s.Take100Sec.Median <= 0 || s.Take10kSec.Median <= 0 {
				t.Errorf("%s: %d bytes, write %v (cpu %v), read %v, takes %v %v", where, s.FileBytes, s.WriteMBps, s.WriteCPU, s.ReadMBps, s.Take100Sec, s.Take10kSec)
			}
			if s.ReadBack != "ok" || s.TakeBack != "ok" {
				t.Errorf("%s: read back %q, take %q", where, s.ReadBack, s.TakeBack)
			}
			if s.Kind == "planar" && s.PylanceBack != "ok" {
				t.Errorf("%s: pylance read back %q", where, s.PylanceBack)
			}
		}
		if c.Sides[0].FileBytes != c.Sides[2].FileBytes {
			t.Errorf("%s: planar cost wrote %d bytes on all cores, %d on one", c.Name, c.Sides[0].FileBytes, c.Sides[2].FileBytes)
		}
	}
}

func TestSampleRows(t *testing.T) {
	for _, tc := range []struct{ n, k, want int }{{10, 100, 10}, {1000, 100, 100}, {150, 100, 100}, {1 << 20, 10_000, 10_000}, {1, 1, 1}} {
		a := sampleRows(rand.New(rand.NewPCG(1, 2)), tc.n, tc.k)
		b := sampleRows(rand.New(rand.NewPCG(1, 2)), tc.n, tc.k)
		if len(a) != tc.want || !slices.Equal(a, b) {
			t.Errorf("n %d, k %d: %d rows (want %d), same seed same rows %v", tc.n, tc.k, len(a), tc.want, slices.Equal(a, b))
			continue
		}
		for i, r := range a {
			if r < 0 || r >= int64(tc.n) || i > 0 && r <= a[i-1] {
				t.Errorf("n %d, k %d: row %d at %d (not sorted, repeated or out of range)", tc.n, tc.k, r, i)
				break
			}
		}
	}
}

// TestSameTypeAs: only the nullability of nested fields is overlooked.
func TestSameTypeAs(t *testing.T) {
	mem := memory.NewGoAllocator()
	b := array.NewFixedSizeListBuilderWithField(mem, 2, arrow.Field{Name: "item", Type: arrow.PrimitiveTypes.Float32, Nullable: true})
	defer b.Release()
	b.Append(true)
	b.ValueBuilder().(*array.Float32Builder).AppendValues([]float32{1, 2}, nil)
	got := b.NewArray()
	defer got.Release()
	for _, tc := range []struct {
		want arrow.DataType
		ok   bool
	}{
		{arrow.FixedSizeListOfNonNullable(2, arrow.PrimitiveTypes.Float32), true},
		{arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), true},
		{arrow.FixedSizeListOfNonNullable(3, arrow.PrimitiveTypes.Float32), false},
		{arrow.FixedSizeListOfNonNullable(2, arrow.PrimitiveTypes.Int32), false},
		{arrow.FixedSizeListOfField(2, arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float32}), false},
	} {
		a := sameTypeAs(got, tc.want)
		if ok := arrow.TypeEqual(a.DataType(), tc.want); ok != tc.ok {
			t.Errorf("%s as %s: typed as %s", got.DataType(), tc.want, a.DataType())
		}
		if a.Len() != 1 {
			t.Errorf("%s: %d rows", tc.want, a.Len())
		}
		a.Release()
	}
}
