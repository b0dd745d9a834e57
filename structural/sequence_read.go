package structural

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"github.com/planarlance/planar/internal/par"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/values"
)

// checkSequence checks a block encoding of n values of bitWidth bits (n < 0:
// not known here) against the grammar Lance 14's sequence decoder accepts
// (compression.rs create_fixed_width_block_decompressor and
// sequence/decoder.rs): Flat, Constant, Range, inline and out-of-line bit
// packing anywhere; Delta, General, RLE and Dictionary only at the top, over
// those leaves. A Constant has no value exactly when there are no values.
func checkSequence(e *enc21pb.CompressiveEncoding, bitWidth uint64, n int64, composite bool) error {
	switch c := e.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Flat:
		if c.Flat.BitsPerValue != bitWidth || c.Flat.Data != nil {
			return fmt.Errorf("flat of %d bits (want %d, plain)", c.Flat.BitsPerValue, bitWidth)
		}
	case *enc21pb.CompressiveEncoding_Constant:
		v := c.Constant.Value
		if n >= 0 && (v == nil) != (n == 0) {
			return fmt.Errorf("constant with %d value bytes for %d values", len(v), n)
		}
		if v != nil && uint64(len(v)) != bitWidth/8 {
			return fmt.Errorf("constant of %d bytes for %d-bit values", len(v), bitWidth)
		}
	case *enc21pb.CompressiveEncoding_Range:
		r := c.Range
		if r.UncompressedBitsPerValue != bitWidth || r.Step == 0 {
			return fmt.Errorf("range of %d bits, step %d", r.UncompressedBitsPerValue, r.Step)
		}
		if n >= 0 {
			if n < 2 {
				return fmt.Errorf("range of %d values", n)
			}
			hi, d := bits.Mul64(r.Step, uint64(n-1))
			last, carry := bits.Add64(r.Start, d, 0)
			if hi != 0 || carry != 0 || (bitWidth == 32 && last > 1<<32-1) {
				return fmt.Errorf("range from %d by %d overflows", r.Start, r.Step)
			}
		}
	case *enc21pb.CompressiveEncoding_InlineBitpacking:
		if c.InlineBitpacking.UncompressedBitsPerValue != bitWidth || c.InlineBitpacking.Values != nil || n > 1024 {
			return fmt.Errorf("inline bit packing of %d bits (%d values, one 1024-value chunk at most)", c.InlineBitpacking.UncompressedBitsPerValue, n)
		}
	case *enc21pb.CompressiveEncoding_OutOfLineBitpacking:
		o := c.OutOfLineBitpacking
		f := o.GetValues().GetFlat()
		if o.UncompressedBitsPerValue != bitWidth || f == nil || f.Data != nil || f.BitsPerValue == 0 || f.BitsPerValue >= bitWidth {
			return fmt.Errorf("out-of-line bit packing of %d bits", o.UncompressedBitsPerValue)
		}
	case *enc21pb.CompressiveEncoding_Delta:
		d := c.Delta
		if !composite || d.UncompressedBitsPerValue != bitWidth || d.Deltas == nil || (n >= 0 && n < 2) {
			return fmt.Errorf("delta of %d bits here (%d values)", d.UncompressedBitsPerValue, n)
		}
		return checkSequence(d.Deltas, bitWidth, max(n-1, -1), false)
	case *enc21pb.CompressiveEncoding_General:
		g := c.General
		s := g.GetCompression().GetScheme()
		f := g.GetValues().GetFlat()
		if !composite || f == nil || f.BitsPerValue != bitWidth || f.Data != nil ||
			(s != enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_LZ4 && s != enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_ZSTD) {
			return fmt.Errorf("general compression here")
		}
	case *enc21pb.CompressiveEncoding_Rle:
		r := c.Rle
		if !composite || r.Values == nil || r.RunLengths == nil || n == 0 {
			return fmt.Errorf("rle here")
		}
		if err := checkSequence(r.Values, bitWidth, -1, false); err != nil {
			return fmt.Errorf("rle values: %w", err)
		}
		if err := checkSequence(r.RunLengths, 32, -1, false); err != nil {
			return fmt.Errorf("rle run lengths: %w", err)
		}
	case *enc21pb.CompressiveEncoding_Dictionary:
		d := c.Dictionary
		if !composite || d.Indices == nil || d.Items == nil || d.NumDictionaryItems == 0 || d.NumDictionaryItems > maxBlockDictItems {
			return fmt.Errorf("dictionary here")
		}
		if err := checkSequence(d.Indices, 32, n, false); err != nil {
			return fmt.Errorf("dictionary indices: %w", err)
		}
		if err := checkSequence(d.Items, bitWidth, int64(d.NumDictionaryItems), false); err != nil {
			return fmt.Errorf("dictionary items: %w", err)
		}
	case nil:
		return fmt.Errorf("no encoding")
	default:
		return fmt.Errorf("%s is not a sequence encoding", values.EncodingName(e))
	}
	return nil
}

// seqValues are the values of a decoded u64 sequence: an arithmetic
// progression (metadata-only sets, never materialized) or explicit values,
// which a valid page keeps under 2^31 (positions inside their domain,
// counts inside their child slots), held in 32 bits.
type seqValues struct {
	n           int
	start, step uint64
	data        []uint32 // explicit values; nil for a progression
}

func (s seqValues) at(i int) uint64 {
	if s.data != nil {
		return uint64(s.data[i])
	}
	return s.start + uint64(i)*s.step
}

// seqReader hands out the payloads of the structural sequences in order and
// decodes the sequences. A reader of a whole structure plans every
// sequence first (taking payloads in buffer order) and decodes them side by
// side in run, then runs the checks that join them (after).
type seqReader struct {
	bufs      [][]byte
	next      int
	pageBytes uint64

	jobs   []func() error // planned decodes
	values uint64         // values they decode
	after  []func() error // checks and sums over the decoded sets, in order
}

// minParallelValues is the fewest values a structure's sequences decode
// side by side.
const minParallelValues = 1 << 15

// plan checks the descriptor of a sequence of n u64 values and takes its
// payload.
func (r *seqReader) plan(e *enc21pb.CompressiveEncoding, n uint64, what string) ([]byte, error) {
	if e == nil {
		return nil, sparseCorrupt("%s without an encoding", what)
	}
	if n > maxSparseSlots {
		return nil, sparseCorrupt("%s of %d values", what, n)
	}
	if err := checkSequence(e, 64, int64(n), true); err != nil {
		return nil, sparseCorrupt("%s: %v", what, err)
	}
	if !values.HasPayload(e) {
		return nil, nil
	}
	if r.next >= len(r.bufs) {
		return nil, sparseCorrupt("%s: missing buffer", what)
	}
	r.next++
	return r.bufs[r.next-1], nil
}

// read decodes a sequence of n u64 values now.
func (r *seqReader) read(e *enc21pb.CompressiveEncoding, n uint64, what string) (seqValues, error) {
	payload, err := r.plan(e, n, what)
	if err != nil {
		return seqValues{}, err
	}
	return decodeSeq(e, payload, n, what)
}

// positionsInto plans the decode of a strictly increasing position set
// inside [0, domain) into dst.
func (r *seqReader) positionsInto(dst *posList, e *enc21pb.CompressiveEncoding, n uint64, domain int, what string) error {
	if n > uint64(domain) {
		return sparseCorrupt("%s: %d positions in a domain of %d", what, n, domain)
	}
	return r.planDecode(e, n, what, func(payload []byte) (err error) {
		*dst, err = decodePositions(e, payload, n, domain, what)
		return err
	})
}

// planDecode plans a sequence of n values and queues decode of its payload.
func (r *seqReader) planDecode(e *enc21pb.CompressiveEncoding, n uint64, what string, decode func([]byte) error) error {
	payload, err := r.plan(e, n, what)
	if err != nil {
		return err
	}
	r.values += n
	r.jobs = append(r.jobs, func() error { return decode(payload) })
	return nil
}

// run decodes the planned sequences (side by side when they hold enough
// values) and then runs the checks over them; the error is that of the
// first planned sequence or check that failed.
func (r *seqReader) run() error {
	if r.values >= minParallelValues {
		if err := par.Each(len(r.jobs), func(i int) error { return r.jobs[i]() }); err != nil {
			return err
		}
	} else {
		for _, j := range r.jobs {
			if err := j(); err != nil {
				return err
			}
		}
	}
	for _, f := range r.after {
		if err := f(); err != nil {
			return err
		}
	}
	r.jobs, r.after, r.values = nil, nil, 0
	return nil
}

// decodeSeq decodes a sequence of n u64 values from its payload.
func decodeSeq(e *enc21pb.CompressiveEncoding, payload []byte, n uint64, what string) (seqValues, error) {
	switch c := e.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Constant:
		if n == 0 {
			return seqValues{}, nil
		}
		return seqValues{n: int(n), start: binary.LittleEndian.Uint64(c.Constant.Value)}, nil
	case *enc21pb.CompressiveEncoding_Range:
		return seqValues{n: int(n), start: c.Range.Start, step: c.Range.Step}, nil
	}
	// Decoded values take 4 bytes each: they must come from the payload.
	if !backed(n, uint64(len(payload))) {
		return seqValues{}, sparseCorrupt("%s: %d values from %d bytes", what, n, len(payload))
	}
	data := make([]uint32, n)
	if err := values.DecodeUint32s(e, payload, data); err != nil {
		return seqValues{}, sparseCorrupt("%s: %v", what, err)
	}
	return seqValues{n: int(n), data: data}, nil
}

// decodePositions decodes a strictly increasing position set inside [0,
// domain) from its payload.
func decodePositions(e *enc21pb.CompressiveEncoding, payload []byte, n uint64, domain int, what string) (posList, error) {
	ps, err := decodeSeq(e, payload, n, what)
	if err != nil {
		return posList{}, err
	}
	if ps.n == 0 {
		return posList{}, nil
	}
	if ps.data == nil {
		// A progression (Range steps are positive and do not overflow):
		// only its last position can leave the domain.
		if ps.n > 1 && ps.step == 0 {
			return posList{}, sparseCorrupt("%s: %d positions all %d", what, ps.n, ps.start)
		}
		if last := ps.at(ps.n - 1); last >= uint64(domain) {
			return posList{}, sparseCorrupt("%s: position %d outside [0, %d)", what, last, domain)
		}
		return posList{n: ps.n, start: int(ps.start), step: int(ps.step)}, nil
	}
	// Increasing inside the domain: checked branch-free, the offending
	// position found only on failure.
	d := ps.data
	prev, bad := d[0], uint64(d[0]) >= uint64(domain)
	for _, x := range d[1:] {
		bad = bad || x <= prev || uint64(x) >= uint64(domain)
		prev = x
	}
	if bad {
		for i, x := range d {
			if uint64(x) >= uint64(domain) || (i > 0 && x <= d[i-1]) {
				return posList{}, sparseCorrupt("%s: position %d not increasing inside [0, %d)", what, x, domain)
			}
		}
	}
	return posList{n: ps.n, p: d}, nil
}
