// Package hygiene holds repository-wide checks: gofmt, go.mod, and the
// import floors that keep data flowing one way
// (issue #9.21).
package hygiene

import (
	"bytes"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// root is the module root, two levels up.
func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r, "go.mod")); err != nil {
		t.Fatal(err)
	}
	return r
}

// goFiles lists the module's Go files (not below dot- or testdata
// directories, nor the interop venv).
func goFiles(t *testing.T, r string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if p != r && (strings.HasPrefix(n, ".") || n == "testdata" || n == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".go") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestGofmt: every Go file is gofmt-clean.
func TestGofmt(t *testing.T) {
	r := root(t)
	for _, p := range goFiles(t, r) {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out, err := format.Source(src)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if !bytes.Equal(out, src) {
			rel, _ := filepath.Rel(r, p)
			t.Errorf("%s is not gofmt-clean (run gofmt -w %s)", rel, rel)
		}
	}
}

// TestGoModDirect: a module the code imports is required without
// "// indirect", and a module marked indirect is not imported (what go mod
// tidy keeps).
func TestGoModDirect(t *testing.T) {
	r := root(t)
	gomod, err := os.ReadFile(filepath.Join(r, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	self := ""
	indirect := map[string]bool{}
	var required []string
	block := false
	for _, line := range strings.Split(string(gomod), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "module "):
			self = strings.TrimSpace(strings.TrimPrefix(line, "module "))
			continue
		case line == "require (":
			block = true
			continue
		case block && line == ")":
			block = false
			continue
		case strings.HasPrefix(line, "require "):
			line = strings.TrimPrefix(line, "require ")
		case !block:
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		required = append(required, f[0])
		indirect[f[0]] = strings.HasSuffix(line, "// indirect")
	}
	imported := map[string]string{} // module -> a file importing it
	fset := token.NewFileSet()
	for _, p := range goFiles(t, r) {
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path == self || strings.HasPrefix(path, self+"/") {
				continue
			}
			for _, m := range required {
				if path == m || strings.HasPrefix(path, m+"/") {
					imported[m] = p
				}
			}
		}
	}
	for _, m := range required {
		if p, ok := imported[m]; ok && indirect[m] {
			t.Errorf("go.mod marks %s indirect, but %s imports it (run go mod tidy)", m, p)
		}
	}
}

// floors ranks the library packages: a package imports only packages on a
// lower floor (peers do not import each other), so data flows one way:
// measurement and codecs, then the planes and the choice, then the file
// writer and reader, then what sits on files.
var floors = map[string]int{
	"internal/bulk":       0,
	"internal/atomicfile": 0,
	"internal/par":        0,
	"internal/bitmap":     0,
	"stats":               1,
	"values":              2,
	"structural":          3,
	"selector":            3,
	"internal/format":     4,
	"writer":              5,
	"reader":              5,
	"relayout":            6,
	"dataset":             6,
}

// testOnly are the packages for tests, benchmarks and the lab: no library
// package imports them.
var testOnly = []string{"internal/corpus", "internal/pyenv", "internal/s3test"}

// TestImportFloors keeps the floors: a library package (floors) imports
// nothing on its own floor or above and no test-only package; examples
// import no internal package (a user can copy them out).
func TestImportFloors(t *testing.T) {
	r := root(t)
	const mod = "github.com/planarlance/planar/"
	fset := token.NewFileSet()
	for _, p := range goFiles(t, r) {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		rel, _ := filepath.Rel(r, filepath.Dir(p))
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		floor, library := floors[rel]
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			dep, ok := strings.CutPrefix(path, mod)
			if !ok {
				continue
			}
			switch {
			case strings.HasPrefix(rel, "examples/") && strings.HasPrefix(dep, "internal/"):
				t.Errorf("%s imports %s: examples use the public API only", p, dep)
			case !library:
			case slices.Contains(testOnly, dep):
				t.Errorf("%s (library) imports the test-only package %s", p, dep)
			default:
				if df, ranked := floors[dep]; ranked && df >= floor {
					t.Errorf("%s (floor %d) imports %s (floor %d): imports only go down", p, floor, dep, df)
				}
			}
		}
	}
}

// TestErrorPrefixes: the sentinel errors of a library package (var ErrX =
// errors.New(...)) read "planar/<package>: ...", so a message says where it
// comes from. internal/format's, which reader and writer re-export, read
// "planar: ...".
func TestErrorPrefixes(t *testing.T) {
	r := root(t)
	fset := token.NewFileSet()
	for _, p := range goFiles(t, r) {
		rel, _ := filepath.Rel(r, filepath.Dir(p))
		rel = filepath.ToSlash(rel)
		if _, library := floors[rel]; !library || strings.HasSuffix(p, "_test.go") {
			continue
		}
		want := "planar/" + filepath.Base(rel) + ": "
		if rel == "internal/format" {
			want = "planar: "
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if !strings.HasPrefix(name.Name, "Err") || i >= len(vs.Values) {
					continue
				}
				call, ok := vs.Values[i].(*ast.CallExpr)
				if !ok || len(call.Args) != 1 {
					continue
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "New" {
					continue
				}
				lit, ok := call.Args[0].(*ast.BasicLit)
				if !ok {
					continue
				}
				msg, _ := strconv.Unquote(lit.Value)
				if !strings.HasPrefix(msg, want) {
					t.Errorf("%s: %s = %q, want the prefix %q", p, name.Name, msg, want)
				}
			}
			return true
		})
	}
}
