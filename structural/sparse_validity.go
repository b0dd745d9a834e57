package structural

import (
	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/internal/par"
	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/enc23pb"
)

// A sparse validity set stores either the null or the valid positions of a
// layer. The side is Lance 14's choice (validity_set in sparse/writer.rs):
//
//   - no null: the null positions, empty; all null: the valid positions,
//     empty;
//   - a side whose positions are one run or one arithmetic progression is
//     stored in the descriptor alone ("inline"); an inline side whose
//     descriptor costs less than the least a payload can cost (16 bytes of
//     buffer overhead plus 8 of alignment) wins outright, the null side on a
//     tie with that bound; when both sides are inline the cheaper descriptor
//     wins, the null side on a tie;
//   - with neither side inline, a side with fewer than an eighth of the
//     other's positions wins;
//   - otherwise the side of least estimated wire cost (descriptor plus
//     payload, as the sequence codec choice estimates it), the null side on
//     a tie.

// payloadLowerBound is the least wire cost of a payload-carrying sequence.
const payloadLowerBound = structBufferOverhead + structAlignment

// posStats follows the positions of one side of a validity set as runs are
// observed, to find whether they are inline (Lance's PositionSetStats).
type posStats struct {
	count, first, last uint64
	step               uint64
	hasStep            bool
}

func (s *posStats) observe(p uint64) {
	switch {
	case s.count == 0:
		s.first = p
	case s.count == 1:
		s.step, s.hasStep = p-s.last, true
	case s.hasStep && s.step != p-s.last:
		s.hasStep = false
	}
	s.last = p
	s.count++
}

// observeRange observes the positions [start, end).
func (s *posStats) observeRange(start, end uint64) {
	if start == end {
		return
	}
	s.observe(start)
	if end-start > 1 {
		s.observe(start + 1)
		if end-start > 2 {
			if !(s.hasStep && s.step == 1) {
				s.hasStep = false
			}
			s.count += end - start - 2
			s.last = end - 1
		}
	}
}

// inline is the metadata-only encoding of the positions, if they have one.
func (s *posStats) inline(domain uint64) (*enc21pb.CompressiveEncoding, bool) {
	switch {
	case s.count == 0:
		return emptyEncoding(), true
	case s.count == domain:
		return progression(0, 1, domain), true
	case s.count == 1 || (s.hasStep && s.step == 1):
		return progression(s.first, 1, s.count), true
	case s.hasStep:
		return progression(s.first, s.step, s.count), true
	}
	return nil, false
}

// progression encodes the positions start, start+step, ... (n of them):
// Range from two positions, Constant{start} for one, Constant{} for none
// (Lance's RangeEncoder::encoding).
func progression(start, step, n uint64) *enc21pb.CompressiveEncoding {
	switch n {
	case 0:
		return emptyEncoding()
	case 1:
		return constantEncoding(64, start)
	}
	return rangeEncoding(64, start, step)
}

// descriptorSize is the serialized size of a validity set descriptor with
// positions e and n positions (the meaning is priced as null positions, as
// Lance prices both sides).
func descriptorSize(e *enc21pb.CompressiveEncoding, n uint64) uint64 {
	return uint64(proto.Size(&enc23pb.SparseValiditySet{
		Meaning: enc23pb.SparseValiditySet_SPARSE_VALIDITY_NULL_POSITIONS, Positions: e, NumPositions: n,
	}))
}

// validitySide is one side of a validity set being weighed.
type validitySide struct {
	stats  posStats
	valid  bool // the side holds the valid positions
	enc    *enc21pb.CompressiveEncoding
	inline bool
	cand   *seqCandidate // the chosen codec of an explicit side, once priced
	xs     []uint64      // the explicit positions, once listed
}

// positions lists the side's positions.
func (v *validitySide) positions(valid []bool) []uint64 {
	if v.xs == nil {
		// Branch-free: write every slot, advance past the side's own.
		xs := make([]uint64, v.stats.count+1)
		k, want := uint64(0), v.valid
		for i, ok := range valid {
			xs[k] = uint64(i)
			var inc uint64
			if ok == want {
				inc = 1
			}
			k += inc
		}
		v.xs = xs[:k]
	}
	return v.xs
}

// cost is the estimated wire cost of storing the side.
func (v *validitySide) cost(valid []bool) uint64 {
	if v.inline {
		return descriptorSize(v.enc, v.stats.count)
	}
	if v.cand == nil {
		v.cand = chooseSequence(v.positions(valid))
	}
	return descriptorSize(v.cand.enc, v.stats.count) + v.cand.wire - uint64(proto.Size(v.cand.enc))
}

// validitySet stores the validity of a layer of n slots (valid nil: all
// valid) as a sparse validity set and the payload of its positions (nil
// when metadata only).
func validitySet(valid []bool, n int) (*enc23pb.SparseValiditySet, []byte, error) {
	nullSet := func(e *enc21pb.CompressiveEncoding, k uint64) *enc23pb.SparseValiditySet {
		return &enc23pb.SparseValiditySet{Meaning: enc23pb.SparseValiditySet_SPARSE_VALIDITY_NULL_POSITIONS, Positions: e, NumPositions: k}
	}
	if valid == nil {
		return nullSet(emptyEncoding(), 0), nil, nil
	}
	domain := uint64(n)
	vs, ns := &validitySide{valid: true}, &validitySide{}
	// Runs of valid slots; the gaps between them are the runs of nulls.
	prevEnd := uint64(0)
	for i := 0; i < n; {
		if !valid[i] {
			i++
			continue
		}
		j := i + 1
		for j < n && valid[j] {
			j++
		}
		vs.stats.observeRange(uint64(i), uint64(j))
		ns.stats.observeRange(prevEnd, uint64(i))
		prevEnd = uint64(j)
		i = j
	}
	ns.stats.observeRange(prevEnd, domain)
	if ns.stats.count == 0 {
		return nullSet(emptyEncoding(), 0), nil, nil
	}
	if vs.stats.count == 0 {
		return &enc23pb.SparseValiditySet{Meaning: enc23pb.SparseValiditySet_SPARSE_VALIDITY_VALID_POSITIONS, Positions: emptyEncoding()}, nil, nil
	}
	vs.enc, vs.inline = vs.stats.inline(domain)
	ns.enc, ns.inline = ns.stats.inline(domain)
	var preferValid bool
	switch {
	case vs.inline && !ns.inline && vs.cost(valid) < payloadLowerBound:
		preferValid = true
	case !vs.inline && ns.inline && ns.cost(valid) <= payloadLowerBound:
		preferValid = false
	case vs.inline && ns.inline:
		preferValid = vs.cost(valid) < ns.cost(valid)
	case !vs.inline && !ns.inline && vs.stats.count < ns.stats.count/8:
		preferValid = true
	case !vs.inline && !ns.inline && ns.stats.count < vs.stats.count/8:
		preferValid = false
	default:
		if vs.stats.count+ns.stats.count >= par.MinValues {
			// Both sides are priced: the two choices run side by side.
			par.Each(2, func(i int) error {
				[2]*validitySide{vs, ns}[i].cost(valid)
				return nil
			})
		}
		preferValid = vs.cost(valid) < ns.cost(valid)
	}
	side, meaning := ns, enc23pb.SparseValiditySet_SPARSE_VALIDITY_NULL_POSITIONS
	if preferValid {
		side, meaning = vs, enc23pb.SparseValiditySet_SPARSE_VALIDITY_VALID_POSITIONS
	}
	set := &enc23pb.SparseValiditySet{Meaning: meaning, NumPositions: side.stats.count}
	if side.inline {
		set.Positions = side.enc
		return set, nil, nil
	}
	if side.cand == nil {
		side.cand = chooseSequence(side.positions(valid))
	}
	set.Positions = side.cand.enc
	if !side.cand.hasPayload {
		return set, nil, nil
	}
	p, err := side.cand.write(nil)
	return set, p, err
}
