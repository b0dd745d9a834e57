package interop

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	lds "github.com/planarlance/planar/dataset"
)

// TestTablesDifferential: random sequences of edits by planar (Append,
// AddColumns, WriteFragments + CommitAppend), pylance and LanceDB on small
// tables, planar's reads checked against pylance's view after every step
// (tblEnv.check: ReadAll, Scan, NewRecordReader, CountRows, random Takes),
// pylance's validate() and LanceDB's to_arrow() after every step of a table
// planar has committed to. Each seed gives one sequence, the same on every
// run (the ops are drawn up front; what an op picks — a column, a version —
// is a function of its numbers and of the table as pylance shows it).
//
// planar refusing an operation or a read with ErrUnsupported is counted,
// not failed, when the table has a feature planar may refuse (storage 2.0,
// 2.1, legacy); on any other table a refusal fails: deletions, renames,
// drops, casts, missing columns, stable row ids and V1 manifest names must
// all work. Wrong data always fails. A failure prints its seed, its steps
// and a Go literal to paste into tablesRegressions (TestTablesReplay).
//
//	go test ./interop -run TablesDifferential -tables.start 17 -tables.n 1 -tables.v
var (
	tablesN     = flag.Int("tables.n", 200, "random table sequences to run")
	tablesStart = flag.Uint64("tables.start", 1, "first table sequence seed")
	tablesV     = flag.Bool("tables.v", false, "log every step of every table sequence")
	tablesShow  = flag.Int("tables.show", 6, "failing table sequences to print in full")
	tablesKeep  = flag.Bool("tables.keepgoing", false, "run a failing sequence to its end (its first failure is reported)")
)

// tblOp is one step of a sequence: who does it, what, and two numbers the
// op turns into its choices (a column, a predicate, a row count).
type tblOp struct {
	Client string // "planar", "lance" (pylance) or "lancedb"
	Kind   string
	A, B   int
}

// tblSeq is one random sequence.
type tblSeq struct {
	Seed   uint64
	Create tblCreate
	Ops    []tblOp
}

// GoString is the sequence as a Go literal for tablesRegressions.
func (s tblSeq) GoString() string {
	var b strings.Builder
	c := s.Create
	fmt.Fprintf(&b, "{Seed: %d, Create: tblCreate{Client: %q, Storage: %q, StableRowIDs: %v, V1Names: %v, Rows: %d, MaxRows: %d}, Ops: []tblOp{",
		s.Seed, c.Client, c.Storage, c.StableRowIDs, c.V1Names, c.Rows, c.MaxRows)
	for _, o := range s.Ops {
		fmt.Fprintf(&b, "\n\t{%q, %q, %d, %d},", o.Client, o.Kind, o.A, o.B)
	}
	b.WriteString("\n}},")
	return b.String()
}

// tblOpWeights: the ops a sequence draws from, with weights.
var tblOpWeights = []struct {
	op tblOp
	w  int
}{
	{tblOp{Client: "planar", Kind: "append"}, 12},
	{tblOp{Client: "planar", Kind: "add_column"}, 10},
	{tblOp{Client: "planar", Kind: "commit_append"}, 4},
	{tblOp{Client: "planar", Kind: "overwrite"}, 1},
	{tblOp{Client: "lance", Kind: "append"}, 3},
	{tblOp{Client: "lance", Kind: "append_partial"}, 2},
	{tblOp{Client: "lance", Kind: "delete"}, 6},
	{tblOp{Client: "lance", Kind: "update"}, 4},
	{tblOp{Client: "lance", Kind: "merge_insert"}, 4},
	{tblOp{Client: "lance", Kind: "add_sql"}, 3},
	{tblOp{Client: "lance", Kind: "add_field"}, 3},
	{tblOp{Client: "lance", Kind: "drop"}, 3},
	{tblOp{Client: "lance", Kind: "rename"}, 3},
	{tblOp{Client: "lance", Kind: "swap"}, 2},
	{tblOp{Client: "lance", Kind: "cast"}, 3},
	{tblOp{Client: "lance", Kind: "not_null"}, 2},
	{tblOp{Client: "lance", Kind: "compact"}, 3},
	{tblOp{Client: "lance", Kind: "cleanup"}, 2},
	{tblOp{Client: "lance", Kind: "restore"}, 2},
	{tblOp{Client: "lance", Kind: "index"}, 2},
	{tblOp{Client: "lance", Kind: "config"}, 1},
	{tblOp{Client: "lancedb", Kind: "append"}, 2},
	{tblOp{Client: "lancedb", Kind: "append_partial"}, 2},
	{tblOp{Client: "lancedb", Kind: "delete"}, 4},
	{tblOp{Client: "lancedb", Kind: "update"}, 3},
	{tblOp{Client: "lancedb", Kind: "merge_insert"}, 3},
	{tblOp{Client: "lancedb", Kind: "add_sql"}, 2},
	{tblOp{Client: "lancedb", Kind: "add_field"}, 2},
	{tblOp{Client: "lancedb", Kind: "drop"}, 2},
	{tblOp{Client: "lancedb", Kind: "rename"}, 2},
	{tblOp{Client: "lancedb", Kind: "swap"}, 1},
	{tblOp{Client: "lancedb", Kind: "cast"}, 1},
	{tblOp{Client: "lancedb", Kind: "not_null"}, 1},
	{tblOp{Client: "lancedb", Kind: "optimize"}, 2},
}

// randomTblSeq draws the sequence of a seed.
func randomTblSeq(seed uint64) tblSeq {
	rng := rand.New(rand.NewPCG(seed, 0x7ab1e5))
	c := tblCreate{Client: "planar", Rows: 150 + rng.IntN(250), MaxRows: 50 + rng.IntN(100)}
	switch x := rng.Float64(); {
	case x < 0.40:
	case x < 0.50:
		c.Storage = "2.3"
	case x < 0.70:
		c.Client = "pylance"
	case x < 0.80:
		c.Client, c.StableRowIDs = "pylance", true
	case x < 0.90:
		c.Client, c.V1Names = "pylance", true
	case x < 0.95:
		c.Client, c.Storage = "pylance", "2.1"
	case x < 0.98:
		c.Client, c.Storage = "pylance", "2.0"
	default:
		c.Client, c.Storage = "pylance", "legacy"
	}
	total := 0
	for _, w := range tblOpWeights {
		total += w.w
	}
	seq := tblSeq{Seed: seed, Create: c}
	for n := 4 + rng.IntN(5); len(seq.Ops) < n; {
		x := rng.IntN(total)
		for _, w := range tblOpWeights {
			if x < w.w {
				op := w.op
				op.A, op.B = rng.IntN(1_000_000), rng.IntN(1_000_000)
				seq.Ops = append(seq.Ops, op)
				break
			}
			x -= w.w
		}
	}
	return seq
}

// tblRun is one sequence being run.
type tblRun struct {
	e        *tblEnv
	seq      tblSeq
	uri      string
	view     tblReply
	want     arrow.RecordBatch
	nextID   int64
	commits  int             // planar commits so far (its Create included)
	features map[string]bool // what the table has had
	steps    []string        // what each step did
	rowIDs   map[uint64]uint64
	log      func(string)
	stats    *tblStats
}

// tblStats is what a campaign counts.
type tblStats struct {
	seqs, steps, skipped int
	ops                  map[string]int
	refused              map[string]int // allowed refusals by op and reason
	notes                map[string]int // client complaints on tables planar never wrote
	noteSeed             map[string]uint64
	failures             []tblFailure
}

// note counts a client complaint and keeps the first seed that made it.
func (s *tblStats) note(seed uint64, msg string) {
	if _, ok := s.notes[msg]; !ok {
		s.noteSeed[msg] = seed
	}
	s.notes[msg]++
}

type tblFailure struct {
	seq   tblSeq
	step  int // the failing op (-1: creation)
	kind  string
	msg   string
	steps []string
}

// tblRefusable lists the table features for which planar may refuse.
var tblRefusable = []string{"storage-2.0", "storage-2.1", "legacy"}

// allowedRefusal names the feature that lets planar refuse, or "".
func (r *tblRun) allowedRefusal() string {
	for _, f := range tblRefusable {
		if r.features[f] {
			return f
		}
	}
	return ""
}

// features the defects are about: a refusal on a table with any of these
// (and none of tblRefusable) fails.
func (r *tblRun) featureList() string {
	var out []string
	for f := range r.features {
		out = append(out, f)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// tblErrFail ends a sequence with a failure of the given kind.
type tblErrFail struct{ kind, msg string }

func (e *tblErrFail) Error() string { return e.kind + ": " + e.msg }

func tblFailf(kind, format string, args ...any) error {
	return &tblErrFail{kind, fmt.Sprintf(format, args...)}
}

// tblErrSkip ends a sequence quietly (a client failed on a table planar never
// wrote: noted, not failed).
var tblErrSkip = errors.New("sequence ended by a client failure on a table planar never wrote")

// nonID is the table's columns other than id, as pylance shows them.
func (r *tblRun) nonID() []arrow.Field {
	var out []arrow.Field
	for _, f := range r.want.Schema().Fields() {
		if f.Name != "id" {
			out = append(out, f)
		}
	}
	return out
}

func (r *tblRun) ids() []int64 { return tblIDsOf(r.want) }

// client runs a client edit; a failure fails the sequence once planar has
// committed, else ends it as a note.
func (r *tblRun) client(req map[string]any) (tblReply, error) {
	req["uri"] = r.uri
	rep := r.e.do(req)
	if err := rep.err(); err != nil {
		if r.commits > 0 {
			return rep, tblFailf("client error", "%s %s: %v", req["op"], tblReqString(req), err)
		}
		r.stats.note(r.seq.Seed, fmt.Sprintf("%s %s failed on a client-only table: %s", req["client"], req["op"], firstLine(err.Error())))
		return rep, tblErrSkip
	}
	return rep, nil
}

// planarDone handles a planar op's error: nil, an allowed refusal (counted)
// or a failure.
func (r *tblRun) planarDone(what string, err error) (bool, error) {
	if err == nil {
		r.commits++
		return true, nil
	}
	if errors.Is(err, lds.ErrUnsupported) {
		if why := r.allowedRefusal(); why != "" {
			r.stats.refused[fmt.Sprintf("planar %s on a %s table", what, why)]++
			return false, nil
		}
		return false, tblFailf("refused", "planar %s refused a table with features [%s]: %v", what, r.featureList(), err)
	}
	return false, tblFailf("planar error", "planar %s: %v", what, err)
}

// rows generates n rows with fresh ids in the schema s.
func (r *tblRun) rows(s *arrow.Schema, n int, salt int64) (string, error) {
	rec, err := tblGen(s, tblIDs(r.nextID, n), salt)
	if err != nil {
		return "", err
	}
	defer rec.Release()
	r.nextID += int64(n)
	return r.e.ipcOf(rec)
}

// do runs op k; it returns the step's description. A nil error with
// skipped means the op did not apply to the table.
func (r *tblRun) do(k int, op tblOp) (desc string, skipped bool, err error) {
	salt := int64(k + 1)
	if op.Client == "lancedb" && r.view.Storage == "2.3" {
		return "lancedb " + op.Kind + ": LanceDB 0.40 (Lance 13) reads no storage 2.3 table", true, nil
	}
	nonID := r.nonID()
	pick := func(fs []arrow.Field) arrow.Field { return fs[op.A%len(fs)] }
	switch op.Client + " " + op.Kind {
	case "planar append", "planar commit_append":
		n := 5 + op.B%60
		first := r.nextID
		r.nextID += int64(n)
		var err error
		if op.Kind == "append" {
			_, err = r.e.planarAppend(r.uri, first, n, salt)
		} else {
			_, err = r.e.planarCommitAppend(r.uri, first, n, salt)
		}
		desc = fmt.Sprintf("planar %s %d rows (ids %d..)", op.Kind, n, first)
		ok, err := r.planarDone(op.Kind, err)
		return desc, !ok && err == nil, err
	case "planar overwrite":
		n := 5 + op.B%80
		first := r.nextID
		r.nextID += int64(n)
		_, err := r.e.planarOverwrite(r.uri, first, n)
		desc = fmt.Sprintf("planar Overwrite with %d rows of the starting schema (ids %d..)", n, first)
		ok, err := r.planarDone("Overwrite", err)
		return desc, !ok && err == nil, err
	case "planar add_column":
		col := tblNewCol{Name: fmt.Sprintf("p%d", k), Mul: int64(2 + op.A%5), Add: salt}
		_, err := r.e.planarAddColumns(r.uri, r.ids(), col)
		desc = fmt.Sprintf("planar AddColumns %s = id*%d+%d", col.Name, col.Mul, col.Add)
		ok, err := r.planarDone("AddColumns", err)
		if ok {
			v, _, verr := r.e.view(r.uri, tblCheck{Counts: map[string]string{"right": col.Filter()}})
			if verr != nil {
				return desc, false, tblFailf("client error", "pylance after planar's AddColumns: %v", verr)
			}
			if v.Counts["right"] != v.Count {
				return desc, false, tblFailf("wrong data", "pylance sees %s right on %d of %d rows (filter %s)", col.Name, v.Counts["right"], v.Count, col.Filter())
			}
		}
		return desc, !ok && err == nil, err
	case "lance append", "lancedb append", "lance append_partial", "lancedb append_partial":
		s := r.want.Schema()
		n := 5 + op.B%60
		desc = fmt.Sprintf("%s append %d rows", op.Client, n)
		if op.Kind == "append_partial" {
			var nullable []arrow.Field
			for _, f := range nonID {
				if f.Nullable {
					nullable = append(nullable, f)
				}
			}
			if len(nullable) > 0 {
				omit := pick(nullable).Name
				var fields []arrow.Field
				for _, f := range s.Fields() {
					if f.Name != omit {
						fields = append(fields, f)
					}
				}
				s = arrow.NewSchema(fields, nil)
				desc += " lacking " + omit
				r.features["missing"] = true
			}
		}
		p, err := r.rows(s, n, salt)
		if err != nil {
			return desc, false, err
		}
		_, err = r.client(map[string]any{"op": "append", "client": op.Client, "ipc": p})
		return desc, false, err
	case "lance delete", "lancedb delete":
		ids := r.ids()
		if len(ids) == 0 {
			return op.Client + " delete: no rows", true, nil
		}
		var where string
		switch op.A % 3 {
		case 0:
			m := 3 + op.A%11
			where = fmt.Sprintf("id %% %d = %d", m, op.B%m)
		case 1:
			lo := ids[op.B%len(ids)]
			where = fmt.Sprintf("id >= %d AND id < %d", lo, lo+int64(5+op.A%40))
		default:
			where = "id % 97 < 3"
		}
		r.features["deletions"] = true
		_, err := r.client(map[string]any{"op": "delete", "client": op.Client, "where": where})
		return fmt.Sprintf("%s delete where %s", op.Client, where), false, err
	case "lance update", "lancedb update":
		var elig []arrow.Field
		for _, f := range nonID {
			switch f.Type.ID() {
			case arrow.INT64, arrow.INT32, arrow.FLOAT64, arrow.FLOAT32, arrow.STRING, arrow.LARGE_STRING:
				elig = append(elig, f)
			}
		}
		if len(elig) == 0 || r.want.NumRows() == 0 {
			return op.Client + " update: nothing to update", true, nil
		}
		f := pick(elig)
		var val string
		switch f.Type.ID() {
		case arrow.INT64, arrow.INT32:
			val = f.Name + " + 1"
		case arrow.FLOAT64, arrow.FLOAT32:
			val = f.Name + " * 2"
		default:
			val = fmt.Sprintf("'u%d'", k)
		}
		m := 2 + op.B%9
		where := fmt.Sprintf("id %% %d = %d", m, op.A%m)
		r.features["deletions"] = true
		_, err := r.client(map[string]any{"op": "update", "client": op.Client, "where": where, "values": map[string]string{f.Name: val}})
		return fmt.Sprintf("%s update %s = %s where %s", op.Client, f.Name, val, where), false, err
	case "lance merge_insert", "lancedb merge_insert":
		ids := r.ids()
		var src []int64
		seen := map[int64]bool{}
		for j := 0; j < 1+op.A%10 && len(ids) > 0; j++ {
			id := ids[(op.B+j*7919)%len(ids)]
			if !seen[id] {
				seen[id] = true
				src = append(src, id)
			}
		}
		fresh := op.B % 15
		src = append(src, tblIDs(r.nextID, fresh)...)
		r.nextID += int64(fresh)
		rec, err := tblGen(r.want.Schema(), src, salt)
		if err != nil {
			return "", false, err
		}
		p, err := r.e.ipcOf(rec)
		rec.Release()
		if err != nil {
			return "", false, err
		}
		r.features["deletions"] = true
		_, err = r.client(map[string]any{"op": "merge_insert", "client": op.Client, "ipc": p})
		return fmt.Sprintf("%s merge_insert %d matched + %d new rows", op.Client, len(src)-fresh, fresh), false, err
	case "lance add_sql", "lancedb add_sql":
		name := fmt.Sprintf("s%d", k)
		exprs := []string{fmt.Sprintf("id * %d", 2+op.B%7), "CAST(id AS DOUBLE) / 3", "concat('s', CAST(id AS VARCHAR))"}
		expr := exprs[op.A%len(exprs)]
		_, err := r.client(map[string]any{"op": "add_columns", "client": op.Client, "exprs": map[string]string{name: expr}})
		return fmt.Sprintf("%s add_columns %s = %s", op.Client, name, expr), false, err
	case "lance add_field", "lancedb add_field":
		name := fmt.Sprintf("f%d", k)
		typ := []string{"int64", "string"}[op.A%2]
		r.features["missing"] = true
		_, err := r.client(map[string]any{"op": "add_columns", "client": op.Client, "field": map[string]string{"name": name, "type": typ}})
		return fmt.Sprintf("%s add_columns pa.field(%s, %s)", op.Client, name, typ), false, err
	case "lance drop", "lancedb drop":
		if len(nonID) <= 1 {
			return op.Client + " drop: too few columns", true, nil
		}
		f := pick(nonID)
		r.features["drop"] = true
		_, err := r.client(map[string]any{"op": "drop_columns", "client": op.Client, "columns": []string{f.Name}})
		return fmt.Sprintf("%s drop_columns %s", op.Client, f.Name), false, err
	case "lance rename", "lancedb rename":
		if len(nonID) == 0 {
			return op.Client + " rename: no column", true, nil
		}
		f := pick(nonID)
		name := fmt.Sprintf("r%d", k)
		r.features["rename"] = true
		_, err := r.client(map[string]any{"op": "alter_columns", "client": op.Client,
			"alterations": []map[string]any{{"path": f.Name, "name": name}}})
		return fmt.Sprintf("%s rename %s -> %s", op.Client, f.Name, name), false, err
	case "lance swap", "lancedb swap":
		var pairs [][2]string
		for i, a := range nonID {
			for _, b := range nonID[i+1:] {
				if arrow.TypeEqual(a.Type, b.Type) {
					pairs = append(pairs, [2]string{a.Name, b.Name})
				}
			}
		}
		if len(pairs) == 0 {
			return op.Client + " swap: no two columns of one type", true, nil
		}
		p := pairs[op.A%len(pairs)]
		r.features["rename"] = true
		_, err := r.client(map[string]any{"op": "alter_columns", "client": op.Client,
			"alterations": []map[string]any{{"path": p[0], "name": p[1]}, {"path": p[1], "name": p[0]}}})
		return fmt.Sprintf("%s swap names %s <-> %s", op.Client, p[0], p[1]), false, err
	case "lance cast", "lancedb cast":
		to := map[arrow.Type]string{arrow.FLOAT64: "float32", arrow.FLOAT32: "float64", arrow.INT64: "int32",
			arrow.INT32: "int64", arrow.STRING: "large_string"}
		var elig []arrow.Field
		for _, f := range nonID {
			if _, ok := to[f.Type.ID()]; ok {
				elig = append(elig, f)
			}
		}
		if len(elig) == 0 {
			return op.Client + " cast: no castable column", true, nil
		}
		f := pick(elig)
		r.features["cast"] = true
		_, err := r.client(map[string]any{"op": "alter_columns", "client": op.Client,
			"alterations": []map[string]any{{"path": f.Name, "data_type": to[f.Type.ID()]}}})
		return fmt.Sprintf("%s cast %s %s -> %s", op.Client, f.Name, f.Type, to[f.Type.ID()]), false, err
	case "lance not_null", "lancedb not_null":
		var elig []arrow.Field
		for _, f := range nonID {
			if f.Nullable {
				elig = append(elig, f)
			}
		}
		if len(elig) == 0 {
			return op.Client + " not_null: no nullable column", true, nil
		}
		f := pick(elig)
		rep, err := r.client(map[string]any{"op": "set_not_null", "client": op.Client, "column": f.Name})
		if err == nil && !rep.Changed {
			return fmt.Sprintf("%s set %s not null: it holds nulls", op.Client, f.Name), true, nil
		}
		r.features["cast"] = true
		return fmt.Sprintf("%s set %s not null", op.Client, f.Name), false, err
	case "lance compact":
		target := 40 + op.B%150
		_, err := r.client(map[string]any{"op": "compact", "client": op.Client, "target_rows": target})
		return fmt.Sprintf("lance compact_files(target_rows_per_fragment=%d)", target), false, err
	case "lance cleanup":
		_, err := r.client(map[string]any{"op": "cleanup", "client": op.Client})
		return "lance cleanup_old_versions(older_than=0)", false, err
	case "lance restore":
		var vs []uint64
		for _, v := range r.view.Versions {
			if v != r.view.Version {
				vs = append(vs, v)
			}
		}
		if len(vs) == 0 {
			return "lance restore: no older version", true, nil
		}
		v := vs[op.A%len(vs)]
		_, err := r.client(map[string]any{"op": "restore", "client": op.Client, "version": v})
		return fmt.Sprintf("lance restore version %d", v), false, err
	case "lance index":
		if slices.Contains(r.view.Indices, "id_idx") {
			return "lance index: id is indexed", true, nil
		}
		_, err := r.client(map[string]any{"op": "index", "client": op.Client, "column": "id"})
		return "lance create_scalar_index(id, BTREE)", false, err
	case "lance config":
		key := fmt.Sprintf("planar.k%d", op.A%3)
		_, err := r.client(map[string]any{"op": "config", "client": op.Client, "set": map[string]string{key: fmt.Sprint(k)}})
		return fmt.Sprintf("lance update_config(%s=%d)", key, k), false, err
	case "lancedb optimize":
		_, err := r.client(map[string]any{"op": "optimize", "client": op.Client})
		return "lancedb optimize(cleanup_older_than=0)", false, err
	}
	return "", false, fmt.Errorf("unknown op %+v", op)
}

// verify checks planar against pylance's latest version and loads the view
// for the next step.
func (r *tblRun) verify(k int, op *tblOp, planarStep bool) error {
	prev := r.view
	rng := rand.New(rand.NewPCG(r.seq.Seed, uint64(k)+1))
	var fracs [][]float64
	for i := 0; i < 2; i++ {
		fr := make([]float64, 1+rng.IntN(5))
		for j := range fr {
			fr[j] = rng.Float64()
		}
		fracs = append(fracs, fr)
	}
	// A random projection of the columns pylance showed last (nil: all,
	// reversed), for NewRecordReader.
	var proj []string
	if r.want != nil && rng.IntN(2) == 0 {
		for _, i := range rng.Perm(int(r.want.NumCols())) {
			if rng.IntN(2) == 0 || len(proj) == 0 {
				proj = append(proj, r.want.Schema().Field(i).Name)
			}
		}
	}
	stable := r.seq.Create.StableRowIDs
	res := r.e.check(r.uri, tblCheck{Fracs: fracs, Validate: true, LDB: true, RowIDs: stable, Project: proj})
	for _, n := range res.Notes {
		r.stats.note(r.seq.Seed, n)
	}
	if res.ViewErr == nil {
		// The next step works on what pylance shows, whatever planar did.
		defer func() {
			if r.want != nil {
				r.want.Release()
			}
			r.view, r.want = res.View, res.Want
			for _, id := range r.ids() {
				if id >= r.nextID {
					r.nextID = id + 1
				}
			}
		}()
	}
	if res.ViewErr != nil {
		if r.commits > 0 {
			return tblFailf("client error", "pylance cannot read the table: %v", res.ViewErr)
		}
		r.stats.note(r.seq.Seed, "pylance cannot read a client-only table: "+firstLine(res.ViewErr.Error()))
		return tblErrSkip
	}
	if len(res.ClientDiffs) > 0 {
		if r.commits > 0 {
			return tblFailf("client error", "%s", strings.Join(res.ClientDiffs, "; "))
		}
		for _, d := range res.ClientDiffs {
			r.stats.note(r.seq.Seed, "client-only table: "+firstLine(d))
		}
	}
	if len(res.Diffs) > 0 {
		kind := "wrong data"
		partial := true
		for _, d := range res.Diffs {
			partial = partial && (strings.HasPrefix(d, "Scan yielded") || strings.HasPrefix(d, "NewRecordReader yielded"))
		}
		if partial {
			kind = "rows before an error"
		}
		return tblFailf(kind, "%s", res.String())
	}
	if res.PlanarErr != nil {
		if !res.Refused() {
			return tblFailf("planar error", "planar %s: %v", res.Stage, res.PlanarErr)
		}
		if why := r.allowedRefusal(); why != "" {
			r.stats.refused[fmt.Sprintf("planar read (%s) of a %s table", res.Stage, why)]++
		} else {
			return tblFailf("refused", "planar %s refused a table with features [%s]: %v", res.Stage, r.featureList(), res.PlanarErr)
		}
	}
	if stable {
		now := tblRowIDMap(res.View)
		if planarStep && r.rowIDs != nil && (op == nil || op.Kind != "overwrite") {
			if d := tblSameRowIDs(r.rowIDs, now); len(d) > 0 {
				return tblFailf("wrong data", "stable row ids changed by planar's commit: %s", strings.Join(d, "; "))
			}
		}
		r.rowIDs = now
	}
	if r.seq.Create.V1Names && planarStep {
		if _, v2, err := tblManifestFiles(r.uri); err == nil && len(v2) > 0 {
			return tblFailf("wrong data", "planar wrote a V2 manifest name into a table with V1 names (%d V2 names)", len(v2))
		}
	}
	if planarStep && op != nil && op.Kind != "overwrite" {
		for _, idx := range prev.Indices {
			if !slices.Contains(res.View.Indices, idx) {
				return tblFailf("wrong data", "index %s lost by planar's %s (indices now %v)", idx, op.Kind, res.View.Indices)
			}
		}
		for key, val := range prev.Config {
			if res.View.Config[key] != val {
				return tblFailf("wrong data", "config %s=%s lost by planar's %s (config now %v)", key, val, op.Kind, res.View.Config)
			}
		}
	}
	// Now and then an older version too.
	var older []uint64
	for _, v := range res.View.Versions {
		if v != res.View.Version {
			older = append(older, v)
		}
	}
	if len(older) > 0 && rng.IntN(3) == 0 {
		v := older[rng.IntN(len(older))]
		old := r.e.check(r.uri, tblCheck{Version: v, Fracs: fracs[:1]})
		if old.Want != nil {
			defer old.Want.Release()
		}
		switch {
		case old.ViewErr != nil:
			r.stats.note(r.seq.Seed, "pylance cannot read an older version: "+firstLine(old.ViewErr.Error()))
		case len(old.Diffs) > 0:
			return tblFailf("wrong data", "version %d: %s", v, old.String())
		case old.PlanarErr != nil && !old.Refused():
			return tblFailf("planar error", "version %d: planar %s: %v", v, old.Stage, old.PlanarErr)
		case old.PlanarErr != nil && r.allowedRefusal() == "":
			return tblFailf("refused", "version %d: planar %s refused a table with features [%s]: %v", v, old.Stage, r.featureList(), old.PlanarErr)
		}
	}
	return nil
}

// runTblSeq runs one sequence on a fresh table named by its seed.
func runTblSeq(e *tblEnv, seq tblSeq, stats *tblStats, verbose bool) {
	r := &tblRun{e: e, seq: seq, uri: e.uri(fmt.Sprintf("s%d", seq.Seed)), features: map[string]bool{}, stats: stats}
	defer func() {
		if r.want != nil {
			r.want.Release()
		}
	}()
	stats.seqs++
	c := seq.Create
	switch {
	case c.Storage == "2.0":
		r.features["storage-2.0"] = true
	case c.Storage == "2.1":
		r.features["storage-2.1"] = true
	case c.Storage == "legacy":
		r.features["legacy"] = true
	}
	if c.StableRowIDs {
		r.features["stable-row-ids"] = true
	}
	if c.V1Names {
		r.features["v1-names"] = true
	}
	failed := false
	// fail records the sequence's first failure and says whether to go on.
	fail := func(step int, err error) bool {
		if failed {
			return *tablesKeep
		}
		failed = true
		var f *tblErrFail
		if !errors.As(err, &f) {
			f = &tblErrFail{"harness", err.Error()}
		}
		stats.failures = append(stats.failures, tblFailure{seq: seq, step: step, kind: f.kind, msg: f.msg, steps: slices.Clone(r.steps)})
		return *tablesKeep
	}
	desc := fmt.Sprintf("create by %s %+v", c.Client, c)
	r.steps = append(r.steps, desc)
	if verbose {
		fmt.Printf("tables seed %d: %s\n", seq.Seed, desc)
	}
	if _, err := e.create(fmt.Sprintf("s%d", seq.Seed), c); err != nil {
		if c.Client == "planar" {
			fail(-1, tblFailf("planar error", "create: %v", err))
		} else {
			stats.note(seq.Seed, "pylance create failed: "+firstLine(err.Error()))
		}
		return
	}
	if c.Client == "planar" {
		r.commits++
	}
	r.nextID = int64(c.Rows)
	if err := r.verify(-1, nil, c.Client == "planar"); err != nil {
		if err == tblErrSkip || !fail(-1, err) || r.want == nil {
			return
		}
	}
	for k, op := range seq.Ops {
		stats.ops[op.Client+" "+op.Kind]++
		stats.steps++
		before := r.commits
		desc, skipped, err := r.do(k, op)
		r.steps = append(r.steps, desc)
		if verbose {
			fmt.Printf("tables seed %d step %d: %s\n", seq.Seed, k, desc)
		}
		if err != nil {
			if err == tblErrSkip || !fail(k, err) {
				return
			}
		}
		if skipped {
			stats.skipped++
			continue
		}
		if err := r.verify(k, &seq.Ops[k], r.commits > before); err != nil {
			if err == tblErrSkip || !fail(k, err) {
				return
			}
		}
	}
	if !failed {
		_ = os.RemoveAll(r.uri)
	}
}

func newTblStats() *tblStats {
	return &tblStats{ops: map[string]int{}, refused: map[string]int{}, notes: map[string]int{}, noteSeed: map[string]uint64{}}
}

// report prints the campaign's summary and fails t for every failure.
func (s *tblStats) report(t *testing.T, elapsed time.Duration) {
	t.Helper()
	var sb strings.Builder
	fmt.Fprintf(&sb, "table sequences: %d run, %d steps (%d did not apply), %d failed, in %v\n",
		s.seqs, s.steps, s.skipped, len(s.failures), elapsed.Round(time.Millisecond))
	byKind := map[string]int{}
	byCause := map[string]int{}
	for _, f := range s.failures {
		byKind[f.kind]++
		step := "create"
		if f.step >= 0 {
			step = f.seq.Ops[f.step].Client + " " + f.seq.Ops[f.step].Kind
		}
		byCause[fmt.Sprintf("%s after %s: %s", f.kind, step, tblCause(f.msg))]++
	}
	tblWriteCounts(&sb, "failures by kind", byKind)
	tblWriteCounts(&sb, "failures by step and cause", byCause)
	tblWriteCounts(&sb, "refused (allowed)", s.refused)
	notes := map[string]int{}
	for k, n := range s.notes {
		notes[fmt.Sprintf("%s (first seed %d)", k, s.noteSeed[k])] = n
	}
	tblWriteCounts(&sb, "client notes (tables planar never wrote)", notes)
	tblWriteCounts(&sb, "ops drawn", s.ops)
	t.Log(sb.String())
	for i, f := range s.failures {
		if i >= *tablesShow {
			t.Errorf("seed %d: %s at step %d: %s", f.seq.Seed, f.kind, f.step, firstLine(f.msg))
			continue
		}
		ops := f.seq
		if f.step >= 0 {
			ops.Ops = ops.Ops[:f.step+1]
		} else {
			ops.Ops = nil
		}
		t.Errorf("seed %d: %s at step %d:\n  %s\nsteps:\n  %s\nreplay: go test ./interop -run TablesDifferential -tables.start %d -tables.n 1 -tables.v\nregression case for tablesRegressions:\n%s",
			f.seq.Seed, f.kind, f.step, f.msg, strings.Join(f.steps, "\n  "), f.seq.Seed, ops.GoString())
	}
}

// tblCause shortens a failure message to what groups failures: paths,
// numbers and file names out.
func tblCause(msg string) string {
	msg = firstLine(msg)
	msg = tblFileRE.ReplaceAllString(msg, "<file>")
	msg = tblPathRE.ReplaceAllString(msg, "<path>")
	if i := strings.LastIndex(msg, ": planar/"); i >= 0 {
		// keep the sentinel and the clause before it
		head := msg[:i]
		if j := strings.LastIndex(head, ": "); j >= 0 {
			head = head[j+2:]
		}
		msg = head + msg[i:]
	}
	var b strings.Builder
	digits := false
	for _, c := range msg {
		if c >= '0' && c <= '9' {
			if !digits {
				b.WriteByte('N')
			}
			digits = true
			continue
		}
		digits = false
		b.WriteRune(c)
	}
	out := b.String()
	if len(out) > 160 {
		out = out[:160] + "..."
	}
	return out
}

var (
	tblFileRE = regexp.MustCompile(`[0-9a-f]{16,}\.(lance|arrow|bin)`)
	tblPathRE = regexp.MustCompile(`/tmp/\S+`)
)

func tblWriteCounts(sb *strings.Builder, title string, m map[string]int) {
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	fmt.Fprintf(sb, "%s:\n", title)
	for _, k := range keys {
		fmt.Fprintf(sb, "  %5d  %s\n", m[k], k)
	}
}

func TestTablesDifferential(t *testing.T) {
	e := newTblEnv(t)
	stats := newTblStats()
	start := time.Now()
	for seed := *tablesStart; seed < *tablesStart+uint64(*tablesN); seed++ {
		runTblSeq(e, randomTblSeq(seed), stats, *tablesV)
	}
	stats.report(t, time.Since(start))
}

// tablesRegressions are sequences that failed once (paste the literal a
// failure prints); TestTablesReplay runs them all.
var tablesRegressions = []tblSeq{
	// Hand-written: every client's deletions, a rename and a drop, then
	// planar's commits.
	{Seed: 1_000_001, Create: tblCreate{Client: "planar", Rows: 300, MaxRows: 100}, Ops: []tblOp{
		{"lance", "delete", 1, 5},
		{"lancedb", "update", 3, 7},
		{"planar", "append", 0, 20},
		{"lance", "rename", 2, 0},
		{"planar", "add_column", 1, 0},
		{"lancedb", "drop", 0, 0},
		{"planar", "append", 0, 40},
	}},
	// Hand-written: a stable-row-id table with a merge_insert and a
	// schema-only column, then planar's commits.
	{Seed: 1_000_002, Create: tblCreate{Client: "pylance", StableRowIDs: true, Rows: 250, MaxRows: 80}, Ops: []tblOp{
		{"lancedb", "merge_insert", 5, 12},
		{"lance", "add_field", 0, 0},
		{"planar", "append", 0, 30},
		{"planar", "add_column", 2, 0},
	}},
	// Hand-written: a table with V1 manifest names, a cast and a swap.
	{Seed: 1_000_003, Create: tblCreate{Client: "pylance", V1Names: true, Rows: 200, MaxRows: 70}, Ops: []tblOp{
		{"lance", "cast", 0, 0},
		{"lancedb", "swap", 0, 0},
		{"planar", "commit_append", 0, 25},
		{"planar", "add_column", 0, 0},
	}},
}

// TestTablesReplay runs tablesRegressions.
func TestTablesReplay(t *testing.T) {
	e := newTblEnv(t)
	stats := newTblStats()
	start := time.Now()
	for _, seq := range tablesRegressions {
		runTblSeq(e, seq, stats, testing.Verbose())
	}
	stats.report(t, time.Since(start))
}
