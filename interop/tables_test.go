package interop

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	lds "github.com/planarlance/planar/dataset"
)

// Tables that pylance 14.0.2 and LanceDB 0.40.0 (Lance 13.0.0) edited,
// read and edited by planar: one test per defect of the table-interop
// issue, each doing the edit with pylance and, where the client can, with
// LanceDB. Every planar read is compared row by row (schema names, types
// and nullability too) with pylance's view of the same version
// (tblEnv.check: CountRows, ReadAll, Scan, NewRecordReader with a
// projection, Take, Take past the end); after every planar commit pylance's
// validate() must pass and LanceDB's to_arrow() must equal pylance's
// to_table().
//
// What the clients write, as seen with the pinned versions (each test's
// fixture checks the part it relies on, so that no test can pass on a table
// that lacks the feature it is about):
//   - delete, update and merge_insert of both clients write deletion files:
//     an Arrow array (_deletions/*.arrow, DeletionFile ARROW_ARRAY) for few
//     rows, a roaring bitmap (*.bin, BITMAP) once a fragment loses 5,000
//     rows or more; update and merge_insert delete the old rows and append
//     the new ones as a new fragment.
//   - drop_columns leaves the dropped field's id in the data files' field
//     lists (removing only data files left with no live field), and the
//     next pylance add_columns takes a fresh id above every id in a data
//     file; a cast writes the column again as a new data file under a new
//     field id.
//   - add_columns(pa.field(...)) adds a field and no data file; LanceDB's
//     table.add (and pylance's append) of rows lacking a nullable column
//     writes a data file without that field.
//   - enable_stable_row_ids sets reader/writer feature flag 2 and inline row
//     ids on each fragment (deletion files add flag 1); neither client sets
//     max_allocated_field_id (manifest field 24) or writer flag 1<<15, nor
//     any table config on a new table.
//   - LanceDB's merge_insert refuses null vectors in its source unless told
//     on_bad_vectors="null" (tables_worker.py does); LanceDB 0.40 reads no
//     storage 2.3 table, pylance 14's own included, so the LanceDB check is
//     left out on 2.3 tables.
//   - pylance 14 still writes storage 2.0 and legacy (0.1) tables.
//
// TestMain (tables_harness_test.go) stops the one tables_worker.py process
// the tests share.

var tblBase = tblCreate{Client: "planar", Rows: 2400, MaxRows: 600}

func (c tblCreate) by(client string) tblCreate { c.Client = client; return c }

// tblSpread is a few offsets over a table of n rows (first, last, fragment
// edges, repeats, out of order).
func tblSpread(n int64) [][]int64 {
	if n <= 0 {
		return nil
	}
	pick := func(xs ...int64) []int64 {
		var out []int64
		for _, x := range xs {
			if x >= 0 && x < n {
				out = append(out, x)
			}
		}
		return out
	}
	return [][]int64{
		pick(0, 1, 2, 99, 100, 599, 600, 601, 1199, 1200, n/2, n-2, n-1),
		pick(n-1, 37, 5, 37, 0, n/3, 2*n/3),
	}
}

// tblExpectCount fails unless pylance counted want rows for the named filter.
func tblExpectCount(t *testing.T, r *tblResult, name string, want int64) {
	t.Helper()
	got, ok := r.View.Counts[name]
	if !ok {
		t.Errorf("pylance count %q missing (view: %v)", name, r.View.err())
		return
	}
	if got != want {
		t.Errorf("pylance count_rows(%s) = %d, want %d", name, got, want)
	}
}

// addColumnsAndCheck backfills col with planar from pylance's ids and
// checks pylance sees it right.
func (e *tblEnv) addColumnsAndCheck(t *testing.T, what, uri string, col tblNewCol) bool {
	t.Helper()
	_, want := e.mustView(uri, tblCheck{})
	if _, err := e.planarAddColumns(uri, tblIDsOf(want), col); err != nil {
		t.Errorf("%s: planar AddColumns(%s): %v", what, col.Name, err)
		e.logManifest(uri)
		return false
	}
	r := e.afterCommit(what+": AddColumns "+col.Name, uri, tblCheck{Fracs: [][]float64{{0, 0.5, 0.999}},
		Counts: map[string]string{"right": col.Filter()}})
	tblExpectCount(t, r, "right", r.View.Count)
	return true
}

// appendAndCheck appends n rows with planar and checks the table.
func (e *tblEnv) appendAndCheck(t *testing.T, what, uri string, first int64, n int) bool {
	t.Helper()
	if _, err := e.planarAppend(uri, first, n, 0); err != nil {
		t.Errorf("%s: planar Append: %v", what, err)
		e.logManifest(uri)
		return false
	}
	r := e.afterCommit(what+": Append", uri, tblCheck{Fracs: [][]float64{{0, 0.25, 0.5, 0.999, 0.5}},
		Counts: map[string]string{"appended": fmt.Sprintf("id >= %d AND id < %d", first, first+int64(n))}})
	tblExpectCount(t, r, "appended", int64(n))
	return true
}

// TestTablesAddColumnsAfterDrop (defect 1): after drop_columns of the
// column with the highest field id, planar's AddColumns must give the new
// column a field id no data file uses: pylance must read the new values
// (where id2 = 20 finds row 10) and validate() must pass.
func TestTablesAddColumnsAfterDrop(t *testing.T) {
	cases := []struct {
		name, client string
		addFirst     bool // add column x with SQL first, then drop it
		drop         string
	}{
		{"pylance-drop-val", "lance", false, "val"},
		{"lancedb-drop-val", "lancedb", false, "val"},
		{"pylance-drop-added", "lance", true, "x"},
		{"lancedb-drop-added", "lancedb", true, "x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newTblEnv(t)
			uri := e.mustCreate("t", tblBase)
			if tc.addFirst {
				e.must(map[string]any{"op": "add_columns", "uri": uri, "client": tc.client, "exprs": map[string]string{"x": "id * 5"}})
			}
			e.must(map[string]any{"op": "drop_columns", "uri": uri, "client": tc.client, "columns": []string{tc.drop}})
			e.mustMatch("after drop_columns", uri, tblCheck{Takes: tblSpread(2400)})
			_, want := e.mustView(uri, tblCheck{})
			col := tblNewCol{Name: "id2", Mul: 2}
			if _, err := e.planarAddColumns(uri, tblIDsOf(want), col); err != nil {
				e.logManifest(uri)
				t.Fatalf("planar AddColumns: %v", err)
			}
			r := e.afterCommit("AddColumns id2", uri, tblCheck{Takes: tblSpread(2400),
				Counts: map[string]string{"id2 = 20": "id2 = 20", "right": col.Filter()}})
			tblExpectCount(t, r, "id2 = 20", 1)
			tblExpectCount(t, r, "right", 2400)
			if m, err := tblLatestRawManifest(uri); err == nil {
				t.Logf("%s", m)
			}
		})
	}
}

// TestTablesTakeAfterDelete (defect 2): Take's offsets are logical, over
// the live rows, as pylance's take; an offset at or past CountRows is an
// error and no rows.
func TestTablesTakeAfterDelete(t *testing.T) {
	cases := []struct{ name, client, where string }{
		{"pylance-scattered", "lance", "id < 100 OR id % 10 = 3"},
		{"lancedb-scattered", "lancedb", "id < 100 OR id % 10 = 3"},
		{"pylance-most-of-fragment-1", "lance", "id >= 600 AND id < 1150"},
		{"lancedb-whole-fragment-0", "lancedb", "id < 600 OR id = 1500"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newTblEnv(t)
			uri := e.mustCreate("t", tblBase)
			e.must(map[string]any{"op": "delete", "uri": uri, "client": tc.client, "where": tc.where})
			v, _ := e.mustView(uri, tblCheck{})
			if v.Count >= 2400 {
				t.Fatalf("the delete removed nothing (%d rows)", v.Count)
			}
			n := v.Count
			r := e.mustMatch("after delete", uri, tblCheck{Takes: append(tblSpread(n), []int64{n - 1, 0, n - 1})})
			// Say it plainly too: Take past the end.
			d, err := lds.Open(e.ctx, uri)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			for _, offs := range [][]int64{{n}, {n - 1, n}, {n + 10}} {
				got, err := d.Take(e.ctx, offs)
				if err == nil {
					rows := int64(-1)
					if got != nil {
						rows = got.NumRows()
					}
					t.Errorf("Take(%v) of %d live rows (%d physical): no error, %d rows", offs, n, 2400, rows)
				} else if got != nil {
					t.Errorf("Take(%v): rows came back with the error %v", offs, err)
				}
			}
			_ = r
		})
	}
}

// TestTablesSwapNames (defect 3): alter_columns swapping two same-typed
// columns' names (text <-> cat), in one call or through a temporary name:
// planar returns each column's data under its new name, as pylance does.
func TestTablesSwapNames(t *testing.T) {
	swap := []map[string]any{{"path": "text", "name": "cat"}, {"path": "cat", "name": "text"}}
	viaTmp := [][]map[string]any{
		{{"path": "text", "name": "tmp"}},
		{{"path": "cat", "name": "text"}},
		{{"path": "tmp", "name": "cat"}},
	}
	cases := []struct {
		name, client string
		calls        [][]map[string]any
	}{
		{"pylance-one-call", "lance", [][]map[string]any{swap}},
		{"lancedb-one-call", "lancedb", [][]map[string]any{swap}},
		{"pylance-via-temp", "lance", viaTmp},
		{"lancedb-via-temp", "lancedb", viaTmp},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newTblEnv(t)
			uri := e.mustCreate("t", tblBase)
			for _, alts := range tc.calls {
				e.must(map[string]any{"op": "alter_columns", "uri": uri, "client": tc.client, "alterations": alts})
			}
			_, want := e.mustView(uri, tblCheck{})
			// The fixture: pylance shows text's data under "cat".
			if c, ok := tblColumn(want, "cat").(*array.String); !ok || !strings.HasPrefix(c.Value(1), "text-") {
				t.Fatalf("pylance did not swap the names: cat is %v", tblColumn(want, "cat"))
			}
			e.mustMatch("after the swap", uri, tblCheck{Takes: tblSpread(2400)})
			if e.appendAndCheck(t, "after the swap", uri, 5000, 300) {
				e.addColumnsAndCheck(t, "after the swap", uri, tblNewCol{Name: "p", Mul: 3, Add: 1})
			}
		})
	}
}

// tblDeletionCase is one client edit that leaves deletion files.
type tblDeletionCase struct {
	name, client string
	create       tblCreate
	req          func(e *tblEnv, uri string) map[string]any
	kind         string // the deletion file type the fixture must have: "arrow" or "bitmap"
}

func tblDeletionCases() []tblDeletionCase {
	del := func(client, where string) func(*tblEnv, string) map[string]any {
		return func(_ *tblEnv, uri string) map[string]any {
			return map[string]any{"op": "delete", "uri": uri, "client": client, "where": where}
		}
	}
	upd := func(client string) func(*tblEnv, string) map[string]any {
		return func(_ *tblEnv, uri string) map[string]any {
			return map[string]any{"op": "update", "uri": uri, "client": client, "where": "id % 7 = 0 OR id < 20",
				"values": map[string]string{"val": "val + 1000", "text": "'updated'"}}
		}
	}
	merge := func(client string) func(*tblEnv, string) map[string]any {
		return func(e *tblEnv, uri string) map[string]any {
			ids := append(tblIDs(10, 50), tblIDs(1210, 20)...)
			ids = append(ids, tblIDs(9000, 30)...)
			rec, err := tblGen(tblSchema, ids, 1)
			if err != nil {
				e.t.Fatal(err)
			}
			p, err := e.ipcOf(rec)
			if err != nil {
				e.t.Fatal(err)
			}
			return map[string]any{"op": "merge_insert", "uri": uri, "client": client, "ipc": p}
		}
	}
	big := tblCreate{Client: "planar", Rows: 7000, MaxRows: 6000}
	return []tblDeletionCase{
		{"pylance-delete", "lance", tblBase, del("lance", "id % 10 = 3 OR id < 50"), "arrow"},
		{"pylance-delete-bitmap", "lance", big, del("lance", "id >= 100 AND id < 5900"), "bitmap"},
		{"lancedb-delete", "lancedb", tblBase, del("lancedb", "id % 10 = 3 OR id < 50"), "arrow"},
		{"lancedb-delete-bitmap", "lancedb", big, del("lancedb", "id >= 100 AND id < 5900"), "bitmap"},
		{"pylance-update", "lance", tblBase, upd("lance"), "arrow"},
		{"lancedb-update", "lancedb", tblBase, upd("lancedb"), "arrow"},
		{"pylance-merge-insert", "lance", tblBase, merge("lance"), "arrow"},
		{"lancedb-merge-insert", "lancedb", tblBase, merge("lancedb"), "arrow"},
	}
}

// TestTablesDeletionFiles (defect 4): tables with deletion files (pylance
// delete, update, merge_insert; LanceDB delete, update, merge_insert):
// Scan, ReadAll, NewRecordReader, Take equal pylance; planar's AddColumns
// and Append work on them.
func TestTablesDeletionFiles(t *testing.T) {
	for _, tc := range tblDeletionCases() {
		t.Run(tc.name, func(t *testing.T) {
			e := newTblEnv(t)
			uri := e.mustCreate("t", tc.create)
			e.must(tc.req(e, uri))
			m, err := tblLatestRawManifest(uri)
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]int{}
			for _, f := range m.Fragments {
				if f.Deletion != nil {
					kinds[f.Deletion.Type]++
				}
			}
			if kinds[tc.kind] == 0 {
				t.Fatalf("fixture: no %s deletion file after %s:\n%s", tc.kind, tc.name, m)
			}
			t.Logf("%s wrote deletion files %v (%s)", tc.name, kinds, m.WriterLibrary)
			v, _ := e.mustView(uri, tblCheck{})
			e.mustMatch("after "+tc.name, uri, tblCheck{Takes: tblSpread(v.Count)})
			if e.addColumnsAndCheck(t, "after "+tc.name, uri, tblNewCol{Name: "p", Mul: 3, Add: 1}) {
				if _, err := e.planarAppend(uri, 20000, 250, 0); err != nil {
					t.Errorf("planar Append after AddColumns: %v", err)
				} else {
					e.afterCommit("Append after AddColumns", uri, tblCheck{Fracs: [][]float64{{0, 0.3, 0.99}}})
				}
			}
		})
	}
}

// TestTablesSchemaEdits (defect 5): plain renames, drop_columns, casts and
// nullability changes by either client; planar's reads equal pylance's,
// and planar's Append and AddColumns work after them.
func TestTablesSchemaEdits(t *testing.T) {
	alter := func(alts ...map[string]any) map[string]any {
		return map[string]any{"op": "alter_columns", "alterations": alts}
	}
	drop := func(cols ...string) map[string]any { return map[string]any{"op": "drop_columns", "columns": cols} }
	cases := []struct {
		name, client string
		req          map[string]any
		want         string // a column name:type pylance must show after the edit, "" for none
		gone         string // a column pylance must no longer show
	}{
		{"pylance-rename", "lance", alter(map[string]any{"path": "text", "name": "title"}), "title:utf8", "text"},
		{"lancedb-rename", "lancedb", alter(map[string]any{"path": "text", "name": "title"}), "title:utf8", "text"},
		{"pylance-drop-text", "lance", drop("text"), "", "text"},
		{"lancedb-drop-cat", "lancedb", drop("cat"), "", "cat"},
		{"pylance-drop-vector", "lance", drop("vector"), "", "vector"},
		{"pylance-cast-float32", "lance", alter(map[string]any{"path": "val", "data_type": "float32"}), "val:float32", ""},
		{"lancedb-cast-float32", "lancedb", alter(map[string]any{"path": "val", "data_type": "float32"}), "val:float32", ""},
		{"pylance-cast-large-string", "lance", alter(map[string]any{"path": "text", "data_type": "large_string"}), "text:large_utf8", ""},
		{"pylance-not-null", "lance", map[string]any{"op": "set_not_null", "column": "cat"}, "cat:utf8", ""},
		{"lancedb-not-null", "lancedb", map[string]any{"op": "set_not_null", "column": "cat"}, "cat:utf8", ""},
		{"pylance-rename-and-cast", "lance", alter(map[string]any{"path": "val", "name": "score", "data_type": "float32"}), "score:float32", "val"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newTblEnv(t)
			uri := e.mustCreate("t", tblBase)
			req := map[string]any{"uri": uri, "client": tc.client}
			for k, v := range tc.req {
				req[k] = v
			}
			r := e.must(req)
			if req["op"] == "set_not_null" && !r.Changed {
				t.Fatalf("fixture: cat was left nullable")
			}
			_, want := e.mustView(uri, tblCheck{})
			names := tblNames(want.Schema())
			if tc.want != "" && !slices.Contains(names, tc.want) {
				t.Fatalf("fixture: pylance shows %v, want a column %s", names, tc.want)
			}
			if tc.gone != "" && len(want.Schema().FieldIndices(tc.gone)) > 0 {
				t.Fatalf("fixture: pylance still shows %s: %v", tc.gone, names)
			}
			e.mustMatch("after "+tc.name, uri, tblCheck{Takes: tblSpread(2400)})
			if e.appendAndCheck(t, "after "+tc.name, uri, 5000, 300) {
				e.addColumnsAndCheck(t, "after "+tc.name, uri, tblNewCol{Name: "p", Mul: 3, Add: 1})
			}
		})
	}
}

// tblRowIDMap is pylance's id -> _rowid.
func tblRowIDMap(v tblReply) map[uint64]uint64 {
	m := make(map[uint64]uint64, len(v.RowIDs))
	for _, p := range v.RowIDs {
		m[p[0]] = p[1]
	}
	return m
}

// tblSameRowIDs reports rows of before whose _rowid changed or vanished.
func tblSameRowIDs(before, after map[uint64]uint64) []string {
	var out []string
	for id, rid := range before {
		got, ok := after[id]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("row id=%d is gone", id))
		case got != rid:
			out = append(out, fmt.Sprintf("row id=%d: _rowid %d, was %d", id, got, rid))
		}
		if len(out) >= 5 {
			break
		}
	}
	return out
}

// TestTablesStableRowIDs (defect 6): a table made with
// enable_stable_row_ids=True: after planar's Append and AddColumns
// pylance's _rowid is unique, every old row keeps its _rowid, validate()
// passes and LanceDB reads the table.
func TestTablesStableRowIDs(t *testing.T) {
	cases := []struct {
		name string
		edit map[string]any
	}{
		{"fresh", nil},
		{"after-pylance-update", map[string]any{"op": "update", "where": "id % 50 = 0", "values": map[string]string{"val": "val + 1"}}},
		{"after-lancedb-delete", map[string]any{"op": "delete", "client": "lancedb", "where": "id % 9 = 2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newTblEnv(t)
			c := tblBase.by("pylance")
			c.StableRowIDs = true
			uri := e.mustCreate("t", c)
			if tc.edit != nil {
				req := map[string]any{"uri": uri}
				for k, v := range tc.edit {
					req[k] = v
				}
				e.must(req)
			}
			m, err := tblLatestRawManifest(uri)
			if err != nil {
				t.Fatal(err)
			}
			if m.ReaderFlags&2 == 0 {
				t.Fatalf("fixture: no stable row ids flag:\n%s", m)
			}
			t.Logf("pylance's stable-row-id table: %s", m)
			v0, _ := e.mustView(uri, tblCheck{RowIDs: true})
			before := tblRowIDMap(v0)
			e.mustMatch("before planar's commits", uri, tblCheck{Takes: tblSpread(v0.Count)})

			if _, err := e.planarAppend(uri, 5000, 300, 0); err != nil {
				t.Fatalf("planar Append: %v (a refusal is a failure: stable row ids must work)", err)
			}
			r := e.afterCommit("Append", uri, tblCheck{RowIDs: true, Fracs: [][]float64{{0, 0.5, 0.99}}})
			for _, d := range tblSameRowIDs(before, tblRowIDMap(r.View)) {
				t.Errorf("after planar's Append: %s", d)
			}
			after := tblRowIDMap(r.View)
			if len(after) != int(v0.Count)+300 {
				t.Errorf("after planar's Append pylance has %d row ids, want %d", len(after), v0.Count+300)
			}
			_, want := e.mustView(uri, tblCheck{})
			if _, err := e.planarAddColumns(uri, tblIDsOf(want), tblNewCol{Name: "p", Mul: 3}); err != nil {
				t.Fatalf("planar AddColumns: %v", err)
			}
			r = e.afterCommit("AddColumns", uri, tblCheck{RowIDs: true, Counts: map[string]string{"right": tblNewCol{Name: "p", Mul: 3}.Filter()}})
			tblExpectCount(t, r, "right", r.View.Count)
			for _, d := range tblSameRowIDs(after, tblRowIDMap(r.View)) {
				t.Errorf("after planar's AddColumns: %s", d)
			}
			e.logManifest(uri)
		})
	}
}

// TestTablesStorage21 (defect 6): a storage 2.1 table: planar reads it as
// pylance does (or refuses it typed, before any row), and planar's Append
// either works (pylance and LanceDB read it, validate() passes) or is
// refused with ErrUnsupported.
func TestTablesStorage21(t *testing.T) {
	e := newTblEnv(t)
	c := tblBase.by("pylance")
	c.Storage = "2.1"
	uri := e.mustCreate("t", c)
	r := e.check(uri, tblCheck{Takes: tblSpread(2400)})
	if len(r.Diffs) > 0 || r.ViewErr != nil || (r.PlanarErr != nil && !r.Refused()) {
		t.Errorf("reading a 2.1 table: %s", r)
	}
	if r.PlanarErr != nil {
		t.Logf("planar refuses to read the 2.1 table: %v", r.PlanarErr)
	}
	_, err := e.planarAppend(uri, 5000, 300, 0)
	switch {
	case errors.Is(err, lds.ErrUnsupported):
		t.Logf("planar refuses to append to a 2.1 table: %v", err)
	case err != nil:
		t.Errorf("planar Append to a 2.1 table: %v (want success or ErrUnsupported)", err)
	default:
		e.afterCommit("Append to a 2.1 table", uri, tblCheck{Takes: tblSpread(2700)})
		m, err := tblLatestRawManifest(uri)
		if err == nil {
			last := m.Fragments[len(m.Fragments)-1]
			t.Logf("planar appended data files of version %d.%d to the 2.1 table", last.Files[0].Major, last.Files[0].Minor)
		}
	}
}

// TestTablesStorage20Refused (defect 7): planar does not read storage 2.0
// data files: Open, or else Scan, NewRecordReader and Take, fail with
// ErrUnsupported, before any row; CountRows is right if Open works.
func TestTablesStorage20Refused(t *testing.T) {
	e := newTblEnv(t)
	c := tblBase.by("pylance")
	c.Storage = "2.0"
	uri := e.mustCreate("t", c)
	v, _ := e.mustView(uri, tblCheck{})
	if v.Storage != "2.0" {
		t.Fatalf("fixture: pylance made a %s table", v.Storage)
	}
	d, err := lds.Open(e.ctx, uri)
	if err != nil {
		if !errors.Is(err, lds.ErrUnsupported) {
			t.Fatalf("Open of a 2.0 table: %v, want ErrUnsupported", err)
		}
		return
	}
	if d.CountRows() != v.Count {
		t.Errorf("CountRows %d, pylance %d", d.CountRows(), v.Count)
	}
	batches := 0
	var scanErr error
	for rec, err := range d.Scan(e.ctx, 100) {
		if err != nil {
			scanErr = err
			break
		}
		batches++
		rec.Release()
	}
	if !errors.Is(scanErr, lds.ErrUnsupported) {
		t.Errorf("Scan of a 2.0 table: error %v after %d batches, want ErrUnsupported", scanErr, batches)
	} else if batches > 0 {
		t.Errorf("Scan of a 2.0 table yielded %d batches before ErrUnsupported", batches)
	}
	if rr, err := d.NewRecordReader(e.ctx, 100); err == nil {
		n := 0
		for rr.Next() {
			n++
		}
		if !errors.Is(rr.Err(), lds.ErrUnsupported) || n > 0 {
			t.Errorf("NewRecordReader of a 2.0 table: %d batches, error %v; want ErrUnsupported before any batch", n, rr.Err())
		}
		rr.Release()
	} else if !errors.Is(err, lds.ErrUnsupported) {
		t.Errorf("NewRecordReader of a 2.0 table: %v, want ErrUnsupported", err)
	}
	if rec, err := d.Take(e.ctx, []int64{0, 1, 1500}); !errors.Is(err, lds.ErrUnsupported) || rec != nil {
		t.Errorf("Take of a 2.0 table: error %v (rows %v), want ErrUnsupported and no rows", err, rec != nil)
	}
}

// TestTablesMissingColumn (defect 8): a column some fragments' data files
// lack (pylance and LanceDB add_columns(pa.field) add a field and no data;
// LanceDB's table.add and pylance's append of rows lacking a nullable
// column write data files without it): planar reads it as null exactly
// like pylance.
func TestTablesMissingColumn(t *testing.T) {
	type step func(e *tblEnv, uri string)
	field := func(client string) step {
		return func(e *tblEnv, uri string) {
			e.must(map[string]any{"op": "add_columns", "uri": uri, "client": client, "field": map[string]string{"name": "empty", "type": "int64"}})
		}
	}
	lacking := func(client, col string) step {
		return func(e *tblEnv, uri string) {
			_, want := e.mustView(uri, tblCheck{})
			var fields []arrow.Field
			for _, f := range want.Schema().Fields() {
				if f.Name != col {
					fields = append(fields, f)
				}
			}
			rec, err := tblGen(arrow.NewSchema(fields, nil), tblIDs(7000, 40), 0)
			if err != nil {
				e.t.Fatal(err)
			}
			p, err := e.ipcOf(rec)
			if err != nil {
				e.t.Fatal(err)
			}
			e.must(map[string]any{"op": "append", "uri": uri, "client": client, "ipc": p})
		}
	}
	cases := []struct {
		name  string
		steps []step
		col   string // the column some fragments lack
	}{
		{"pylance-field", []step{field("lance")}, "empty"},
		{"lancedb-field", []step{field("lancedb")}, "empty"},
		{"lancedb-add-rows-lacking-text", []step{lacking("lancedb", "text")}, "text"},
		{"pylance-append-lacking-cat", []step{lacking("lance", "cat")}, "cat"},
		{"pylance-field-then-lancedb-rows-lacking-it", []step{field("lance"), lacking("lancedb", "empty")}, "empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newTblEnv(t)
			uri := e.mustCreate("t", tblBase)
			for _, s := range tc.steps {
				s(e, uri)
			}
			m, err := tblLatestRawManifest(uri)
			if err != nil {
				t.Fatal(err)
			}
			var id int32 = -1
			for _, f := range m.Fields {
				if f.Name == tc.col {
					id = f.ID
				}
			}
			lacks := 0
			for _, f := range m.Fragments {
				has := false
				for _, df := range f.Files {
					has = has || slices.Contains(df.Fields, id)
				}
				if !has {
					lacks++
				}
			}
			if lacks == 0 {
				t.Fatalf("fixture: every fragment holds %s:\n%s", tc.col, m)
			}
			_, want := e.mustView(uri, tblCheck{})
			if c := tblColumn(want, tc.col); c == nil || c.NullN() == 0 {
				t.Fatalf("fixture: pylance shows no null in %s", tc.col)
			}
			e.mustMatch("with "+tc.col+" missing from "+fmt.Sprint(lacks)+" fragments", uri, tblCheck{Takes: tblSpread(want.NumRows())})
			if e.appendAndCheck(t, tc.name, uri, 5000, 300) {
				e.addColumnsAndCheck(t, tc.name, uri, tblNewCol{Name: "p", Mul: 3, Add: 1})
			}
		})
	}
}

// TestTablesRefuseBeforeFirstRow (defect 9): when planar cannot read a
// table (the feature in its last fragment only, or everywhere), Scan and
// NewRecordReader fail before yielding any batch; when it can, the rows are
// pylance's.
func TestTablesRefuseBeforeFirstRow(t *testing.T) {
	type fixture struct {
		name   string
		create tblCreate
		edits  []map[string]any
	}
	v20 := tblBase.by("pylance")
	v20.Storage = "2.0"
	legacy := tblBase.by("pylance")
	legacy.Storage = "legacy"
	stable := tblBase.by("pylance")
	stable.StableRowIDs = true
	cases := []fixture{
		{"deletion-in-last-fragment", tblBase, []map[string]any{{"op": "delete", "where": "id >= 2300"}}},
		{"lancedb-deletion-in-last-fragment", tblBase, []map[string]any{{"op": "delete", "client": "lancedb", "where": "id = 2399"}}},
		{"lancedb-update-last-fragment", tblBase, []map[string]any{{"op": "update", "client": "lancedb", "where": "id >= 2390", "values": map[string]string{"val": "0"}}}},
		{"dropped-column", tblBase, []map[string]any{{"op": "drop_columns", "columns": []string{"text"}}}},
		{"schema-only-column", tblBase, []map[string]any{{"op": "add_columns", "field": map[string]string{"name": "empty", "type": "string"}}}},
		{"renamed-column", tblBase, []map[string]any{{"op": "alter_columns", "alterations": []map[string]any{{"path": "cat", "name": "kind"}}}}},
		{"stable-row-ids-updated", stable, []map[string]any{{"op": "update", "where": "id >= 2390", "values": map[string]string{"val": "0"}}}},
		{"storage-2.0", v20, nil},
		{"legacy", legacy, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newTblEnv(t)
			uri := e.mustCreate("t", tc.create)
			for _, ed := range tc.edits {
				req := map[string]any{"uri": uri}
				for k, v := range ed {
					req[k] = v
				}
				e.must(req)
			}
			r := e.check(uri, tblCheck{Takes: tblSpread(2000)})
			if r.ViewErr != nil {
				t.Fatalf("pylance: %v", r.ViewErr)
			}
			for _, d := range r.Diffs {
				t.Errorf("%s", d)
			}
			if r.PlanarErr != nil {
				t.Logf("planar refused (%s): %v", r.Stage, r.PlanarErr)
			}
		})
	}
}

// TestTablesV1ManifestNames (defect 10): a table whose manifests have V1
// names (pylance enable_v2_manifest_paths=False): after planar's Append,
// AddColumns, CommitAppend and Overwrite, pylance 14 still opens it (no
// "multiple manifest naming schemes") and _versions/ holds V1 names only;
// pylance's next append keeps working.
func TestTablesV1ManifestNames(t *testing.T) {
	ops := []struct {
		name string
		do   func(e *tblEnv, uri string, ids []int64) error
	}{
		{"Append", func(e *tblEnv, uri string, _ []int64) error { _, err := e.planarAppend(uri, 5000, 300, 0); return err }},
		{"AddColumns", func(e *tblEnv, uri string, ids []int64) error {
			_, err := e.planarAddColumns(uri, ids, tblNewCol{Name: "p", Mul: 3})
			return err
		}},
		{"CommitAppend", func(e *tblEnv, uri string, _ []int64) error {
			_, err := e.planarCommitAppend(uri, 5000, 300, 0)
			return err
		}},
		{"Overwrite", func(e *tblEnv, uri string, _ []int64) error {
			_, err := e.planarOverwrite(uri, 100000, 500)
			return err
		}},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			e := newTblEnv(t)
			c := tblBase.by("pylance")
			c.V1Names = true
			uri := e.mustCreate("t", c)
			v1, v2, err := tblManifestFiles(uri)
			if err != nil || len(v1) != 1 || len(v2) != 0 {
				t.Fatalf("fixture: V1 names %v, V2 names %v (%v)", v1, v2, err)
			}
			_, want := e.mustView(uri, tblCheck{})
			if err := op.do(e, uri, tblIDsOf(want)); err != nil {
				t.Fatalf("planar %s on a table with V1 manifest names: %v", op.name, err)
			}
			e.afterCommit(op.name, uri, tblCheck{Fracs: [][]float64{{0, 0.5, 0.99}}})
			checkV1 := func(when string) {
				v1, v2, err := tblManifestFiles(uri)
				if err != nil {
					t.Fatal(err)
				}
				if len(v2) > 0 {
					var names []string
					for _, p := range v2 {
						names = append(names, p[strings.LastIndex(p, "/")+1:])
					}
					t.Errorf("%s: _versions/ holds V2 names %v next to V1 names for %d versions", when, names, len(v1))
				}
			}
			checkV1("after planar's " + op.name)
			// pylance's next commit.
			rec, err := tblGen(want.Schema(), tblIDs(90000, 20), 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, want2, err := e.view(uri, tblCheck{}); err == nil {
				rec, err = tblGen(want2.Schema(), tblIDs(90000, 20), 0)
				if err != nil {
					t.Fatal(err)
				}
			}
			p, err := e.ipcOf(rec)
			if err != nil {
				t.Fatal(err)
			}
			if r := e.do(map[string]any{"op": "append", "uri": uri, "ipc": p}); r.err() != nil {
				t.Errorf("pylance append after planar's %s: %v", op.name, r.err())
			} else {
				e.mustMatch("pylance append after planar's "+op.name, uri, tblCheck{Validate: true})
				checkV1("after pylance's append")
			}
		})
	}
}

// TestTablesLegacyStorage (defect 11): tables of the legacy (0.1) format,
// which pylance 14 still writes: planar's Open refuses them with
// ErrUnsupported or reads them right; CountRows is never wrong.
func TestTablesLegacyStorage(t *testing.T) {
	cases := []struct {
		name    string
		storage string
		edit    map[string]any
	}{
		{"legacy", "legacy", nil},
		{"0.1-with-deletions", "0.1", map[string]any{"op": "delete", "where": "id % 10 = 3 OR id < 50"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newTblEnv(t)
			c := tblBase.by("pylance")
			c.Storage = tc.storage
			uri, err := e.create("t", c)
			if err != nil {
				t.Logf("pylance 14 cannot write data_storage_version=%q (%v): nothing to check", tc.storage, err)
				return
			}
			if tc.edit != nil {
				req := map[string]any{"uri": uri}
				for k, v := range tc.edit {
					req[k] = v
				}
				e.must(req)
			}
			v, _ := e.mustView(uri, tblCheck{})
			if v.Storage != "0.1" {
				t.Fatalf("fixture: pylance made a %s table", v.Storage)
			}
			d, err := lds.Open(e.ctx, uri)
			if err != nil {
				if !errors.Is(err, lds.ErrUnsupported) {
					t.Errorf("Open of a %s table: %v, want ErrUnsupported or success", tc.storage, err)
				} else {
					t.Logf("planar's Open refuses the %s table: %v", tc.storage, err)
				}
				return
			}
			if d.CountRows() != v.Count {
				t.Errorf("CountRows of a %s table: %d, pylance count_rows %d", tc.storage, d.CountRows(), v.Count)
			}
			r := e.check(uri, tblCheck{Takes: tblSpread(v.Count)})
			if r.ViewErr != nil {
				t.Fatalf("pylance: %v", r.ViewErr)
			}
			for _, df := range r.Diffs {
				t.Errorf("%s", df)
			}
			switch {
			case r.PlanarErr != nil && !r.Refused():
				t.Errorf("planar %s of a %s table: %v, want ErrUnsupported or the rows", r.Stage, tc.storage, r.PlanarErr)
			case r.PlanarErr != nil:
				t.Logf("planar opens the %s table (CountRows %d, right) and refuses to read it: %s: %v", tc.storage, d.CountRows(), r.Stage, r.PlanarErr)
			default:
				t.Logf("planar reads the %s table as pylance does", tc.storage)
			}
		})
	}
}

// TestTablesMaintenance: what must keep working: reads after
// compact_files, cleanup_old_versions, restore and LanceDB's optimize, of
// the latest and of older versions, and planar's Append after them.
func TestTablesMaintenance(t *testing.T) {
	type step = map[string]any
	cases := []struct {
		name  string
		steps []step
	}{
		{"compact-after-deletes", []step{
			{"op": "delete", "where": "id % 10 = 3"},
			{"op": "update", "where": "id % 7 = 0", "values": map[string]string{"val": "val * 2"}},
			{"op": "compact", "target_rows": 500},
		}},
		{"cleanup", []step{
			{"op": "add_columns", "exprs": map[string]string{"x": "id * 5"}},
			{"op": "delete", "where": "id < 30"},
			{"op": "cleanup"},
		}},
		{"restore", []step{
			{"op": "add_columns", "exprs": map[string]string{"x": "id * 5"}},
			{"op": "delete", "where": "id < 30"},
			{"op": "restore", "version": 1},
		}},
		{"restore-after-rename", []step{
			{"op": "alter_columns", "alterations": []map[string]any{{"path": "text", "name": "title"}}},
			{"op": "delete", "where": "id % 3 = 0"},
			{"op": "restore", "version": 2},
		}},
		{"lancedb-optimize", []step{
			{"op": "delete", "client": "lancedb", "where": "id % 4 = 1"},
			{"op": "optimize"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newTblEnv(t)
			uri := e.mustCreate("t", tblBase)
			for _, s := range tc.steps {
				req := map[string]any{"uri": uri}
				for k, v := range s {
					req[k] = v
				}
				e.must(req)
			}
			v, _ := e.mustView(uri, tblCheck{})
			e.mustMatch("after "+tc.name, uri, tblCheck{Takes: tblSpread(v.Count)})
			for _, ver := range v.Versions {
				if ver != v.Version {
					e.mustMatch(fmt.Sprintf("version %d", ver), uri, tblCheck{Version: ver, Fracs: [][]float64{{0, 0.5, 0.99}}})
				}
			}
			if _, err := e.planarAppend(uri, 5000, 300, 0); err != nil {
				t.Errorf("planar Append after %s: %v", tc.name, err)
			} else {
				e.afterCommit("Append after "+tc.name, uri, tblCheck{Fracs: [][]float64{{0, 0.5, 0.99}}})
			}
		})
	}
}

// TestTablesIndexConfigSurviveAppend: a scalar index and table config that
// pylance set survive planar's Append; the index still answers queries.
func TestTablesIndexConfigSurviveAppend(t *testing.T) {
	e := newTblEnv(t)
	uri := e.mustCreate("t", tblBase)
	e.must(map[string]any{"op": "index", "uri": uri, "column": "id"})
	e.must(map[string]any{"op": "config", "uri": uri, "set": map[string]string{"planar.test": "kept"}})
	v, _ := e.mustView(uri, tblCheck{})
	if len(v.Indices) == 0 || v.Config["planar.test"] != "kept" {
		t.Fatalf("fixture: indices %v config %v", v.Indices, v.Config)
	}
	if _, err := e.planarAppend(uri, 5000, 300, 0); err != nil {
		t.Fatalf("planar Append: %v", err)
	}
	r := e.afterCommit("Append", uri, tblCheck{Counts: map[string]string{"old": "id = 7", "new": "id = 5007"}})
	if !slices.Equal(r.View.Indices, v.Indices) {
		t.Errorf("indices after planar's Append: %v, want %v", r.View.Indices, v.Indices)
	}
	if r.View.Config["planar.test"] != "kept" {
		t.Errorf("config after planar's Append: %v", r.View.Config)
	}
	tblExpectCount(t, r, "old", 1)
	tblExpectCount(t, r, "new", 1)
}

// TestTablesComparator: the comparison the table tests rely on sees a
// changed value, a null, a column order and a nullability.
func TestTablesComparator(t *testing.T) {
	a, err := tblGen(tblSchema, tblIDs(0, 50), 0)
	if err != nil {
		t.Fatal(err)
	}
	same, _ := tblGen(tblSchema, tblIDs(0, 50), 0)
	other, _ := tblGen(tblSchema, tblIDs(0, 50), 1)
	if d := tblDiffBatch("same", same, a, 4); len(d) > 0 {
		t.Errorf("equal batches differ: %v", d)
	}
	if d := tblDiffBatch("salt", other, a, 4); len(d) == 0 {
		t.Errorf("batches of other values compare equal")
	}
	if d := tblDiffBatch("rows", a.NewSlice(0, 49), a, 4); len(d) == 0 {
		t.Errorf("a batch one row short compares equal")
	}
	swapped := tblProject(a, []string{"id", "vector", "cat", "text", "val"})
	if d := tblDiffBatch("order", swapped, a, 4); len(d) == 0 {
		t.Errorf("swapped columns compare equal")
	}
	fields := slices.Clone(tblSchema.Fields())
	fields[3].Nullable = false
	nn := array.NewRecordBatch(arrow.NewSchema(fields, nil), a.Columns(), a.NumRows())
	if d := tblDiffBatch("nullable", nn, a, 4); len(d) == 0 {
		t.Errorf("a nullability difference compares equal")
	}
}
