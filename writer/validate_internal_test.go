package writer

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestInvalidUTF8 checks the fast path (whole range, slot starts) against a
// slot-by-slot utf8.Valid over valid slots.
func TestInvalidUTF8(t *testing.T) {
	long := strings.Repeat("0123456789abcdef", 5) // past the 32-byte loop
	for _, tc := range []struct {
		slots []string
		null  []bool // nil: all valid
	}{
		{slots: []string{"", "a", long, "z"}},
		{slots: []string{long + "é", "日本", "🙂", ""}},
		{slots: []string{long + "caf\xc3", "\xa9"}},     // one character split over two slots
		{slots: []string{"\xf0\x9f", "\x99\x82", "ok"}}, // a 4-byte character split
		{slots: []string{long, "\xff", long}},           // invalid byte
		{slots: []string{long, "\xff", long}, null: []bool{false, true, false}},
		{slots: []string{"a\xc3", "\xa9b"}, null: []bool{true, false}}, // the valid half alone is bad
		{slots: []string{"\xed\xa0\x80"}},                              // surrogate
		{slots: []string{"\xc0\xaf"}},                                  // overlong
		{slots: []string{long + long + "\x80"}},
	} {
		var offs []int32
		var data []byte
		var bm []byte
		offs = append(offs, 0)
		for i, s := range tc.slots {
			data = append(data, s...)
			offs = append(offs, int32(len(data)))
			if i%8 == 0 {
				bm = append(bm, 0)
			}
			if tc.null == nil || !tc.null[i] {
				bm[i/8] |= 1 << (i % 8)
			}
		}
		want := -1
		for i, s := range tc.slots {
			if (tc.null == nil || !tc.null[i]) && !utf8.ValidString(s) {
				want = i
				break
			}
		}
		if tc.null == nil {
			bm = nil
		}
		if got := invalidUTF8(offs, data, bm, 0); got != want {
			t.Errorf("%q (nulls %v): first invalid slot %d, want %d", tc.slots, tc.null, got, want)
		}
	}
}

func TestKeysOutside(t *testing.T) {
	if got := keysOutside([]int8{0, 2, -1}, nil, 0, 3); got != 2 {
		t.Errorf("negative int8 key: %d", got)
	}
	if got := keysOutside([]uint64{0, 2, 1 << 63}, nil, 0, 3); got != 2 {
		t.Errorf("huge uint64 key: %d", got)
	}
	// Slot 1 (physical 9) is null: its key is not looked at.
	if got := keysOutside([]int16{1, 500, 2}, []byte{0, 0b101}, 8, 3); got != -1 {
		t.Errorf("null slot key: %d", got)
	}
	if got := keysOutside([]uint32{3}, nil, 0, 3); got != 0 {
		t.Errorf("key == len: %d", got)
	}
}

// BenchmarkValidateStrings measures validateColumn alone on 1M strings.
func BenchmarkValidateStrings(b *testing.B) {
	for _, mb := range []bool{false, true} {
		sb := array.NewStringBuilder(memory.NewGoAllocator())
		for i := range 1 << 20 {
			if mb && i%3 == 0 {
				sb.Append("https://example.com/Grüße/日本語?id=" + string(rune('a'+i%26)))
			} else {
				sb.Append("https://example.com/alpha/beta?id=" + string(rune('a'+i%26)))
			}
		}
		a := sb.NewArray()
		f := arrow.Field{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true}
		name := map[bool]string{false: "ascii", true: "multibyte"}[mb]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(a.(*array.String).ValueBytes())))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := validateColumn(a, f, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		a.Release()
	}
}
