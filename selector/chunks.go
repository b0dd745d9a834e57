package selector

import "github.com/planarlance/planar/values"

// Chunk cuts: how a dense chunked page's values are cut into mini-block
// chunks, the cut below the page.

// ChunkCounts cuts a page's n visible values (v: fixed-width values of
// v.Bits bits, or variable-width ones with offBits-wide offsets; v.Offsets
// holds n+1 entries) into the value counts of its chunks: powers of two for
// every chunk but the last, sized for the codec that stores them.
func ChunkCounts(codec values.Codec, kind values.Kind, v values.Block, offBits int) []int {
	n := v.N
	var counts []int
	if g, ok := codec.(values.GeneralCodec); ok {
		if g.ChunkValues > 0 {
			for start := 0; start < n; start += g.ChunkValues {
				counts = append(counts, min(g.ChunkValues, n-start))
			}
			return counts
		}
		codec = g.Inner
	}
	switch codec.(type) {
	case values.BitpackCodec:
		// One bit-packing block per chunk.
		for start := 0; start < n; start += rleChunk {
			counts = append(counts, min(rleChunk, n-start))
		}
		return counts
	case values.RleCodec:
		return rleChunkCounts(v.Data, v.Bits, n, codec.(values.RleCodec))
	}
	if kind == values.KindVariable {
		// Offset bits per value: the offset width, or what the offsets
		// codec packs them to.
		wbits := offBits
		if v, ok := codec.(values.VariableCodec); ok {
			wbits = v.OffsetBits()
		}
		for start := 0; start < n; {
			cnt := 2
			for cnt < 4096 {
				next := cnt * 2
				end := min(start+next, n)
				size := (end-start+1)*wbits/8 + int(v.Offsets[end]-v.Offsets[start])
				if size > values.VariableChunkBytes || start+next > n {
					break
				}
				cnt = next
			}
			if start+cnt >= n {
				cnt = n - start
			}
			counts = append(counts, cnt)
			start += cnt
		}
		return counts
	}
	per := 1 << values.FlatChunkLog2(v.Bits)
	for start := 0; start < n; start += per {
		counts = append(counts, min(per, n-start))
	}
	return counts
}

// rleChunk is the value count of bit-packed chunks: one FastLanes block.
const rleChunk = 1024

// rleMaxChunkBytes bounds an RLE chunk (Lance's mini-block byte budget).
const rleMaxChunkBytes = 8186

// rleChunkCounts cuts n values into RLE chunks as Lance does: each chunk the
// largest power-of-two prefix whose runs fit the byte budget, the last chunk
// whatever remains when it fits.
func rleChunkCounts(data []byte, bits, n int, codec values.RleCodec) []int {
	bw := bits / 8
	lw, maxRun := 1, 255
	if codec.LenBits == 16 {
		lw, maxRun = 2, 65535
	}
	vw := bw // stored bytes per run value
	if codec.ValueWidth > 0 {
		vw = max(1, (codec.ValueWidth+7)/8) // packed values: budget by packed width
	}
	maxVals := codec.MaxChunkValues()
	size := func(start, cnt int) int {
		runs := values.RunCount(bits, data[start*bw:(start+cnt)*bw], cnt)
		return runs*(vw+lw) + cnt/maxRun*(vw+lw)
	}
	var counts []int
	for start := 0; start < n; {
		rest := n - start
		if rest <= maxVals && size(start, rest) <= rleMaxChunkBytes {
			counts = append(counts, rest)
			break
		}
		p := maxVals
		for p > 1 && (p > rest || size(start, p) > rleMaxChunkBytes) {
			p /= 2
		}
		counts = append(counts, p)
		start += p
	}
	return counts
}
