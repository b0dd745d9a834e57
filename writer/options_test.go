package writer_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/writer"
)

func schemaWith(name string, dt arrow.DataType, kv ...string) *arrow.Schema {
	var md arrow.Metadata
	if len(kv) > 0 {
		var k, v []string
		for i := 0; i < len(kv); i += 2 {
			k, v = append(k, kv[i]), append(v, kv[i+1])
		}
		md = arrow.NewMetadata(k, v)
	}
	return arrow.NewSchema([]arrow.Field{{Name: name, Type: dt, Nullable: true, Metadata: md}}, nil)
}

// TestOptionErrors: a bad option value, or one the column's type cannot
// honour, fails New with ErrInvalidOption and a message naming the field and
// the key; nothing is written.
func TestOptionErrors(t *testing.T) {
	i32, str, f64, b := arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String, arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Boolean
	for _, tc := range []struct {
		dt  arrow.DataType
		key string
		val string
	}{
		{i32, selector.KeyCompression, "brotli"},
		{i32, selector.KeyCompression, "fsst"},
		{i32, selector.KeyStructuralEncoding, "sparse-ish"},
		{b, selector.KeyStructuralEncoding, "fullzip"},
		{i32, selector.KeyCompressionLevel, "high"},
		{i32, selector.KeyRleThreshold, "2"},
		{str, selector.KeyDictDivisor, "0"},
		{str, selector.KeyDictSizeRatio, "1.5"},
		{str, selector.KeyBSS, "on"},
		{f64, selector.KeyBSS, "maybe"},
		{str, selector.KeyCodec, "bitpack"},
		{i32, selector.KeyCodec, "zigzag"},
		{str, selector.KeyDictValuesCompression, "snappy"},
		{i32, "lance-encoding:no-such-key", "1"},
		{arrow.BinaryTypes.Binary, selector.KeyBlob, "true"},
		// Non-finite and out-of-range numbers (issue #9.17): NaN compares
		// false with every bound, so each key must reject it explicitly.
		{i32, selector.KeyRleThreshold, "NaN"},
		{i32, selector.KeyRleThreshold, "nan"},
		{i32, selector.KeyRleThreshold, "+Inf"},
		{i32, selector.KeyRleThreshold, "-Inf"},
		{i32, selector.KeyRleThreshold, "-0.5"},
		{i32, selector.KeyRleThreshold, "1e400"},
		{str, selector.KeyDictSizeRatio, "NaN"},
		{str, selector.KeyDictSizeRatio, "Inf"},
		{str, selector.KeyDictSizeRatio, "-0.1"},
		{str, selector.KeyDictSizeRatio, "0"},
		{i32, selector.KeyCompressionLevel, "NaN"},
		{i32, selector.KeyCompressionLevel, "23"},
		{i32, selector.KeyCompressionLevel, "99999999999999999999"},
		{str, selector.KeyDictDivisor, "-2"},
		{str, selector.KeyDictDivisor, "NaN"},
		{str, selector.KeyDictDivisor, "99999999999999999999"},
		{str, selector.KeyDictMaxSize, "-1"},
		{str, selector.KeyDictMaxSize, "NaN"},
		{str, selector.KeyDictMaxSize, "1e9"},
		{str, selector.KeyDictMaxSize, "99999999999999999999"},
		{str, selector.KeyMinichunkSize, "0"},
		{str, selector.KeyMinichunkSize, "-4096"},
		{str, selector.KeyMinichunkSize, "NaN"},
		{str, selector.KeyMinichunkSize, "9223372036854775807"},
	} {
		name := tc.key + "=" + tc.val
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			_, err := writer.New(&buf, schemaWith("col_x", tc.dt, tc.key, tc.val))
			if !errors.Is(err, writer.ErrInvalidOption) || !errors.Is(err, selector.ErrInvalidOption) {
				t.Fatalf("New = %v, want ErrInvalidOption", err)
			}
			var oe *selector.OptionError
			if !errors.As(err, &oe) || oe.Field != "col_x" || oe.Key != tc.key {
				t.Fatalf("error %v does not name field and key", err)
			}
			if !strings.Contains(err.Error(), "col_x") || !strings.Contains(err.Error(), tc.key) {
				t.Fatalf("message %q lacks field or key", err)
			}
			if buf.Len() != 0 {
				t.Fatal("bytes written before the error")
			}
			// The same through WithColumnOptions.
			_, err = writer.New(&buf, schemaWith("col_x", tc.dt), writer.WithColumnOptions("col_x", map[string]string{tc.key: tc.val}))
			if !errors.As(err, &oe) || oe.Key != tc.key {
				t.Fatalf("WithColumnOptions: %v", err)
			}
		})
	}
	if _, err := writer.New(&bytes.Buffer{}, schemaWith("a", i32), writer.WithColumnOptions("b", nil)); !errors.Is(err, writer.ErrInvalidOption) {
		t.Fatalf("options for a missing column: %v", err)
	}
}

// TestOptionsForceCodecs: each override changes the chosen tree as Lance's
// key says, from metadata and from Go.
func TestOptionsForceCodecs(t *testing.T) {
	mem := newMem()
	rec := intRecord(mem, 5000, func(i int) int32 { return int32(i % 50) })
	for _, tc := range []struct {
		kv   map[string]string
		want string
	}{
		{nil, "values=bitpack32"},
		{map[string]string{selector.KeyCompression: "none"}, "values=flat32"},
		{map[string]string{selector.KeyCompression: "zstd"}, "values=general(zstd,"},
		{map[string]string{selector.KeyCompression: "lz4"}, "values=general(lz4,"},
		{map[string]string{selector.KeyCodec: "rle"}, "values=rle(flat32,flat8)"},
		{map[string]string{selector.KeyCodec: "bss"}, "values=bss32"},
		{map[string]string{selector.KeyCompression: "zstd", selector.KeyBSS: "on"}, "values=general(zstd,bss32)"},
		{map[string]string{selector.KeyStructuralEncoding: "fullzip"}, "per-value flat32"},
	} {
		b, report := writeReport(t, rec.Schema(), []arrow.RecordBatch{rec}, writer.WithColumnOptions("v", tc.kv), writer.WithPolicy(selector.PolicyLance))
		got := report[0].Encoding
		if !strings.HasPrefix(got, tc.want) {
			t.Errorf("%v: encoding %q, want prefix %q", tc.kv, got, tc.want)
		}
		f := open(t, b)
		if got2 := f.Pages(0)[0].Encoding; got2 != got && !strings.HasPrefix(got, "per-value") {
			t.Errorf("%v: reader sees %q, writer reported %q", tc.kv, got2, got)
		}
	}
}

func newMem() memory.Allocator { return memory.NewGoAllocator() }

func intRecord(mem memory.Allocator, n int, f func(int) int32) arrow.RecordBatch {
	b := array.NewInt32Builder(mem)
	defer b.Release()
	for i := 0; i < n; i++ {
		b.Append(f(i))
	}
	a := b.NewArray()
	defer a.Release()
	return array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int32}}, nil), []arrow.Array{a}, int64(n))
}

// TestCostWeights: with read and write cost left out the smallest candidate
// wins; a NaN or infinite weight is refused at New.
func TestCostWeights(t *testing.T) {
	mem := newMem()
	rec := intRecord(mem, 20000, func(i int) int32 { return int32(i / 3 % 1000) })
	_, report := writeReport(t, rec.Schema(), []arrow.RecordBatch{rec}, writer.WithCostWeights(selector.Weights{Lambda: -1, Mu: -1}))
	p := report[0]
	for _, c := range p.Candidates[1:] {
		if c.Bytes < p.Candidates[0].Bytes {
			t.Errorf("bytes-only weights chose %v over smaller %v", p.Candidates[0], c)
		}
	}
	for _, w := range []selector.Weights{{Lambda: math.NaN()}, {Mu: math.NaN()}, {Lambda: math.Inf(1)}, {Mu: math.Inf(1)}, {Lambda: math.Inf(-1)}} {
		if _, err := writer.New(&bytes.Buffer{}, rec.Schema(), writer.WithCostWeights(w)); !errors.Is(err, writer.ErrInvalidOption) {
			t.Errorf("weights %+v: %v", w, err)
		}
	}
}

// TestNumericOptionBounds: the bounds of each numeric key are accepted, and
// lance-encoding:dict-max-size=0 means what it means in Lance (no
// dictionary holds a value) rather than the default limit.
func TestNumericOptionBounds(t *testing.T) {
	i32, str := arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String
	for _, tc := range []struct {
		dt       arrow.DataType
		key, val string
	}{
		{i32, selector.KeyRleThreshold, "0"},
		{i32, selector.KeyRleThreshold, "1"},
		{i32, selector.KeyRleThreshold, "0.25"},
		{str, selector.KeyDictSizeRatio, "1"},
		{str, selector.KeyDictSizeRatio, "1e-9"},
		{str, selector.KeyDictMaxSize, "0"},
		{str, selector.KeyDictMaxSize, "2147483647"},
		{str, selector.KeyMinichunkSize, "1"},
		{str, selector.KeyMinichunkSize, "4096"},
		{i32, selector.KeyCompressionLevel, "-7"},
		{i32, selector.KeyCompressionLevel, "22"},
		{str, selector.KeyDictDivisor, "1"},
	} {
		if _, err := writer.New(&bytes.Buffer{}, schemaWith("c", tc.dt, tc.key, tc.val)); err != nil {
			t.Errorf("%s=%s: %v", tc.key, tc.val, err)
		}
	}

	mem := newMem()
	b := array.NewStringBuilder(mem)
	for i := range 5000 {
		b.Append([]string{"alpha", "beta", "gamma"}[i%3])
	}
	col := b.NewArray()
	defer col.Release()
	for _, tc := range []struct {
		kv   map[string]string
		dict bool
	}{
		{nil, true},
		{map[string]string{selector.KeyDictMaxSize: "0"}, false},
		{map[string]string{selector.KeyDictMaxSize: "100"}, true},
	} {
		rec := array.NewRecordBatch(schemaWith("s", str), []arrow.Array{col}, int64(col.Len()))
		_, report := writeReport(t, rec.Schema(), []arrow.RecordBatch{rec}, writer.WithColumnOptions("s", tc.kv), writer.WithPolicy(selector.PolicyLance))
		rec.Release()
		if got := strings.Contains(report[0].Reason, "dictionary of"); got != tc.dict {
			t.Errorf("%v: %q, dictionary %v, want %v", tc.kv, report[0].Reason, got, tc.dict)
		}
	}
}

// TestSparseKey: structural-encoding=sparse is a 2.3 option: in 2.2 New
// fails naming field and key; a value naming two encodings is refused; in
// 2.3 every page with non-trivial structure is sparse, and a page with
// trivial structure stays dense (canonicality).
func TestSparseKey(t *testing.T) {
	i64 := arrow.PrimitiveTypes.Int64
	for _, v := range []string{"sparse,miniblock", "fullzip sparse"} {
		if _, err := writer.New(&bytes.Buffer{}, schemaWith("col_s", i64, selector.KeyStructuralEncoding, v)); !errors.Is(err, writer.ErrInvalidOption) {
			t.Errorf("%q: New = %v, want ErrInvalidOption", v, err)
		}
	}
	var buf bytes.Buffer
	_, err := writer.New(&buf, schemaWith("col_s", i64, selector.KeyStructuralEncoding, "sparse"), writer.WithFormat(writer.Format2_2))
	var oe *selector.OptionError
	if !errors.Is(err, writer.ErrInvalidOption) || !errors.As(err, &oe) || oe.Field != "col_s" || oe.Key != selector.KeyStructuralEncoding || buf.Len() != 0 {
		t.Fatalf("2.2: New = %v (%d bytes written), want an OptionError naming col_s and the key", err, buf.Len())
	}
	mem := memory.NewGoAllocator()
	b := array.NewInt64Builder(mem)
	for i := 0; i < 5000; i++ {
		if i%100 == 7 {
			b.Append(int64(i * i))
		} else {
			b.AppendNull()
		}
	}
	withNulls := b.NewArray()
	for i := 0; i < 5000; i++ {
		b.Append(int64(i))
	}
	noNulls := b.NewArray()
	for _, tc := range []struct {
		arr  arrow.Array
		cell string
	}{{withNulls, "sparse x chunked"}, {noNulls, "dense x chunked"}} {
		schema := schemaWith("col_s", i64, selector.KeyStructuralEncoding, "sparse")
		var out bytes.Buffer
		w, err := writer.New(&out, schema, writer.WithPolicy(selector.PolicyLance), writer.WithFormat(writer.Format2_3))
		if err != nil {
			t.Fatal(err)
		}
		rec := array.NewRecordBatch(schema, []arrow.Array{tc.arr}, int64(tc.arr.Len()))
		if err := w.WriteBatch(rec); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got := w.Report()[0].Cell; got != tc.cell {
			t.Errorf("cell %q, want %q", got, tc.cell)
		}
		got, err := open(t, out.Bytes()).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if !array.Equal(got.Column(0), tc.arr) {
			t.Error("data differs")
		}
	}
}

// TestSettledSparse: under the cost policy a page with at most one valid
// leaf slot in selector.SettledSparseShare is stored sparse without its
// dense form being measured, and reads back; a page just above that share
// is still measured both ways.
func TestSettledSparse(t *testing.T) {
	mem := newMem()
	for _, tc := range []struct {
		every   int // one valid value every this many rows
		settled bool
	}{{100, true}, {70, true}, {40, false}} {
		b := array.NewStringBuilder(mem)
		for i := 0; i < 20000; i++ {
			if i%tc.every == 3 {
				b.Append(fmt.Sprintf("value %d", i))
			} else {
				b.AppendNull()
			}
		}
		col := b.NewArray()
		rec := array.NewRecordBatch(schemaWith("s", arrow.BinaryTypes.String), []arrow.Array{col}, int64(col.Len()))
		data, report := writeReport(t, rec.Schema(), []arrow.RecordBatch{rec}, writer.WithFormat(writer.Format2_3))
		reason := report[0].Reason
		if got := strings.Contains(reason, "settles sparse"); got != tc.settled {
			t.Errorf("one valid in %d: %q, settled %v, want %v", tc.every, reason, got, tc.settled)
		}
		if !tc.settled && !strings.Contains(reason, "cost: ") {
			t.Errorf("one valid in %d: %q, want a measured comparison", tc.every, reason)
		}
		if tc.settled && report[0].Cell != "sparse x zipped" && report[0].Cell != "sparse x chunked" {
			t.Errorf("one valid in %d: cell %s, want sparse", tc.every, report[0].Cell)
		}
		f, err := reader.Open(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if !array.Equal(got.Column(0), col) {
			t.Errorf("one valid in %d: read back differs", tc.every)
		}
		got.Release()
		rec.Release()
		col.Release()
	}
}

func TestSparseSettledShare(t *testing.T) {
	for _, tc := range []struct {
		visible, valid int
		want           bool
	}{
		{100000, 1000, true},
		{100000, 1562, true}, // 64*1562 = 99968
		{100000, 1563, false},
		{4095, 0, false}, // under a chunk's worth of slots: measured
		{4096, 64, true},
	} {
		if got := selector.SparseSettled(selector.Page{NumVisible: tc.visible, ValidLeaves: tc.valid}); got != tc.want {
			t.Errorf("%d of %d valid: settled %v, want %v", tc.valid, tc.visible, got, tc.want)
		}
	}
}
