package interop

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/writer"
)

// Tests of the structural plane (issue #9): files whose structure planar
// used to get wrong without an error at write time. Every case is written in
// 2.2 and 2.3, under both selector policies and several page budgets, and
// read back by planar and by pylance.

// structCase is one column of nested data, given as JSON rows.
type structCase struct {
	name string
	typ  arrow.DataType
	rows string // JSON array of rows
	// budgets are the page budgets (writer.WithMaxPageBytes) to write with;
	// 0 is the default.
	budgets []int64
	// batch cuts the rows into batches of this many rows (0: one batch).
	batch int
	// only23: Lance 14 reads this type only from 2.3 files; writing 2.2
	// must fail with ErrUnsupportedType before anything is written.
	only23 bool
}

func (c structCase) records(t *testing.T) []arrow.RecordBatch {
	t.Helper()
	mem := memory.NewGoAllocator()
	a, _, err := array.FromJSON(mem, c.typ, strings.NewReader(c.rows))
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "c", Type: c.typ, Nullable: true}}, nil)
	n := a.Len()
	step := c.batch
	if step <= 0 || step > n {
		step = n
	}
	var recs []arrow.RecordBatch
	for off := 0; off < n || off == 0; off += step {
		end := min(off+step, n)
		s := array.NewSlice(a, int64(off), int64(end))
		recs = append(recs, array.NewRecordBatch(schema, []arrow.Array{s}, int64(end-off)))
		if n == 0 {
			break
		}
	}
	return recs
}

// repeatRows returns a JSON array of rows repeated n times.
func repeatRows(n int, rows ...string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < n; i++ {
		for j, r := range rows {
			if i > 0 || j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(r)
		}
	}
	b.WriteByte(']')
	return b.String()
}

type pyRead struct {
	File  string   `json:"file"`
	OK    bool     `json:"ok"`
	Diffs []string `json:"diffs"`
	Error *string  `json:"error"`
}

// pylanceReads has pylance read every planar file of datasets and compare
// it with its Arrow IPC copy (check.py's check_file), one file at a time in
// a process that reports each file as it finishes: a pylance abort (which
// kills the process) is reported as that file's error and the remaining
// files are checked in a new process.
func pylanceReads(t *testing.T, py string, datasets []dataset) map[string]pyRead {
	t.Helper()
	type job struct{ file, arrow string }
	var jobs []job
	for _, d := range datasets {
		for _, p := range d.Planar {
			jobs = append(jobs, job{p.File, d.Arrow})
		}
	}
	const script = `
import json, sys
sys.path.insert(0, sys.argv[1])
import check
for line in sys.stdin:
    spec = json.loads(line)
    print(json.dumps({"file": spec["file"], "start": True}), flush=True)
    r = check.check_file({"file": spec["file"]}, check.read_ipc(spec["arrow"]))
    print(json.dumps(r), flush=True)
`
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]pyRead{}
	for len(jobs) > 0 {
		var in bytes.Buffer
		for _, j := range jobs {
			b, _ := json.Marshal(map[string]string{"file": j.file, "arrow": j.arrow})
			in.Write(append(b, '\n'))
		}
		cmd := exec.Command(py, "-c", script, here)
		cmd.Stdin = &in
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, _ := cmd.Output()
		started := ""
		sc := bufio.NewScanner(bytes.NewReader(stdout))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var r struct {
				pyRead
				Start bool `json:"start"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("pylance runner output %q: %v", sc.Text(), err)
			}
			if r.Start {
				started = r.File
				continue
			}
			started = ""
			out[r.File] = r.pyRead
		}
		rest := jobs[:0]
		for _, j := range jobs {
			if _, done := out[j.file]; !done {
				rest = append(rest, j)
			}
		}
		if len(rest) == len(jobs) && started == "" {
			t.Fatalf("pylance runner made no progress: %s", stderr.String())
		}
		if started != "" {
			msg := strings.TrimSpace(stderr.String())
			if len(msg) > 400 {
				msg = msg[len(msg)-400:]
			}
			msg = "pylance process died: " + msg
			out[started] = pyRead{File: started, Error: &msg}
			k := rest[:0]
			for _, j := range rest {
				if j.file != started {
					k = append(k, j)
				}
			}
			rest = k
		}
		jobs = rest
	}
	return out
}

type policyCase struct {
	name string
	p    selector.Policy
}

var structPolicies = []policyCase{{"cost", selector.PolicyCost}, {"lance", selector.PolicyLance}}

// checkStructCases writes every case in 2.2 and 2.3, under both policies
// and each of the case's page budgets, then reads each file back with planar
// (whole file, a range and a take) and with pylance.
func checkStructCases(t *testing.T, cases []structCase) {
	t.Helper()
	py := python(t)
	dir := t.TempDir()
	var datasets []dataset
	wants := map[string]arrow.RecordBatch{}
	for ci, c := range cases {
		recs := c.records(t)
		ds := dataset{Arrow: filepath.Join(dir, fmt.Sprintf("case%03d.arrow", ci))}
		writeIPC(t, ds.Arrow, recs)
		budgets := c.budgets
		if len(budgets) == 0 {
			budgets = []int64{0}
		}
		for _, f := range []writer.Format{writer.Format2_2, writer.Format2_3} {
			for _, pol := range structPolicies {
				for _, b := range budgets {
					name := fmt.Sprintf("%s.%s.%s.b%d.lance", c.name, f, pol.name, b)
					p := filepath.Join(dir, fmt.Sprintf("case%03d.%s.%s.b%d.lance", ci, f, pol.name, b))
					opts := []writer.Option{writer.WithFormat(f), writer.WithPolicy(pol.p)}
					if b > 0 {
						opts = append(opts, writer.WithMaxPageBytes(b))
					}
					w, err := writer.Create(p, recs[0].Schema(), opts...)
					if c.only23 && f == writer.Format2_2 {
						if !errors.Is(err, writer.ErrUnsupportedType) {
							t.Errorf("%s: writer.Create: %v, want ErrUnsupportedType", name, err)
						}
						if _, serr := os.Stat(p); !os.IsNotExist(serr) {
							t.Errorf("%s: refused, yet the file exists (%v)", name, serr)
						}
						if w != nil {
							w.Close()
						}
						continue
					}
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					for _, r := range recs {
						if err := w.WriteBatch(r); err != nil {
							t.Fatalf("%s: %v", name, err)
						}
					}
					if err := w.Close(); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					ds.Planar = append(ds.Planar, fileSpec{File: p, Format: f.String()})
					wants[p] = concatRecords(t, recs)
				}
			}
		}
		datasets = append(datasets, ds)
	}
	label := func(p string) string {
		base := filepath.Base(p)
		var ci int
		fmt.Sscanf(base, "case%03d.", &ci)
		return cases[ci].name + strings.TrimPrefix(base, fmt.Sprintf("case%03d", ci))
	}
	for _, ds := range datasets {
		for _, p := range ds.Planar {
			t.Run("planar/"+label(p.File), func(t *testing.T) { checkPlanarRead(t, p.File, wants[p.File]) })
		}
	}
	reads := pylanceReads(t, py, datasets)
	for _, ds := range datasets {
		for _, p := range ds.Planar {
			r, ok := reads[p.File]
			switch {
			case !ok:
				t.Errorf("pylance/%s: no result", label(p.File))
			case r.Error != nil:
				t.Errorf("pylance/%s: %s", label(p.File), *r.Error)
			case !r.OK:
				t.Errorf("pylance/%s: %s", label(p.File), strings.Join(r.Diffs, "; "))
			}
		}
	}
}

// concatRecords joins the batches of one column into one record.
func concatRecords(t *testing.T, recs []arrow.RecordBatch) arrow.RecordBatch {
	t.Helper()
	if len(recs) == 1 {
		return recs[0]
	}
	var parts []arrow.Array
	n := int64(0)
	for _, r := range recs {
		parts = append(parts, r.Column(0))
		n += r.NumRows()
	}
	a, err := array.Concatenate(parts, memory.NewGoAllocator())
	if err != nil {
		t.Fatal(err)
	}
	return array.NewRecordBatch(recs[0].Schema(), []arrow.Array{a}, n)
}

func listOf(t arrow.DataType) arrow.DataType { return arrow.ListOf(t) }

func structOf(fs ...arrow.Field) arrow.DataType { return arrow.StructOf(fs...) }

func fld(name string, t arrow.DataType) arrow.Field {
	return arrow.Field{Name: name, Type: t, Nullable: true}
}

// TestSparseSequencesReadable: pages written as sparse x none / constant
// (structured all-null or constant pages) whose position and count
// sequences are empty, one value, all equal or arithmetic used to be stored
// as Range with step 0 or bit packing of width 0, which pylance refuses.
func TestSparseSequencesReadable(t *testing.T) {
	i64, i32 := arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32
	mp := arrow.MapOf(arrow.BinaryTypes.String, i32)
	small := []int64{0, 64}
	cases := []structCase{
		{name: "one_list_row", typ: listOf(i64), rows: `[[1]]`},
		{name: "same_list_1000", typ: listOf(i64), rows: repeatRows(1000, `[7]`), budgets: small},
		{name: "list_then_null", typ: listOf(i64), rows: repeatRows(500, `[1]`, `null`), budgets: small},
		{name: "null_then_list", typ: listOf(i64), rows: repeatRows(300, `null`, `[1, 1]`), budgets: small},
		{name: "struct_list", typ: structOf(fld("x", listOf(i64))), rows: repeatRows(10, `{"x": [1]}`)},
		{name: "map_only_null", typ: mp, rows: repeatRows(20, `[{"key": "only", "value": null}]`), budgets: small},
		{name: "map_only_null_one", typ: mp, rows: `[[{"key": "only", "value": null}]]`},
		{name: "one_row_struct_null_list", typ: structOf(fld("a", listOf(i32))), rows: `[{"a": null}]`},
		{name: "one_row_list_list", typ: listOf(listOf(i32)), rows: `[[[5]]]`},
		{name: "one_row_list_null_item", typ: listOf(i32), rows: `[[null]]`},
		{name: "one_row_list_empty", typ: listOf(i32), rows: `[[]]`},
		{name: "list_every_third", typ: listOf(i32), rows: repeatRows(200, `[3, 3]`, `[]`, `null`), budgets: small},
		{name: "list_counts_vary", typ: listOf(i32), rows: repeatRows(100, `[4]`, `[4, 4, 4]`, `[4, 4]`, `[4, 4, 4, 4, 4, 4, 4]`), budgets: small},
		{name: "list_list_const", typ: listOf(listOf(i64)), rows: repeatRows(50, `[[2], [2, 2]]`, `[[], null]`)},
	}
	checkStructCases(t, cases)
}

// TestListUnderNullableParent: a list layer whose only nulls are pushed down
// from a null parent used to be ALL_VALID_LIST between nullable layers, and
// pylance refused the file ("Structural validity has 4 entries for an array
// with 3 values") (issue #9.3). Nestings with lists below nullable structs,
// lists and maps, with nulls at every level.
func TestListUnderNullableParent(t *testing.T) {
	i32, str := arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String
	sl := structOf(fld("a", listOf(i32)))
	lsl := listOf(structOf(fld("a", i32), fld("b", listOf(str))))
	ssll := structOf(fld("s", structOf(fld("l", listOf(listOf(i32))))))
	lsls := listOf(structOf(fld("l", listOf(structOf(fld("m", listOf(i32)))))))
	mpl := arrow.MapOf(str, listOf(i32))
	budgets := []int64{0, 48}
	cases := []structCase{
		{name: "struct_list_issue", typ: sl, rows: `[{"a": [null]}, null, {"a": [1, 2]}]`},
		{name: "list_struct_list_issue", typ: lsl, rows: `[[{"a": 1, "b": [null, "x"]}, null], [{"a": 2, "b": ["y"]}]]`},
		{name: "struct_list_mixed", typ: sl, rows: repeatRows(40, `{"a": [null, 3]}`, `null`, `{"a": []}`, `{"a": [4]}`, `{"a": null}`), budgets: budgets},
		{name: "struct_list_parent_only", typ: sl, rows: repeatRows(40, `{"a": [5, null]}`, `null`, `{"a": [6]}`), budgets: budgets},
		{name: "list_struct_list_mixed", typ: lsl, rows: repeatRows(30, `[{"a": 1, "b": [null, "x"]}, null]`, `[{"a": null, "b": []}]`, `null`, `[]`, `[{"a": 3, "b": null}, {"a": 4, "b": ["z", "w"]}]`), budgets: budgets},
		{name: "struct_struct_list_list", typ: ssll, rows: repeatRows(30, `{"s": {"l": [[1, null], []]}}`, `{"s": null}`, `null`, `{"s": {"l": [null, [2]]}}`, `{"s": {"l": null}}`), budgets: budgets},
		{name: "list_struct_list_struct_list", typ: lsls, rows: repeatRows(25, `[{"l": [{"m": [1, null]}, null]}, null]`, `[{"l": null}]`, `[{"l": [{"m": null}, {"m": []}]}]`, `null`), budgets: budgets},
		{name: "map_of_lists", typ: mpl, rows: repeatRows(30, `[{"key": "k", "value": [1, null]}, {"key": "n", "value": null}]`, `null`, `[]`, `[{"key": "e", "value": []}]`), budgets: budgets},
	}
	checkStructCases(t, cases)
}

// TestPageLayersAcrossPages: pages of one column whose content changes
// (all-null rows, then rows with null children, then valid rows) used to
// get different layer kinds, and pylance failed when a read spanned pages
// with a struct that is all-valid in one and nullable in the other
// ("Incorrect number of nulls for StructArray") (issue #9.10). Tiny page
// budgets cut every batch into several pages.
func TestPageLayersAcrossPages(t *testing.T) {
	i32, str := arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String
	sl := structOf(fld("a", listOf(i32)))
	lsl := listOf(structOf(fld("a", i32), fld("b", listOf(str))))
	ssl := structOf(fld("s", structOf(fld("l", listOf(i32)))))
	tiny := []int64{1, 16, 200}
	seq := func(parts ...string) string {
		var b strings.Builder
		b.WriteByte('[')
		for i, p := range parts {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strings.TrimSuffix(strings.TrimPrefix(p, "["), "]"))
		}
		b.WriteByte(']')
		return b.String()
	}
	cases := []structCase{
		{name: "null_rows_then_null_child", typ: sl, rows: seq(repeatRows(5, `null`), repeatRows(5, `{"a": null}`)), budgets: tiny, batch: 5},
		{name: "valid_then_null_rows", typ: sl, rows: seq(repeatRows(20, `{"a": [1, 2]}`), repeatRows(20, `null`), repeatRows(20, `{"a": [3]}`)), budgets: tiny, batch: 20},
		{name: "valid_then_mixed", typ: sl, rows: seq(repeatRows(30, `{"a": [1]}`), repeatRows(10, `{"a": [null]}`, `null`, `{"a": []}`)), budgets: tiny, batch: 30},
		{name: "list_struct_list_changes", typ: lsl, rows: seq(repeatRows(15, `[{"a": 1, "b": ["x"]}]`), repeatRows(15, `[null, {"a": null, "b": null}]`), repeatRows(15, `null`), repeatRows(15, `[{"a": 2, "b": []}]`)), budgets: tiny, batch: 15},
		{name: "struct_struct_list_changes", typ: ssl, rows: seq(repeatRows(10, `{"s": {"l": [1]}}`), repeatRows(10, `{"s": null}`), repeatRows(10, `null`), repeatRows(10, `{"s": {"l": null}}`)), budgets: tiny, batch: 10},
	}
	checkStructCases(t, cases)
}

// TestStructuralFSLBelowList: a structural fixed-size list (of structs)
// below a list used to multiply the page row count by its dimension: planar
// read the file as corrupt and pylance aborted (issue #9.4).
func TestStructuralFSLBelowList(t *testing.T) {
	i32 := arrow.PrimitiveTypes.Int32
	fs := func(n int32, inner arrow.DataType) arrow.DataType { return arrow.FixedSizeListOf(n, inner) }
	lfs := listOf(fs(2, structOf(fld("x", i32))))
	sfs := structOf(fld("f", fs(2, structOf(fld("x", i32)))))
	fsl := fs(2, structOf(fld("l", listOf(i32))))
	lfsl := listOf(fs(2, structOf(fld("l", listOf(i32)))))
	cases := []structCase{
		{name: "list_fsl_struct_one", only23: true, typ: lfs, rows: `[[[{"x": 1}, {"x": 2}]]]`},
		{name: "list_fsl_struct", only23: true, typ: lfs, rows: repeatRows(20, `[[{"x": 1}, {"x": 2}], [{"x": 3}, null]]`, `[]`, `null`, `[null]`, `[[{"x": null}, {"x": 5}]]`), budgets: []int64{0, 64}},
		{name: "struct_fsl_struct", typ: sfs, rows: repeatRows(20, `{"f": [{"x": 1}, {"x": 2}]}`, `null`, `{"f": null}`, `{"f": [null, {"x": null}]}`), budgets: []int64{0, 64}},
		{name: "fsl_struct_list", only23: true, typ: fsl, rows: repeatRows(10, `[{"l": [1, 2]}, {"l": []}]`, `null`, `[{"l": null}, null]`)},
		{name: "list_fsl_struct_const", only23: true, typ: lfs, rows: repeatRows(15, `[[{"x": 7}, {"x": 7}]]`, `[]`, `null`)},
		{name: "list_fsl_struct_all_null", only23: true, typ: lfs, rows: repeatRows(15, `[[{"x": null}, null]]`, `null`)},
		{name: "list_fsl_struct_strings", only23: true, typ: listOf(fs(3, structOf(fld("s", arrow.BinaryTypes.String)))), rows: repeatRows(30, `[[{"s": "a"}, null, {"s": null}]]`, `[[{"s": "bb"}, {"s": "ccc"}, {"s": ""}], [{"s": "d"}, {"s": "e"}, {"s": "f"}]]`, `null`)},
		{name: "list_fsl_struct_list", only23: true, typ: lfsl, rows: repeatRows(10, `[[{"l": [1]}, {"l": [2, 3]}]]`, `[]`, `null`, `[[null, {"l": null}], [{"l": []}, {"l": [4]}]]`)},
	}
	checkStructCases(t, cases)
}

// fslRows returns n rows of a nested primitive fixed-size list with the
// given dimensions (outer first), as JSON, with a null at every level in
// turn: the row, a slot of each list layer, an item, none.
func fslRows(n int, dims []int) string {
	var b strings.Builder
	v := 0
	var gen func(r, k int, top bool)
	gen = func(r, k int, top bool) {
		if k == len(dims) {
			v++
			if (r+v)%5 == 0 {
				b.WriteString("null")
			} else {
				fmt.Fprintf(&b, "%d", v%250)
			}
			return
		}
		b.WriteByte('[')
		for x := 0; x < dims[k]; x++ {
			if x > 0 {
				b.WriteByte(',')
			}
			// Null slot x of layer k in every (len(dims)+2)-th row, shifted
			// per layer so every layer has nulls in some rows.
			if r%(len(dims)+3) == k+1 && x == r%dims[k] {
				b.WriteString("null")
				continue
			}
			gen(r, k+1, false)
		}
		b.WriteByte(']')
	}
	b.WriteByte('[')
	for r := 0; r < n; r++ {
		if r > 0 {
			b.WriteByte(',')
		}
		if r%7 == 3 {
			b.WriteString("null")
			continue
		}
		gen(r, 0, true)
	}
	b.WriteByte(']')
	return b.String()
}

// TestNestedFSLNulls: nulls inside a nested primitive fixed-size list (a
// null inner list, a null item) used to be dropped: only the innermost
// layer of a single-level FSL stored its validity (issue #9.1). Two and
// three levels, narrow (chunked) and wide (zipped) rows, under lists and
// structs, with the lance policy storing every layer's validity and the
// cost policy the visible ones.
func TestNestedFSLNulls(t *testing.T) {
	fsl := func(n int32, t arrow.DataType) arrow.DataType { return arrow.FixedSizeListOf(n, t) }
	i16, f64, u8 := arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Float64, arrow.PrimitiveTypes.Uint8
	cases := []structCase{
		{name: "issue_fsl_fsl_i16", typ: fsl(3, fsl(2, i16)), rows: `[[[1, 2], null, [5, 6]], [[7, null], [9, 10], [11, 12]], null, [[13, 14], [15, 16], [17, 18]]]`},
		{name: "fsl_fsl_i16", typ: fsl(3, fsl(2, i16)), rows: fslRows(300, []int{3, 2}), budgets: []int64{0, 256}},
		{name: "fsl3_u8", typ: fsl(2, fsl(3, fsl(2, u8))), rows: fslRows(200, []int{2, 3, 2}), budgets: []int64{0, 256}},
		{name: "fsl_fsl_wide", typ: fsl(4, fsl(8, f64)), rows: fslRows(60, []int{4, 8})},
		{name: "fsl3_wide", typ: fsl(2, fsl(4, fsl(8, f64))), rows: fslRows(40, []int{2, 4, 8})},
		{name: "list_fsl_fsl", typ: listOf(fsl(2, fsl(2, i16))), rows: `[[[[1, null], null], [[3, 4], [5, 6]]], null, [], [null, [[7, 8], [null, null]]]]`},
		{name: "struct_fsl_fsl", typ: structOf(fld("v", fsl(2, fsl(3, i16)))), rows: `[{"v": [[1, 2, null], null]}, null, {"v": null}, {"v": [[4, 5, 6], [7, 8, 9]]}]`},
		{name: "only_inner_null_items", typ: fsl(2, fsl(2, i16)), rows: repeatRows(50, `[[1, null], [3, 4]]`, `[[5, 6], [7, 8]]`)},
		{name: "only_middle_nulls", typ: fsl(2, fsl(2, i16)), rows: repeatRows(50, `[null, [3, 4]]`, `[[5, 6], [7, 8]]`)},
	}
	checkStructCases(t, cases)
}
