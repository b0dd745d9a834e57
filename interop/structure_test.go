package interop

import (
	"bufio"
	"bytes"
	"encoding/json"
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
					_ = name
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

var _ = os.Getenv

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
