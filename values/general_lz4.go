package values

// LZ4 block compression, both directions: the compressor reproduces
// liblz4's default one (Lance's), decoding goes through pierrec/lz4.

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"sync"

	"github.com/pierrec/lz4/v4"
)

// lz4Pool holds hash tables for lz4State.appendBlock (32 KiB each).
var lz4Pool = sync.Pool{New: func() any { return new(lz4State) }}

func appendLZ4(dst, src []byte) ([]byte, error) {
	n := len(src)
	if n > lz4MaxInput {
		return dst, fmt.Errorf("values: lz4 input of %d bytes exceeds the LZ4 limit of %d: %w", n, lz4MaxInput, ErrNotApplicable)
	}
	dst = slices.Grow(dst, 4+lz4.CompressBlockBound(n))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(n))
	st := lz4Pool.Get().(*lz4State)
	dst = st.appendBlock(dst, src)
	lz4Pool.Put(st)
	return dst, nil
}

func decompressLZ4(dst, src []byte) ([]byte, error) {
	if len(src) < 4 {
		return dst, fmt.Errorf("values: lz4 buffer of %d bytes is shorter than its 4-byte length prefix: %w", len(src), ErrCorrupt)
	}
	n := uint64(binary.LittleEndian.Uint32(src))
	block := src[4:]
	if n > uint64(len(block))*lz4MaxRatio+16 {
		return dst, fmt.Errorf("values: lz4 length prefix %d is impossible for a %d-byte block: %w", n, len(block), ErrCorrupt)
	}
	if n == 0 {
		// liblz4 encodes empty input as the single token 0x00; the decoder
		// library cannot be handed an empty destination.
		if len(block) > 1 || len(block) == 1 && block[0] != 0 {
			return dst, fmt.Errorf("values: lz4 block of %d bytes for 0 decoded bytes: %w", len(block), ErrCorrupt)
		}
		return dst, nil
	}
	start := len(dst)
	dst = slices.Grow(dst, int(n))
	out := dst[start : start+int(n)]
	got, err := lz4.UncompressBlock(block, out)
	if err != nil {
		return dst[:start], fmt.Errorf("values: lz4 block of %d bytes (want %d decoded): %w: %v", len(block), n, ErrCorrupt, err)
	}
	if uint64(got) != n {
		return dst[:start], fmt.Errorf("values: lz4 block decoded to %d bytes, length prefix says %d: %w", got, n, ErrCorrupt)
	}
	return dst[:start+int(n)], nil
}

// ---- LZ4 block compressor ----
//
// appendBlock reproduces the output of liblz4's LZ4_compress_default (the
// "fast" compressor at acceleration 1, which Lance uses through the lz4
// crate), so blocks written here are byte-identical to Lance's.

const (
	lz4MinMatch     = 4
	lz4MFLimit      = 12 // no match may start within the last 12 bytes
	lz4LastLiterals = 5  // the last 5 bytes are always literals
	lz4MinLength    = lz4MFLimit + 1
	lz4SkipTrigger  = 6
	lz4Limit64K     = 64<<10 + lz4MFLimit - 1 // below this, 16-bit positions
	lz4DistanceMax  = 65535
	lz4HashLog      = 12 // LZ4_MEMORY_USAGE 14 → 4096 u32 entries
)

// lz4State holds the two hash tables of liblz4: 8192 u16 positions for
// inputs under 64 KiB (hashing 4 bytes) and 4096 u32 positions otherwise
// (hashing 5 bytes, as liblz4 does on 64-bit targets).
type lz4State struct {
	t16 [1 << (lz4HashLog + 1)]uint16
	t32 [1 << lz4HashLog]uint32
}

func lz4Hash(src []byte, p int, small bool) uint32 {
	if small {
		return (binary.LittleEndian.Uint32(src[p:]) * 2654435761) >> (32 - (lz4HashLog + 1))
	}
	return uint32(((binary.LittleEndian.Uint64(src[p:]) << 24) * 889523592379) >> (64 - lz4HashLog))
}

func (s *lz4State) get(h uint32, small bool) int {
	if small {
		return int(s.t16[h])
	}
	return int(s.t32[h])
}

func (s *lz4State) put(h uint32, pos int, small bool) {
	if small {
		s.t16[h] = uint16(pos)
	} else {
		s.t32[h] = uint32(pos)
	}
}

// lz4Count returns how many bytes src[a:] and src[b:] have in common, not
// reading src at or beyond limit from a (b < a).
func lz4Count(src []byte, a, b, limit int) int {
	start := a
	for a+8 <= limit {
		x := binary.LittleEndian.Uint64(src[a:]) ^ binary.LittleEndian.Uint64(src[b:])
		if x != 0 {
			return a - start + bits.TrailingZeros64(x)/8
		}
		a += 8
		b += 8
	}
	for a < limit && src[a] == src[b] {
		a++
		b++
	}
	return a - start
}

// lz4AppendLength appends the 255-run extension of a length that reached 15.
func lz4AppendLength(dst []byte, rest int) []byte {
	for rest >= 255 {
		dst = append(dst, 255)
		rest -= 255
	}
	return append(dst, byte(rest))
}

// appendBlock appends the LZ4 block form of src to dst.
func (s *lz4State) appendBlock(dst, src []byte) []byte {
	anchor := 0
	if len(src) >= lz4MinLength {
		dst, anchor = s.sequences(dst, src)
	}
	// Last literals.
	last := len(src) - anchor
	if last >= 15 {
		dst = append(dst, 15<<4)
		dst = lz4AppendLength(dst, last-15)
	} else {
		dst = append(dst, byte(last<<4))
	}
	return append(dst, src[anchor:]...)
}

// sequences appends all sequences but the final literal run and returns the
// start of that run.
func (s *lz4State) sequences(dst, src []byte) ([]byte, int) {
	n := len(src)
	small := n < lz4Limit64K
	if small {
		clear(s.t16[:])
	} else {
		clear(s.t32[:])
	}
	mflimitPlusOne := n - lz4MFLimit + 1
	matchLimit := n - lz4LastLiterals
	anchor := 0

	s.put(lz4Hash(src, 0, small), 0, small)
	ip := 1
	forwardH := lz4Hash(src, ip, small)
	for {
		// Find a match, skipping faster the longer none is found.
		var match int
		forwardIP := ip
		step := 1
		searchMatchNb := 1 << lz4SkipTrigger
		for {
			h := forwardH
			cur := forwardIP
			match = s.get(h, small)
			ip = forwardIP
			forwardIP += step
			step = searchMatchNb >> lz4SkipTrigger
			searchMatchNb++
			if forwardIP > mflimitPlusOne {
				return dst, anchor
			}
			forwardH = lz4Hash(src, forwardIP, small)
			s.put(h, cur, small)
			if !small && match+lz4DistanceMax < cur {
				continue // too far
			}
			if binary.LittleEndian.Uint32(src[match:]) == binary.LittleEndian.Uint32(src[ip:]) {
				break
			}
		}
		// Extend the match backwards.
		for ip > anchor && match > 0 && src[ip-1] == src[match-1] {
			ip--
			match--
		}
		// Literals.
		token := len(dst)
		lit := ip - anchor
		if lit >= 15 {
			dst = append(dst, 15<<4)
			dst = lz4AppendLength(dst, lit-15)
		} else {
			dst = append(dst, byte(lit<<4))
		}
		dst = append(dst, src[anchor:ip]...)

		for {
			// Offset and match length.
			dst = binary.LittleEndian.AppendUint16(dst, uint16(ip-match))
			ml := lz4Count(src, ip+lz4MinMatch, match+lz4MinMatch, matchLimit)
			ip += ml + lz4MinMatch
			if ml >= 15 {
				dst[token] += 15
				dst = lz4AppendLength(dst, ml-15)
			} else {
				dst[token] += byte(ml)
			}
			anchor = ip
			if ip >= mflimitPlusOne {
				return dst, anchor
			}
			s.put(lz4Hash(src, ip-2, small), ip-2, small)
			// Is there an immediate match at ip? Then emit it with no literals.
			h := lz4Hash(src, ip, small)
			cand := s.get(h, small)
			s.put(h, ip, small)
			if (small || cand+lz4DistanceMax >= ip) &&
				binary.LittleEndian.Uint32(src[cand:]) == binary.LittleEndian.Uint32(src[ip:]) {
				match = cand
				token = len(dst)
				dst = append(dst, 0)
				continue
			}
			break
		}
		ip++
		forwardH = lz4Hash(src, ip, small)
	}
}
