package reader

import (
	"reflect"
	"strings"
	"testing"
)

// internalTypes returns the types reachable from t (through pointers,
// slices, maps, struct fields and function signatures) that live in an
// internal package.
func internalTypes(t reflect.Type, seen map[reflect.Type]bool) []string {
	if seen[t] {
		return nil
	}
	seen[t] = true
	var out []string
	if strings.Contains(t.PkgPath(), "/internal/") {
		out = append(out, t.String())
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		out = append(out, internalTypes(t.Elem(), seen)...)
	case reflect.Map:
		out = append(out, internalTypes(t.Key(), seen)...)
		out = append(out, internalTypes(t.Elem(), seen)...)
	case reflect.Struct:
		if t.PkgPath() != "" && !strings.HasPrefix(t.PkgPath(), "github.com/planarlance/planar") {
			return out // other modules' types are theirs to keep clean
		}
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); f.IsExported() {
				out = append(out, internalTypes(f.Type, seen)...)
			}
		}
	case reflect.Func:
		for i := 0; i < t.NumIn(); i++ {
			out = append(out, internalTypes(t.In(i), seen)...)
		}
		for i := 0; i < t.NumOut(); i++ {
			out = append(out, internalTypes(t.Out(i), seen)...)
		}
	}
	return out
}

// TestPublicAPIHasNoInternalTypes: no exported method of File, and no exported
// field of the types they hand out, mentions a type of an internal package
// (callers outside the module could not name it).
func TestPublicAPIHasNoInternalTypes(t *testing.T) {
	seen := map[reflect.Type]bool{}
	ft := reflect.TypeOf(&File{})
	for i := 0; i < ft.NumMethod(); i++ {
		m := ft.Method(i)
		for _, name := range internalTypes(m.Type, seen) {
			t.Errorf("File.%s exposes internal type %s", m.Name, name)
		}
	}
	for _, fn := range []any{Open, OpenPath} {
		for _, name := range internalTypes(reflect.TypeOf(fn), seen) {
			t.Errorf("exported function exposes internal type %s", name)
		}
	}
}
