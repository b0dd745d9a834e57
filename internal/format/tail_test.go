package format

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// TestTailRoundTrip: what AppendTail writes ParseTail reads back, and a
// tail whose tables point outside their regions is ErrCorruptFile.
func TestTailRoundTrip(t *testing.T) {
	data := make([]byte, 128) // the data region: the schema buffer at 64
	globals := []BufferRange{{Position: 64, Size: 30}}
	meta := [][]byte{[]byte("column zero"), []byte("one"), {}}
	file := AppendTail(data, uint64(len(data)), meta, globals, 2, 2)
	read := func(b []byte) func(off, n uint64) ([]byte, error) {
		return func(off, n uint64) ([]byte, error) {
			if off+n > uint64(len(b)) {
				return nil, fmt.Errorf("read past the end")
			}
			return b[off : off+n], nil
		}
	}
	got, err := ParseTail(uint64(len(file)), read(file))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Globals, globals) || len(got.Columns) != 3 || got.Footer.Major != 2 || got.Footer.Minor != 2 {
		t.Fatalf("parsed %+v", got)
	}
	for i, r := range got.Columns {
		if string(file[r.Position:r.Position+r.Size]) != string(meta[i]) {
			t.Errorf("column %d: %q", i, file[r.Position:r.Position+r.Size])
		}
	}
	// A column range pushed past the offset table.
	bad := append([]byte(nil), file...)
	bad[got.ColumnTable] = 0xff
	if _, err := ParseTail(uint64(len(bad)), read(bad)); !errors.Is(err, ErrCorruptFile) {
		t.Errorf("column range outside: %v", err)
	}
	if _, err := ParseTail(10, read(file[:10])); !errors.Is(err, ErrNotLance) {
		t.Errorf("10 bytes: %v", err)
	}
}
