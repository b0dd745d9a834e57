package reader

import (
	"slices"
	"testing"
)

func TestCoalesce(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []byteRange
		want []byteRange
	}{
		{"empty", nil, nil},
		{"one", []byteRange{{100, 10}}, []byteRange{{100, 10}}},
		{"adjacent", []byteRange{{0, 10}, {10, 5}}, []byteRange{{0, 15}}},
		{"overlap", []byteRange{{0, 10}, {5, 20}, {6, 2}}, []byteRange{{0, 25}}},
		{"gap at the threshold", []byteRange{{0, 10}, {10 + coalesceGap, 1}}, []byteRange{{0, 11 + coalesceGap}}},
		{"gap past the threshold", []byteRange{{0, 10}, {11 + coalesceGap, 1}}, []byteRange{{0, 10}, {11 + coalesceGap, 1}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := coalesce(slices.Clone(c.in), coalesceGap)
			if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
				t.Fatalf("coalesce(%v) = %v, want %v", c.in, got, c.want)
			}
		})
	}
}

func TestRawCacheLookup(t *testing.T) {
	var c rawCache
	c.insert(rawBlock{100, []byte("abcdefghij")})
	c.insert(rawBlock{0, []byte("0123")})
	for _, q := range []struct {
		off, n uint64
		want   string
		ok     bool
	}{
		{100, 10, "abcdefghij", true},
		{103, 2, "de", true},
		{1, 3, "123", true},
		{108, 3, "", false}, // runs past the block
		{50, 1, "", false},
	} {
		b, ok := c.lookup(q.off, q.n)
		if ok != q.ok || string(b) != q.want {
			t.Fatalf("lookup(%d, %d) = %q %v, want %q %v", q.off, q.n, b, ok, q.want, q.ok)
		}
	}
}
