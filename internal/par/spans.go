package par

// Span is values [Lo, Hi) of a page of variable-width values whose bytes
// lie in Data, Data's first byte being the page's byte Base (value i is
// Data[offsets[i]-Base : offsets[i+1]-Base] for the page's offsets).
type Span struct {
	Data   []byte
	Base   uint64
	Lo, Hi int
}

// PartSpans returns the spans of the n = len(offsets)-1 values of a page
// whose bytes lie in parts: part k holds values [firsts[k], firsts[k+1])
// (the last part up to n), back to back from its first byte, which is the
// page's byte offsets[firsts[k]].
func PartSpans(offsets []uint64, parts [][]byte, firsts []int) []Span {
	n := len(offsets) - 1
	spans := make([]Span, len(parts))
	for k, p := range parts {
		lo, hi := firsts[k], n
		if k+1 < len(firsts) {
			hi = firsts[k+1]
		}
		spans[k] = Span{Data: p, Base: offsets[lo], Lo: lo, Hi: hi}
	}
	return spans
}

// SpanPieces cuts spans into the pieces a split loop runs side by side
// (Pieces of MinValues values, in order), leaving out empty ones.
func SpanPieces(spans []Span) []Span {
	var pieces []Span
	for _, sp := range spans {
		cuts := Pieces(sp.Hi-sp.Lo, MinValues)
		for j := range len(cuts) - 1 {
			if cuts[j] < cuts[j+1] {
				pieces = append(pieces, Span{Data: sp.Data, Base: sp.Base, Lo: sp.Lo + cuts[j], Hi: sp.Lo + cuts[j+1]})
			}
		}
	}
	return pieces
}
