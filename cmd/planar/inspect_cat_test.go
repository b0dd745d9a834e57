package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// converted returns a Lance file and a two-version dataset holding the
// mixed table's rows 0..999 (the dataset: 600 rows, then 400 appended).
func converted(t *testing.T) (file, ds string) {
	t.Helper()
	dir := t.TempDir()
	a := filepath.Join(dir, "a.arrow")
	writeIPC(t, a, []arrow.RecordBatch{mixedRecord(600, 0), mixedRecord(400, 600)}, false)
	b1 := filepath.Join(dir, "b1.arrow")
	writeIPC(t, b1, []arrow.RecordBatch{mixedRecord(600, 0)}, false)
	b2 := filepath.Join(dir, "b2.arrow")
	writeIPC(t, b2, []arrow.RecordBatch{mixedRecord(400, 600)}, false)
	file, ds = filepath.Join(dir, "t.lance"), filepath.Join(dir, "ds.lance")
	for _, args := range [][]string{
		{"convert", "-q", a, file},
		{"convert", "-q", "--dataset", b1, ds},
		{"convert", "-q", "--dataset", "--mode", "append", b2, ds},
	} {
		if err := run(args, new(bytes.Buffer)); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	return file, ds
}

func TestInspectJSON(t *testing.T) {
	file, ds := converted(t)
	for _, tc := range []struct {
		path            string
		pages, versions int
		fragments       map[uint64]bool
	}{
		{file, 7, 0, nil}, // 7 leaf columns: id name score tags.item point.x point.y emb
		{ds, 14, 2, map[uint64]bool{0: true, 1: true}},
	} {
		var out bytes.Buffer
		if err := run([]string{"inspect", "--json", tc.path}, &out); err != nil {
			t.Fatal(err)
		}
		pages, versions := 0, 0
		cols := map[string]bool{}
		frags := map[uint64]bool{}
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("not JSON: %q: %v", line, err)
			}
			switch m["type"] {
			case "page":
				pages++
				cols[m["column"].(string)] = true
				for _, k := range []string{"page", "rows", "cell", "encoding", "layout", "buffers", "bytes", "metadata"} {
					if _, ok := m[k]; !ok {
						t.Errorf("page line lacks %q: %s", k, line)
					}
				}
				if m["rows"].(float64) <= 0 || len(m["buffers"].([]any)) == 0 {
					t.Errorf("empty page? %s", line)
				}
				if f, ok := m["fragment"]; ok {
					frags[uint64(f.(float64))] = true
				}
			case "version":
				versions++
			default:
				t.Errorf("line of unknown type: %s", line)
			}
		}
		if pages < tc.pages || versions != tc.versions {
			t.Errorf("%s: %d pages, %d versions; want >= %d, %d", tc.path, pages, versions, tc.pages, tc.versions)
		}
		for _, c := range []string{"id", "tags.item", "point.y", "emb"} {
			if !cols[c] {
				t.Errorf("%s: no page of column %s", tc.path, c)
			}
		}
		if tc.fragments != nil && len(frags) != len(tc.fragments) {
			t.Errorf("%s: pages of fragments %v, want %v", tc.path, frags, tc.fragments)
		}
	}
	// The text form of a dataset lists versions, then fragments.
	var out bytes.Buffer
	if err := run([]string{"inspect", ds}, &out); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Lance dataset, 2 versions, latest 2", "version  timestamp", "fragment 0: 600 rows", "fragment 1: 400 rows", "dense x"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("dataset inspect lacks %q:\n%s", w, out.String())
		}
	}
	out.Reset()
	if err := run([]string{"inspect", "--version", "1", ds}, &out); err != nil || strings.Contains(out.String(), "fragment 1:") {
		t.Errorf("--version 1: %v\n%s", err, out.String())
	}
}

func TestCat(t *testing.T) {
	file, ds := converted(t)
	for _, path := range []string{file, ds} {
		for _, tc := range []struct {
			name  string
			args  []string
			lines []string // expected output lines, spaces collapsed
		}{
			{"head", []string{"-n", "2", "-c", "id,name,score"}, []string{"id name score", "0 name-0 null", "1 name-1 0.25"}},
			{"range", []string{"--rows", "598:601", "-c", "name,id"}, []string{"name id", "null 598", "name-49 599", "name-0 600"}},
			{"nested", []string{"--rows", "5:7", "-c", "tags,point,emb"}, []string{"tags point emb", "null {x: 1.6666666, y: 5} [20, 21, 22, 23]", "[t6, t7] {x: 2, y: 6} [24, 25, 26, 27]"}},
			{"nulls", []string{"--rows", "2:4", "-c", "point,name,tags"}, []string{"point name tags", "null name-2 [t2, t3]", "{x: 1, y: 3} null [t3, t4, t5]"}},
			{"to end", []string{"--rows", "999:", "-c", "id"}, []string{"id", "999"}},
			{"past end", []string{"--rows", "2000:2005", "-c", "id"}, []string{"id"}},
		} {
			t.Run(filepath.Base(path)+"/"+tc.name, func(t *testing.T) {
				var out bytes.Buffer
				if err := run(append(append([]string{"cat"}, tc.args...), path), &out); err != nil {
					t.Fatal(err)
				}
				got := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
				for i := range got {
					got[i] = strings.Join(strings.Fields(got[i]), " ")
				}
				if strings.Join(got, "\n") != strings.Join(tc.lines, "\n") {
					t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.lines, "\n"))
				}
			})
		}
		var out bytes.Buffer
		if err := run([]string{"cat", "--json", "--rows", "2:4", path}, &out); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("--json: %d lines:\n%s", len(lines), out.String())
		}
		var row map[string]any
		if err := json.Unmarshal([]byte(lines[1]), &row); err != nil {
			t.Fatal(err)
		}
		if row["id"].(float64) != 3 || row["name"] != nil || len(row["tags"].([]any)) != 3 || row["point"].(map[string]any)["y"].(float64) != 3 {
			t.Errorf("--json row 3: %s", lines[1])
		}
		if !strings.HasPrefix(lines[0], `{"id":2,"name":"name-2"`) {
			t.Errorf("--json keeps the column order: %s", lines[0])
		}
		out.Reset()
		if err := run([]string{"cat", path}, &out); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(out.String(), "\n"); n != 21 {
			t.Errorf("default head printed %d lines, want 21", n)
		}
		if err := run([]string{"cat", "-c", "nosuch", path}, &out); err == nil {
			t.Error("unknown column accepted")
		}
	}
}
