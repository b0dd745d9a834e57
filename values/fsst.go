package values

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
)

// FSST (Fast Static Symbol Table) string compression.
//
// Serialized symbol table, always FsstTableSize bytes:
//
//	byte 0        number of symbols n (0..255)
//	byte 1        terminator (ignored)
//	byte 2        suffix limit (ignored)
//	byte 3        1 = strings are FSST coded, 0 = strings are stored verbatim
//	bytes 4..8    magic 54 53 53 46
//	8 .. 8+8n     symbol i as u64 LE (its bytes in the low len_i bytes, rest 0)
//	8+8n .. 8+9n  len_i (1..8), one byte per symbol
//	rest          zero
//
// A compressed string is a sequence of codes: a code c != 0xFF emits the first
// len_c bytes of symbol c; the escape code 0xFF emits the next byte literally.

const (
	// FsstTableSize is the size of a serialized FSST symbol table.
	FsstTableSize = 8 + 8*256 + 256
	// fsstEscape is the escape code.
	fsstEscape = 0xFF
	// fsstMaxSymbols is the largest symbol count (code 255 is the escape).
	fsstMaxSymbols = 255
)

var fsstMagic = [4]byte{0x54, 0x53, 0x53, 0x46}

// FsstTable is a parsed (or built) FSST symbol table.
type FsstTable struct {
	n      int
	coded  bool // switch byte: 1 = FSST coded, 0 = verbatim
	term   byte
	suffix byte
	sym    [256]uint64 // symbol bytes, little-endian, zero beyond len
	lens   [256]uint8

	// Encoder index: codes grouped by first byte, longest first.
	byFirst [256 + 1]uint16 // byFirst[b]..byFirst[b+1] indexes order
	order   [256]uint8
}

// NumSymbols returns the number of symbols in the table.
func (t *FsstTable) NumSymbols() int { return t.n }

// Coded reports whether strings under this table are FSST coded (switch byte
// 1) rather than verbatim.
func (t *FsstTable) Coded() bool { return t.coded }

// Symbol returns the bytes of symbol c (appended to dst).
func (t *FsstTable) Symbol(dst []byte, c int) []byte {
	if c < 0 || c >= t.n {
		return dst
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], t.sym[c])
	return append(dst, b[:t.lens[c]]...)
}

// ParseFsstTable parses a serialized FSST symbol table.
func ParseFsstTable(b []byte) (*FsstTable, error) {
	if len(b) != FsstTableSize {
		return nil, fmt.Errorf("values: fsst symbol table of %d bytes, want %d: %w", len(b), FsstTableSize, ErrCorrupt)
	}
	if [4]byte(b[4:8]) != fsstMagic {
		return nil, fmt.Errorf("values: fsst symbol table magic % x, want % x: %w", b[4:8], fsstMagic[:], ErrCorrupt)
	}
	t := &FsstTable{n: int(b[0]), term: b[1], suffix: b[2]}
	switch b[3] {
	case 0:
	case 1:
		t.coded = true
	default:
		return nil, fmt.Errorf("values: fsst symbol table switch byte %d: %w", b[3], ErrCorrupt)
	}
	if t.n > fsstMaxSymbols {
		return nil, fmt.Errorf("values: fsst symbol table with %d symbols (max %d): %w", t.n, fsstMaxSymbols, ErrCorrupt)
	}
	lens := b[8+8*t.n : 8+9*t.n]
	for i := range t.n {
		l := lens[i]
		if l < 1 || l > 8 {
			return nil, fmt.Errorf("values: fsst symbol %d has length %d: %w", i, l, ErrCorrupt)
		}
		v := binary.LittleEndian.Uint64(b[8+8*i:])
		if l < 8 {
			v &= 1<<(8*uint(l)) - 1
		}
		t.sym[i] = v
		t.lens[i] = l
	}
	t.index()
	return t, nil
}

// AppendBytes appends the FsstTableSize-byte serialized form of t to dst.
func (t *FsstTable) AppendBytes(dst []byte) []byte {
	start := len(dst)
	dst = slices.Grow(dst, FsstTableSize)
	dst = dst[:start+FsstTableSize]
	out := dst[start:]
	clear(out)
	out[0] = byte(t.n)
	out[1] = t.term
	out[2] = t.suffix
	if t.coded {
		out[3] = 1
	}
	copy(out[4:8], fsstMagic[:])
	for i := range t.n {
		binary.LittleEndian.PutUint64(out[8+8*i:], t.sym[i])
		out[8+8*t.n+i] = t.lens[i]
	}
	return dst
}

// AppendDecoded appends the decoding of one compressed string src to dst.
func (t *FsstTable) AppendDecoded(dst, src []byte) ([]byte, error) {
	if !t.coded {
		return append(dst, src...), nil
	}
	start := len(dst)
	// Every code emits at most 8 bytes; start with a guess of 3x and write
	// whole 8-byte symbols, growing when fewer than 8 bytes of room remain.
	dst = slices.Grow(dst, 3*len(src)+8)
	out := dst[:cap(dst)]
	pos := start
	n := t.n
	for i := 0; i < len(src); i++ {
		if len(out)-pos < 8 {
			out = slices.Grow(out[:pos], 8+2*(len(src)-i))
			out = out[:cap(out)]
		}
		c := src[i]
		if c == fsstEscape {
			i++
			if i >= len(src) {
				return dst[:start], fmt.Errorf("values: fsst string of %d bytes ends with an escape: %w", len(src), ErrCorrupt)
			}
			out[pos] = src[i]
			pos++
			continue
		}
		if int(c) >= n {
			return dst[:start], fmt.Errorf("values: fsst code %d at byte %d but the table has %d symbols: %w", c, i, n, ErrCorrupt)
		}
		binary.LittleEndian.PutUint64(out[pos:], t.sym[c])
		pos += int(t.lens[c])
	}
	return out[:pos], nil
}

// AppendEncoded appends the FSST coding of src to dst (greedy longest match,
// escaping bytes no symbol covers). With a verbatim table it appends src.
func (t *FsstTable) AppendEncoded(dst, src []byte) []byte {
	if !t.coded {
		return append(dst, src...)
	}
	dst = slices.Grow(dst, len(src)+len(src)/2+1)
	for i := 0; i < len(src); {
		first := src[i]
		var word uint64
		if len(src)-i >= 8 {
			word = binary.LittleEndian.Uint64(src[i:])
		} else {
			for k := len(src) - 1; k >= i; k-- {
				word = word<<8 | uint64(src[k])
			}
		}
		rem := len(src) - i
		matched := false
		for _, c := range t.order[t.byFirst[first]:t.byFirst[int(first)+1]] {
			l := int(t.lens[c])
			if l > rem {
				continue
			}
			mask := ^uint64(0)
			if l < 8 {
				mask = 1<<(8*uint(l)) - 1
			}
			if word&mask == t.sym[c] {
				dst = append(dst, c)
				i += l
				matched = true
				break
			}
		}
		if !matched {
			dst = append(dst, fsstEscape, first)
			i++
		}
	}
	return dst
}

// index builds the encoder lookup: codes grouped by first byte, longest
// symbol first within a group.
func (t *FsstTable) index() {
	var count [256]int
	for c := range t.n {
		count[byte(t.sym[c])]++
	}
	pos := 0
	for b := range 256 {
		t.byFirst[b] = uint16(pos)
		pos += count[b]
	}
	t.byFirst[256] = uint16(pos)
	var fill [256]int
	for c := range t.n {
		b := byte(t.sym[c])
		t.order[int(t.byFirst[b])+fill[b]] = uint8(c)
		fill[b]++
	}
	for b := range 256 {
		g := t.order[t.byFirst[b]:t.byFirst[b+1]]
		sort.SliceStable(g, func(x, y int) bool { return t.lens[g[x]] > t.lens[g[y]] })
	}
}

// fsstSym is a candidate symbol during training.
type fsstSym struct {
	v uint64
	l uint8
}

func (s fsstSym) concat(o fsstSym) (fsstSym, bool) {
	if int(s.l)+int(o.l) > 8 {
		return fsstSym{}, false
	}
	return fsstSym{v: s.v | o.v<<(8*uint(s.l)), l: s.l + o.l}, true
}

// fsstCand is a training candidate symbol with its gain.
type fsstCand struct {
	s fsstSym
	g int
}

// FsstTrainBytes caps how much of the sample is used for training.
const FsstTrainBytes = 16 << 10

// BuildFsstTable builds a symbol table from sample strings. It follows the
// shape of the FSST training loop: a few rounds of compressing the sample
// with the current table, counting emitted symbols and adjacent symbol pairs,
// and keeping the 255 candidates (symbols and concatenations of up to 8
// bytes) with the highest gain = frequency × length.
func BuildFsstTable(sample [][]byte) *FsstTable {
	// Gather a bounded training set.
	var train [][]byte
	total := 0
	for _, s := range sample {
		if total >= FsstTrainBytes {
			break
		}
		if len(s) > FsstTrainBytes-total {
			s = s[:FsstTrainBytes-total]
		}
		train = append(train, s)
		total += len(s)
	}

	t := &FsstTable{coded: true}
	t.index()
	if total == 0 {
		return t
	}
	// Codes during training: 0..n-1 are symbols, 256+b is the literal byte b.
	const nCodes = 512
	count1 := make([]int32, nCodes)
	count2 := make([]int32, nCodes*nCodes)
	symOf := func(code int) fsstSym {
		if code >= 256 {
			return fsstSym{v: uint64(code - 256), l: 1}
		}
		return fsstSym{v: t.sym[code], l: t.lens[code]}
	}
	var codes []int
	const rounds = 5
	for round := range rounds {
		clear(count1)
		clear(count2)
		for _, s := range train {
			codes = t.trainCodes(codes[:0], s)
			for k, c := range codes {
				count1[c]++
				if k+1 < len(codes) {
					count2[c*nCodes+codes[k+1]]++
				}
			}
		}
		gain := make(map[fsstSym]int)
		for c := range nCodes {
			if count1[c] == 0 {
				continue
			}
			s := symOf(c)
			// Single bytes are worth keeping: an escaped byte costs 2.
			g := int(count1[c]) * int(s.l)
			if s.l == 1 {
				g *= 2
			}
			gain[s] += g
			if round == rounds-1 {
				continue
			}
			row := count2[c*nCodes : (c+1)*nCodes]
			for d, cnt := range row {
				if cnt == 0 {
					continue
				}
				if cs, ok := s.concat(symOf(d)); ok {
					gain[cs] += int(cnt) * int(cs.l)
				}
			}
		}
		// Highest gain first (then longer, then smaller value: a total
		// order, so the table does not depend on map iteration).
		cands := make([]fsstCand, 0, len(gain))
		for s, g := range gain {
			cands = append(cands, fsstCand{s, g})
		}
		slices.SortFunc(cands, func(a, b fsstCand) int {
			if a.g != b.g {
				return cmp.Compare(b.g, a.g)
			}
			if a.s.l != b.s.l {
				return cmp.Compare(b.s.l, a.s.l)
			}
			return cmp.Compare(a.s.v, b.s.v)
		})
		cands = cands[:min(len(cands), fsstMaxSymbols)]
		// Longer symbols first, as the reference implementation orders codes.
		slices.SortStableFunc(cands, func(a, b fsstCand) int { return cmp.Compare(b.s.l, a.s.l) })
		t.n = len(cands)
		clear(t.sym[:])
		clear(t.lens[:])
		for i, c := range cands {
			t.sym[i] = c.s.v
			t.lens[i] = c.s.l
		}
		t.index()
	}
	return t
}

// trainCodes greedily codes s with the current table, appending training
// codes (symbol index, or 256+byte for an escaped byte) to codes.
func (t *FsstTable) trainCodes(codes []int, s []byte) []int {
	for i := 0; i < len(s); {
		first := s[i]
		var word uint64
		for k := min(len(s), i+8) - 1; k >= i; k-- {
			word = word<<8 | uint64(s[k])
		}
		rem := len(s) - i
		code := 256 + int(first)
		step := 1
		for _, c := range t.order[t.byFirst[first]:t.byFirst[int(first)+1]] {
			l := int(t.lens[c])
			if l > rem {
				continue
			}
			mask := ^uint64(0)
			if l < 8 {
				mask = 1<<(8*uint(l)) - 1
			}
			if word&mask == t.sym[c] {
				code, step = int(c), l
				break
			}
		}
		codes = append(codes, code)
		i += step
	}
	return codes
}
