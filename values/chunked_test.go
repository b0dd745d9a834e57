package values

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func hexb(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The byte example of structural.md §2.11: list<int32?> rows
// [[1,2], null, [], [3,null]] as one chunk, rep/def Flat16, values Flat32.
func TestChunkByteExample(t *testing.T) {
	rep := AppendFlatLevels(nil, []uint16{1, 0, 1, 1, 1, 0})
	def := AppendFlatLevels(nil, []uint16{0, 0, 2, 3, 0, 1})
	vals := hexb(t, "01000000 02000000 03000000 00000000")
	parts := ChunkParts{NumLevels: 6, Rep: rep, Def: def, Values: [][]byte{vals}}
	body := "01 00 00 00 01 00 01 00 01 00 00 00 FE FE FE FE" +
		"00 00 00 00 02 00 03 00 00 00 01 00 FE FE FE FE" +
		"01 00 00 00 02 00 00 00 03 00 00 00 00 00 00 00"
	for _, tc := range []struct {
		large        bool
		header, meta string
	}{
		{false, "06 00 0C 00 0C 00 10 00", "60 00"},
		{true, "06 00 0C 00 0C 00 10 00 00 00 FE FE FE FE FE FE", "70 00 00 00"},
	} {
		l := ChunkLayout{HasRep: true, HasDef: true, NumBuffers: 1, Large: tc.large}
		meta, data, err := AppendChunk(nil, nil, l, parts)
		if err != nil {
			t.Fatal(err)
		}
		if want := hexb(t, tc.header+body); !bytes.Equal(data, want) {
			t.Errorf("large=%v chunk\n got %x\nwant %x", tc.large, data, want)
		}
		if want := hexb(t, tc.meta); !bytes.Equal(meta, want) {
			t.Errorf("large=%v meta %x, want %x", tc.large, meta, want)
		}
		refs, err := ParseChunkMeta(meta, tc.large, len(data), 4)
		if err != nil || len(refs) != 1 || refs[0].NumValues != 4 || refs[0].Size != len(data) {
			t.Fatalf("ParseChunkMeta: %v %+v", err, refs)
		}
		got, err := ParseChunk(data, l)
		if err != nil {
			t.Fatal(err)
		}
		if got.NumLevels != 6 || !bytes.Equal(got.Rep, rep) || !bytes.Equal(got.Def, def) || !bytes.Equal(got.Values[0], vals) {
			t.Errorf("ParseChunk round trip: %+v", got)
		}
	}
}

func TestChunkMetaRejectsInconsistency(t *testing.T) {
	l := ChunkLayout{NumBuffers: 1, Large: true}
	var meta, data []byte
	var err error
	for i := 0; i < 3; i++ {
		meta, data, err = AppendChunk(meta, data, l, ChunkParts{LogNumValues: 2, Values: [][]byte{make([]byte, 16)}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ParseChunkMeta(meta, true, len(data), 12); err != nil {
		t.Fatalf("valid metadata: %v", err)
	}
	for name, tc := range map[string]struct {
		meta  []byte
		data  int
		items uint64
	}{
		"odd length":           {meta[:5], len(data), 12},
		"data longer":          {meta, len(data) + 8, 12},
		"data shorter":         {meta, len(data) - 8, 12},
		"too few items":        {meta, len(data), 7},
		"last chunk mismatch":  {meta, len(data), 13},
		"no chunks with items": {nil, 0, 5},
	} {
		if _, err := ParseChunkMeta(tc.meta, true, tc.data, tc.items); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
	for n := 0; n < len(data); n++ {
		if _, err := ParseChunk(data[:n], ChunkLayout{NumBuffers: 1, Large: true}); err == nil && n < 24 {
			t.Errorf("truncated chunk of %d bytes parsed", n)
		}
	}
}

func TestChunkLimits(t *testing.T) {
	l := ChunkLayout{NumBuffers: 1}
	if _, _, err := AppendChunk(nil, nil, l, ChunkParts{Values: [][]byte{make([]byte, 70000)}}); !errors.Is(err, ErrNotApplicable) {
		t.Errorf("u16 framing with a 70000-byte buffer: %v", err)
	}
	if _, _, err := AppendChunk(nil, nil, l, ChunkParts{Values: nil}); !errors.Is(err, ErrNotApplicable) {
		t.Errorf("buffer count mismatch: %v", err)
	}
}

func TestFlatChunkLog2(t *testing.T) {
	for bits, want := range map[int]uint8{1: 12, 8: 12, 16: 11, 32: 10, 64: 9, 96: 9, 128: 8, 256: 7, 24: 11, 40: 10, 8 * 3000: 1} {
		if got := FlatChunkLog2(bits); got != want {
			t.Errorf("FlatChunkLog2(%d) = %d, want %d", bits, got, want)
		}
	}
}

func FuzzParseChunk(f *testing.F) {
	l := ChunkLayout{HasDef: true, NumBuffers: 1, Large: true}
	_, data, _ := AppendChunk(nil, nil, l, ChunkParts{NumLevels: 3, Def: make([]byte, 6), Values: [][]byte{make([]byte, 12)}})
	f.Add(data, true, true, uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, large, def bool, nbuf uint8) {
		ParseChunk(b, ChunkLayout{HasDef: def, NumBuffers: int(nbuf % 4), Large: large})
		ParseChunkMeta(b, large, len(b), uint64(len(b)))
	})
}

// TestRepIndexRoundTrip: the repetition index AppendRepIndex writes for a
// page's chunks reads back, through ParseRepIndex, as the row each chunk's
// first whole row starts at, for rows split across chunks in every way.
func TestRepIndexRoundTrip(t *testing.T) {
	// Rows of 1 to 4 items (rep 1 starts a row), 40 rows.
	var rep []uint16
	rows := 0
	for r := 0; r < 40; r++ {
		for k := 0; k <= r%4; k++ {
			if k == 0 {
				rep = append(rep, 1)
			} else {
				rep = append(rep, 0)
			}
		}
		rows++
	}
	for _, size := range []int{1, 2, 3, 5, 7, len(rep)} {
		var idx []byte
		prev := false
		var want []uint64
		started := 0
		for at := 0; at < len(rep); at += size {
			end := min(at+size, len(rep))
			// The first row that starts in this chunk and is not the
			// continuation of the previous chunk's last row.
			want = append(want, uint64(started))
			for _, r := range rep[at:end] {
				if r == 1 {
					started++
				}
			}
			idx, prev = AppendRepIndex(idx, rep[at:end], 1, end == len(rep), prev)
		}
		got, _, err := ParseRepIndex(idx, len(want), 1, uint64(rows))
		if err != nil {
			t.Fatalf("chunks of %d levels: %v", size, err)
		}
		for c := range want {
			if got[c] != want[c] {
				t.Fatalf("chunks of %d levels: chunk %d starts at row %d, want %d", size, c, got[c], want[c])
			}
		}
		if got[len(want)] != uint64(rows) {
			t.Fatalf("chunks of %d levels: %d rows, want %d", size, got[len(want)], rows)
		}
		bad := append([]byte(nil), idx...)
		bad[0]++
		if _, _, err := ParseRepIndex(bad, len(want), 1, uint64(rows)); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("chunks of %d levels: a damaged index read as %v", size, err)
		}
	}
}
