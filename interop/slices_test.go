package interop

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/writer"
)

// bigRecord is a 1M-row record of flat and nested columns.
func bigRecord(rows int) arrow.RecordBatch {
	mem := memory.NewGoAllocator()
	st := arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true}, arrow.Field{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "l", Type: arrow.ListOf(arrow.PrimitiveTypes.Int32), Nullable: true},
		{Name: "st", Type: st, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	ib := b.Field(0).(*array.Int64Builder)
	sb := b.Field(1).(*array.StringBuilder)
	lb := b.Field(2).(*array.ListBuilder)
	lv := lb.ValueBuilder().(*array.Int32Builder)
	stb := b.Field(3).(*array.StructBuilder)
	ab := stb.FieldBuilder(0).(*array.Int32Builder)
	bb := stb.FieldBuilder(1).(*array.StringBuilder)
	for i := range rows {
		x := uint64(i) * 0x9e3779b97f4a7c15
		if i%17 == 3 {
			ib.AppendNull()
		} else {
			ib.Append(int64(x >> 20))
		}
		sb.Append(fmt.Sprintf("row-%d-%x", i, x>>48))
		if i%13 == 5 {
			lb.AppendNull()
		} else {
			lb.Append(true)
			for k := 0; k < i%4; k++ {
				lv.Append(int32(x>>(8*k)) & 0xffff)
			}
		}
		if i%11 == 2 {
			stb.AppendNull()
			ab.AppendNull()
			bb.AppendNull()
		} else {
			stb.Append(true)
			ab.Append(int32(i % 1000))
			bb.Append(fmt.Sprint(i % 97))
		}
	}
	return b.NewRecordBatch()
}

// fresh copies rec into new buffers.
func fresh(t *testing.T, rec arrow.RecordBatch) arrow.RecordBatch {
	t.Helper()
	cols := make([]arrow.Array, rec.NumCols())
	for c := range cols {
		a, err := array.Concatenate([]arrow.Array{rec.Column(c)}, memory.NewGoAllocator())
		if err != nil {
			t.Fatal(err)
		}
		cols[c] = a
	}
	return array.NewRecordBatch(rec.Schema(), cols, rec.NumRows())
}

func pageCounts(t *testing.T, path string) ([]int, int64) {
	t.Helper()
	f, err := reader.OpenPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []int
	for c := 0; c < f.NumColumns(); c++ {
		out = append(out, len(f.Pages(c)))
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return out, st.Size()
}

// TestSlicesPageLikeFreshBatches (issue #9.9): pages are sized from the
// bytes a batch covers, not from the buffers behind it. 1000 ten-row slices
// of a 1M-row record give the same pages (and file size) as the same rows
// in fresh ten-row batches, at the default budget and at a small one; a
// dictionary column's slices share one page dictionary. Planar and pylance
// read every file.
func TestSlicesPageLikeFreshBatches(t *testing.T) {
	const rows, slices, per = 1 << 20, 1000, 10
	big := bigRecord(rows)
	var sliced, copied []arrow.RecordBatch
	for k := range slices {
		at := int64(k) * (rows / slices)
		s := big.NewSlice(at, at+per)
		sliced = append(sliced, s)
		copied = append(copied, fresh(t, s))
	}

	// A dictionary column of 5000 strings.
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	db := array.NewDictionaryBuilder(memory.NewGoAllocator(), dt).(*array.BinaryDictionaryBuilder)
	for i := range rows {
		if err := db.AppendString(fmt.Sprintf("value-%04d", (i*7919)%5000)); err != nil {
			t.Fatal(err)
		}
	}
	dschema := arrow.NewSchema([]arrow.Field{{Name: "d", Type: dt, Nullable: true}}, nil)
	dbig := array.NewRecordBatch(dschema, []arrow.Array{db.NewArray()}, rows)
	var dsliced []arrow.RecordBatch
	for k := range slices {
		at := int64(k) * (rows / slices)
		dsliced = append(dsliced, dbig.NewSlice(at, at+per))
	}
	// The same rows in one batch over one copy of the dictionary.
	dall := fresh(t, concatBatches(t, dsliced))

	dir := t.TempDir()
	files := map[string][]arrow.RecordBatch{}
	write := func(name string, recs []arrow.RecordBatch, opts ...writer.Option) string {
		p := filepath.Join(dir, name+".lance")
		writePlanar(t, p, recs, opts...)
		files[p] = recs
		return p
	}
	for _, budget := range []int64{writer.DefaultMaxPageBytes, 16 << 10} {
		opt := writer.WithMaxPageBytes(budget)
		ps, ss := pageCounts(t, write(fmt.Sprintf("sliced-%d", budget), sliced, opt))
		pf, sf := pageCounts(t, write(fmt.Sprintf("fresh-%d", budget), copied, opt))
		for c := range ps {
			if ps[c] != pf[c] {
				t.Errorf("budget %d, column %d: %d pages from slices, %d from fresh batches", budget, c, ps[c], pf[c])
			}
		}
		if float64(ss) > 1.05*float64(sf) || float64(sf) > 1.05*float64(ss) {
			t.Errorf("budget %d: %d bytes from slices, %d from fresh batches", budget, ss, sf)
		}
		t.Logf("budget %d: pages %v / %v, bytes %d / %d", budget, ps, pf, ss, sf)
	}
	ps, ss := pageCounts(t, write("dict-sliced", dsliced))
	pf, sf := pageCounts(t, write("dict-one-batch", []arrow.RecordBatch{dall}))
	if ps[0] != pf[0] || float64(ss) > 1.1*float64(sf) {
		t.Errorf("dictionary column: %d pages and %d bytes from slices, %d and %d from one batch", ps[0], ss, pf[0], sf)
	}
	t.Logf("dictionary: pages %v / %v, bytes %d / %d", ps, pf, ss, sf)
	verifyFiles(t, dir, files)
}

// TestPageDictionaryFitsIndexType: batches with different dictionaries share
// a page dictionary (their dictionaries back to back); a page is cut before
// that dictionary outgrows the column's index type, so every key stays
// addressable. Three batches of 100-entry int8-keyed dictionaries (flat, and
// below a list; 120 distinct values in all, so the column fits its keys)
// used to make one 300-entry page that neither planar nor pylance could
// read.
func TestPageDictionaryFitsIndexType(t *testing.T) {
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	lt := arrow.ListOf(dt)
	schema := arrow.NewSchema([]arrow.Field{{Name: "d", Type: dt, Nullable: true}, {Name: "l", Type: lt, Nullable: true}}, nil)
	var recs []arrow.RecordBatch
	for b := range 3 {
		rb := array.NewRecordBuilder(memory.NewGoAllocator(), schema)
		db := rb.Field(0).(*array.BinaryDictionaryBuilder)
		lb := rb.Field(1).(*array.ListBuilder)
		ldb := lb.ValueBuilder().(*array.BinaryDictionaryBuilder)
		for i := range 100 {
			if err := db.AppendString(fmt.Sprintf("v%d", (i+10*b)%120)); err != nil {
				t.Fatal(err)
			}
			lb.Append(true)
			if err := ldb.AppendString(fmt.Sprintf("l%d", (99-i+10*b)%120)); err != nil {
				t.Fatal(err)
			}
		}
		recs = append(recs, rb.NewRecordBatch())
		rb.Release()
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "dicts.lance")
	writePlanar(t, p, recs)
	pages, _ := pageCounts(t, p)
	t.Logf("pages per column: %v", pages)
	// Read each batch's rows as a range (pylance cannot read a range across
	// pages whose dictionaries add up past the keys, FORMAT.md §5c).
	f, err := reader.OpenPath(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var want [][]any
	for k, r := range recs {
		got, err := f.ReadRange(int64(k)*100, 100)
		if err != nil {
			t.Fatalf("planar: rows of batch %d: %v", k, err)
		}
		for c := range 2 {
			if !equalValues(got.Column(c), r.Column(c)) {
				t.Errorf("planar: batch %d, column %d differs", k, c)
			}
		}
		for i := range 100 {
			want = append(want, []any{r.Column(0).GetOneForMarshal(i), r.Column(1).GetOneForMarshal(i)})
		}
	}
	wantJSON, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	script := `
import json, sys
from lance.file import LanceFileReader
r = LanceFileReader(sys.argv[1])
want = json.loads(sys.argv[2])
for k in range(3):
    t = r.read_range(100 * k, 100).to_table()
    got = [[d, l] for d, l in zip(t.column("d").to_pylist(), t.column("l").to_pylist())]
    if got != want[100 * k:100 * (k + 1)]:
        print("batch", k, "differs:", got[:3], want[100 * k:100 * k + 3])
        sys.exit(1)
print("ok")
`
	out, err := exec.Command(python(t), "-c", script, p, string(wantJSON)).CombinedOutput()
	if err != nil {
		t.Errorf("pylance: %v\n%s", err, out)
	}
}
