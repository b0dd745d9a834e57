package interop

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	lds "github.com/planarlance/planar/dataset"
	"github.com/planarlance/planar/writer"
)

// pyAppend appends the one-batch Arrow IPC file argv[2] to the dataset
// argv[1] with pylance and prints {"ok": true, "rows": [...ids]} or
// {"ok": false, "error": ...}.
const pyAppend = `
import json, sys
import lance, pyarrow as pa
uri, src = sys.argv[1], sys.argv[2]
t = pa.ipc.open_file(src).read_all()
try:
    lance.write_dataset(t, uri, mode="append")
    d = lance.dataset(uri)
    print(json.dumps({"ok": True, "table": d.to_table().to_pylist()}))
except Exception as e:
    print(json.dumps({"ok": False, "error": str(e)[:300]}))
`

// TestAppendAcceptsWhatPylanceAccepts: the same appends to the same table,
// by pylance 14 and by planar, are accepted or refused alike, and what was
// accepted reads back the same. planar's Write is typed: a schema it cannot
// store is ErrSchemaMismatch, a null in a non-nullable field
// writer.ErrInvalidBatch.
func TestAppendAcceptsWhatPylanceAccepts(t *testing.T) {
	py := python(t)
	ctx := context.Background()
	st := func(nullable bool) arrow.DataType {
		return arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: nullable})
	}
	base := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "x", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "st", Type: st(false), Nullable: true},
	}, nil)
	row := func(s *arrow.Schema, js string) arrow.RecordBatch {
		rec, _, err := array.RecordFromJSON(memory.DefaultAllocator, s, strings.NewReader(js))
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	with := func(i int, f arrow.Field) *arrow.Schema {
		fs := append([]arrow.Field(nil), base.Fields()...)
		fs[i] = f
		return arrow.NewSchema(fs, nil)
	}
	nullableID := with(0, arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true})
	cases := []struct {
		name   string
		rec    arrow.RecordBatch
		accept bool
		err    error // planar's, when refused
	}{
		{"nullable id, no null", row(nullableID, `[{"id": 3, "x": 3.0, "s": "c", "st": {"a": 3}}]`), true, nil},
		{"nullable id, a null", row(nullableID, `[{"id": null, "x": 3.0, "s": "c", "st": {"a": 3}}]`), false, writer.ErrInvalidBatch},
		{"int32 id", row(with(0, arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int32}), `[{"id": 3, "x": 3.0, "s": "c", "st": {"a": 3}}]`), false, lds.ErrSchemaMismatch},
		{"float32 x", row(with(1, arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Float32, Nullable: true}), `[{"id": 3, "x": 3.0, "s": "c", "st": {"a": 3}}]`), false, lds.ErrSchemaMismatch},
		{"large_string s", row(with(2, arrow.Field{Name: "s", Type: arrow.BinaryTypes.LargeString, Nullable: true}), `[{"id": 3, "x": 3.0, "s": "c", "st": {"a": 3}}]`), false, lds.ErrSchemaMismatch},
		{"nullable struct child, no null", row(with(3, arrow.Field{Name: "st", Type: st(true), Nullable: true}), `[{"id": 3, "x": 3.0, "s": "c", "st": {"a": 3}}]`), true, nil},
		{"reordered", row(arrow.NewSchema([]arrow.Field{base.Field(1), base.Field(0), base.Field(2), base.Field(3)}, nil), `[{"x": 3.0, "id": 3, "s": "c", "st": {"a": 3}}]`), true, nil},
		{"nullable columns left out", row(arrow.NewSchema(base.Fields()[:2], nil), `[{"id": 3, "x": 3.0}]`), true, nil},
		{"non-nullable column left out", row(arrow.NewSchema(base.Fields()[1:], nil), `[{"x": 3.0, "s": "c", "st": {"a": 3}}]`), false, lds.ErrSchemaMismatch},
		{"unknown column", row(arrow.NewSchema(append(append([]arrow.Field(nil), base.Fields()...), arrow.Field{Name: "z", Type: arrow.PrimitiveTypes.Int8, Nullable: true}), nil), `[{"id": 3, "x": 3.0, "s": "c", "st": {"a": 3}, "z": 1}]`), false, lds.ErrSchemaMismatch},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer c.rec.Release()
			dir := t.TempDir()
			first := row(base, `[{"id": 1, "x": 1.0, "s": "a", "st": {"a": 1}}, {"id": 2, "x": null, "s": null, "st": null}]`)
			defer first.Release()
			// pylance: its own dataset, the same rows.
			pyURI := filepath.Join(dir, "py.lance")
			w, err := lds.Create(ctx, pyURI, base)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(first); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			src := filepath.Join(dir, "append.arrow")
			writeIPC(t, src, []arrow.RecordBatch{c.rec})
			out, err := exec.Command(py, "-c", pyAppend, pyURI, src).Output()
			if err != nil {
				t.Fatalf("python: %v", err)
			}
			var res struct {
				OK    bool             `json:"ok"`
				Error string           `json:"error"`
				Table []map[string]any `json:"table"`
			}
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("python said %s", out)
			}
			// planar: the same.
			uri := filepath.Join(dir, "planar.lance")
			w, err = lds.Create(ctx, uri, base)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(first); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			a, err := lds.Append(ctx, uri)
			if err != nil {
				t.Fatal(err)
			}
			werr := a.Write(c.rec)
			if res.OK != (werr == nil) || res.OK != c.accept {
				t.Fatalf("pylance accepts: %v (%s); planar: %v; want accepted %v", res.OK, res.Error, werr, c.accept)
			}
			if werr != nil {
				if !errors.Is(werr, c.err) {
					t.Fatalf("planar refused with %v, want %v", werr, c.err)
				}
				_ = a.Abort()
				return
			}
			d, err := a.Commit(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.ReadAll(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer got.Release()
			gj, _ := json.Marshal(recordRows(t, got))
			pj, _ := json.Marshal(res.Table)
			if string(gj) != string(pj) {
				t.Fatalf("planar reads %s, pylance %s", gj, pj)
			}
		})
	}
}

// recordRows is rec as JSON rows (arrow-go's encoding).
func recordRows(t *testing.T, rec arrow.RecordBatch) []map[string]any {
	t.Helper()
	b, err := rec.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}
