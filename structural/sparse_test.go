package structural

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/enc23pb"
	"github.com/planarlance/planar/values"
)

const (
	nullPos  = enc23pb.SparseValiditySet_SPARSE_VALIDITY_NULL_POSITIONS
	validPos = enc23pb.SparseValiditySet_SPARSE_VALIDITY_VALID_POSITIONS
)

func mask(n int, f func(i int) bool) []bool {
	out := make([]bool, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// TestValidityPolarity: the side and form of a validity set, as Lance 14
// chooses them (its own unit tests' cases among them).
func TestValidityPolarity(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int, p float64) []bool { return mask(n, func(int) bool { return rng.Float64() >= p }) }
	cases := []struct {
		name    string
		valid   []bool
		n       int
		meaning enc23pb.SparseValiditySet_Meaning
		enc     string
		count   uint64
	}{
		{"all_valid_nil", nil, 100, nullPos, "constant", 0},
		{"all_valid", mask(100, func(int) bool { return true }), 100, nullPos, "constant", 0},
		{"all_null", mask(100, func(int) bool { return false }), 100, validPos, "constant", 0},
		{"empty_domain", []bool{}, 0, nullPos, "constant", 0},
		// Lance: a regular stride needs no payload.
		{"stride3", mask(1024, func(i int) bool { return i%3 == 0 }), 1024, validPos, "range64(0,+3)", 342},
		// Lance: both sides are runs; start 0 costs less metadata.
		{"head_900", mask(1024, func(i int) bool { return i < 900 }), 1024, validPos, "range64(0,+1)", 900},
		{"tail_valid", mask(1024, func(i int) bool { return i >= 100 }), 1024, nullPos, "range64(0,+1)", 100},
		{"one_null", mask(100, func(i int) bool { return i != 5 }), 100, nullPos, "constant(8 bytes)", 1},
		{"one_valid", mask(100, func(i int) bool { return i == 5 }), 100, validPos, "constant(8 bytes)", 1},
		{"null_run", mask(100, func(i int) bool { return i < 10 || i >= 20 }), 100, nullPos, "range64(10,+1)", 10},
		{"two_nulls", mask(100, func(i int) bool { return i != 3 && i != 90 }), 100, nullPos, "range64(3,+87)", 2},
		// Explicit sides: the minority (an eighth rule) is stored.
		{"random_1pct_null", random(20000, 0.01), 20000, nullPos, "delta64", 0},
		{"random_99pct_null", random(20000, 0.99), 20000, validPos, "delta64", 0},
		{"null_run_scattered_valid", mask(10000, func(i int) bool { return i >= 9000 && i%7 != 0 }), 10000, validPos, "delta64(bitpack64(w=2))", 857},
		// The null side is inline and costs less than any payload.
		{"stride3_nulls", mask(1024, func(i int) bool { return i%3 != 0 }), 1024, nullPos, "range64(0,+3)", 342},
		// A lone valid run: its range descriptor is cheaper than the
		// nulls' constant.
		{"valid_run_one_null", []bool{true, true, true, false}, 4, validPos, "range64(0,+1)", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, payload, err := validitySet(c.valid, c.n)
			if err != nil {
				t.Fatal(err)
			}
			name := values.EncodingName(v.Positions)
			if v.Meaning != c.meaning || (c.enc != "" && !bytes.HasPrefix([]byte(name), []byte(c.enc))) || (c.count != 0 && v.NumPositions != c.count) {
				t.Errorf("got %v %s (%d positions), want %v %s (%d)", v.Meaning, name, v.NumPositions, c.meaning, c.enc, c.count)
			}
			if values.HasPayload(v.Positions) != (payload != nil) {
				t.Errorf("%s with a payload of %d bytes", name, len(payload))
			}
			// The set reads back as the validity it was built from.
			sr := &seqReader{bufs: [][]byte{payload}, pageBytes: uint64(len(payload))}
			if payload == nil {
				sr.bufs = nil
			}
			l := &indexLayer{slots: c.n}
			if err := sr.validity(l, v, "test"); err != nil {
				t.Fatal(err)
			}
			if err := sr.run(); err != nil {
				t.Fatal(err)
			}
			var got []bool
			if l.layer == NullableItem {
				got = make([]bool, c.n)
				fillValidityFrom(got, &l.valid, l.nulls, 0, 0)
			}
			if !sameValid(got, c.valid, c.n) {
				t.Errorf("validity does not read back")
			}
		})
	}
}

// sameValid compares validity where nil means all valid.
func sameValid(a, b []bool, n int) bool {
	for i := 0; i < n; i++ {
		if (a == nil || a[i]) != (b == nil || b[i]) {
			return false
		}
	}
	return true
}

// TestBuildSparseLayers: each layer kind's descriptor and buffers.
func TestBuildSparseLayers(t *testing.T) {
	leaf := Step{Kind: StepLeaf}
	list := Step{Kind: StepList}
	str := Step{Kind: StepStruct}
	fsl := Step{Kind: StepFSL, Dim: 2}
	cases := []struct {
		name string
		path []Step
		lds  []LayerData
		want string // prototext of the structure
		bufs int
	}{
		{"validity", []Step{leaf}, []LayerData{{Len: 4, Valid: []bool{true, false, true, true}}},
			`layers:{validity:{meaning:SPARSE_VALIDITY_NULL_POSITIONS positions:{constant:{value:"\x01\x00\x00\x00\x00\x00\x00\x00"}} num_positions:1}}`, 0},
		{"list", []Step{list, leaf}, []LayerData{
			{Len: 4, Valid: []bool{true, true, true, false}, Offsets: []int32{0, 2, 2, 5, 5}},
			{Len: 5},
		}, `layers:{list:{num_child_slots:5 non_empty_positions:{range:{uncompressed_bits_per_value:64 step:2}} num_non_empty_positions:2 ` +
			`counts:{range:{uncompressed_bits_per_value:64 start:2 step:1}} ` +
			`validity:{meaning:SPARSE_VALIDITY_VALID_POSITIONS positions:{range:{uncompressed_bits_per_value:64 step:1}} num_positions:3}}} ` +
			`layers:{validity:{meaning:SPARSE_VALIDITY_NULL_POSITIONS positions:{constant:{}}}}`, 0},
		{"list_all_empty", []Step{list, leaf}, []LayerData{{Len: 3, Offsets: []int32{0, 0, 0, 0}}, {Len: 0}},
			`layers:{list:{non_empty_positions:{constant:{}} counts:{constant:{}} validity:{meaning:SPARSE_VALIDITY_NULL_POSITIONS positions:{constant:{}}}}} ` +
				`layers:{validity:{meaning:SPARSE_VALIDITY_NULL_POSITIONS positions:{constant:{}}}}`, 0},
		{"list_one_count", []Step{list, leaf}, []LayerData{{Len: 3, Offsets: []int32{0, 0, 4, 4}}, {Len: 4, Valid: []bool{false, false, false, false}}},
			`layers:{list:{num_child_slots:4 non_empty_positions:{constant:{value:"\x01\x00\x00\x00\x00\x00\x00\x00"}} num_non_empty_positions:1 ` +
				`counts:{constant:{value:"\x04\x00\x00\x00\x00\x00\x00\x00"}} validity:{meaning:SPARSE_VALIDITY_NULL_POSITIONS positions:{constant:{}}}}} ` +
				`layers:{validity:{meaning:SPARSE_VALIDITY_VALID_POSITIONS positions:{constant:{}}}}`, 0},
		{"struct_fsl", []Step{str, fsl, leaf}, []LayerData{
			{Len: 2, Valid: []bool{false, true}}, {Len: 2, Dim: 2}, {Len: 4},
		}, `layers:{validity:{meaning:SPARSE_VALIDITY_NULL_POSITIONS positions:{constant:{value:"\x00\x00\x00\x00\x00\x00\x00\x00"}} num_positions:1}} ` +
			`layers:{fixed_size_list:{dimension:2 validity:{meaning:SPARSE_VALIDITY_NULL_POSITIONS positions:{constant:{}}}}} ` +
			`layers:{validity:{meaning:SPARSE_VALIDITY_NULL_POSITIONS positions:{constant:{}}}}`, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, bufs, err := BuildSparse(c.lds, c.path)
			if err != nil {
				t.Fatal(err)
			}
			var want enc23pb.SparseStructure
			if err := prototextUnmarshal(c.want, &want); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(s, &want) {
				t.Errorf("got  %v\nwant %v", s, &want)
			}
			if len(bufs) != c.bufs {
				t.Errorf("%d buffers, want %d", len(bufs), c.bufs)
			}
		})
	}
}

// TestBuildSparseBufferOrder: per layer the non-empty positions, counts and
// validity payloads, in that order.
func TestBuildSparseBufferOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	n := 5000
	valid := mask(n, func(int) bool { return rng.IntN(3) != 0 })
	offs := []int32{0}
	for i := 0; i < n; i++ {
		k := int32(0)
		if valid[i] {
			k = int32(rng.IntN(4))
		}
		offs = append(offs, offs[i]+k)
	}
	child := int(offs[n])
	lds := []LayerData{
		{Len: n, Valid: valid, Offsets: offs},
		{Len: child, Valid: mask(child, func(int) bool { return rng.IntN(5) != 0 })},
	}
	path := []Step{{Kind: StepList}, {Kind: StepLeaf}}
	s, bufs, err := BuildSparse(lds, path)
	if err != nil {
		t.Fatal(err)
	}
	l := s.Layers[0].GetList()
	encs := []*enc21pb.CompressiveEncoding{l.NonEmptyPositions, l.Counts, l.Validity.Positions, s.Layers[1].GetValidity().Positions}
	ns := []uint64{l.NumNonEmptyPositions, l.NumNonEmptyPositions, l.Validity.NumPositions, s.Layers[1].GetValidity().NumPositions}
	if len(bufs) != 4 {
		t.Fatalf("%d buffers, want 4 (%v)", len(bufs), s)
	}
	for i, e := range encs {
		b, err := values.DecodeBlock(e, bufs[i], int(ns[i]))
		if err != nil {
			t.Fatalf("set %d (%s) does not decode from buffer %d: %v", i, values.EncodingName(e), i, err)
		}
		_ = b
	}
}

func TestBuildSparseErrors(t *testing.T) {
	leaf, list := Step{Kind: StepLeaf}, Step{Kind: StepList}
	cases := []struct {
		name string
		path []Step
		lds  []LayerData
	}{
		{"no_layers", nil, nil},
		{"path_length", []Step{list, leaf}, []LayerData{{Len: 1}}},
		{"null_list_children", []Step{list, leaf}, []LayerData{{Len: 2, Valid: []bool{true, false}, Offsets: []int32{0, 1, 2}}, {Len: 2}}},
		{"decreasing", []Step{list, leaf}, []LayerData{{Len: 2, Offsets: []int32{0, 2, 1}}, {Len: 1}}},
		{"offsets_start", []Step{list, leaf}, []LayerData{{Len: 1, Offsets: []int32{1, 2}}, {Len: 2}}},
		{"offsets_count", []Step{list, leaf}, []LayerData{{Len: 2, Offsets: []int32{0, 2}}, {Len: 2}}},
		{"child_len", []Step{list, leaf}, []LayerData{{Len: 1, Offsets: []int32{0, 2}}, {Len: 3}}},
		{"fsl_dim", []Step{{Kind: StepFSL, Dim: 2}, leaf}, []LayerData{{Len: 1, Dim: 3}, {Len: 3}}},
		{"valid_len", []Step{leaf}, []LayerData{{Len: 3, Valid: []bool{true}}}},
	}
	for _, c := range cases {
		if _, _, err := BuildSparse(c.lds, c.path); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// randomLayers draws consistent layer data for path over rows slots.
func randomLayers(rng *rand.Rand, path []Step, rows int) []LayerData {
	lds := make([]LayerData, len(path))
	n := rows
	for i, st := range path {
		ld := LayerData{Len: n}
		switch rng.IntN(6) {
		case 0: // all valid
		case 1:
			ld.Valid = mask(n, func(int) bool { return false })
		case 2:
			p := rng.Float64()
			ld.Valid = mask(n, func(int) bool { return rng.Float64() >= p })
		case 3:
			run := 1 + rng.IntN(50)
			ld.Valid = mask(n, func(i int) bool { return i/run%2 == 0 })
		case 4:
			k := 1 + rng.IntN(9)
			ld.Valid = mask(n, func(i int) bool { return i%k != 0 })
		case 5:
			ld.Valid = mask(n, func(int) bool { return rng.IntN(100) != 0 })
		}
		switch st.Kind {
		case StepList:
			ld.Offsets = make([]int32, n+1)
			maxLen := rng.IntN(5)
			for s := 0; s < n; s++ {
				k := 0
				if (ld.Valid == nil || ld.Valid[s]) && maxLen > 0 {
					k = rng.IntN(maxLen + 1)
				}
				ld.Offsets[s+1] = ld.Offsets[s] + int32(k)
			}
			ld.Layer = itemLayerList(ld.Valid)
			n = int(ld.Offsets[n])
		case StepFSL:
			ld.Dim = st.Dim
			ld.Layer = itemLayer(ld.Valid)
			n *= st.Dim
		default:
			ld.Layer = itemLayer(ld.Valid)
		}
		lds[i] = ld
	}
	return lds
}

func itemLayer(valid []bool) Layer {
	if valid != nil {
		return NullableItem
	}
	return AllValidItem
}

func itemLayerList(valid []bool) Layer {
	if valid != nil {
		return NullableList
	}
	return AllValidList
}

var sparseTestPaths = [][]Step{
	{{Kind: StepLeaf}},
	{{Kind: StepList}, {Kind: StepLeaf}},
	{{Kind: StepStruct}, {Kind: StepList}, {Kind: StepLeaf}},
	{{Kind: StepFSL, Dim: 3}, {Kind: StepLeaf}},
	{{Kind: StepList}, {Kind: StepFSL, Dim: 2}, {Kind: StepList}, {Kind: StepStruct}, {Kind: StepLeaf}},
}

// rowsOf is the page row count as stored: rows times every FSL dimension.
func rowsOf(path []Step, rows int) uint64 {
	for _, st := range path {
		if st.Kind == StepFSL {
			rows *= st.Dim
		}
	}
	return uint64(rows)
}

func totalBytes(bufs [][]byte) uint64 {
	n := uint64(0)
	for _, b := range bufs {
		n += uint64(len(b))
	}
	return n
}

// sparseCase is a random structure and its sparse encoding.
type sparseCase struct {
	path []Step
	rows int
	lds  []LayerData
	s    *enc23pb.SparseStructure
	bufs [][]byte
}

// randomSparse draws case i: a structure of up to maxRows rows (a few
// rows every tenth case) over one of the test paths, built.
func randomSparse(t *testing.T, rng *rand.Rand, i, maxRows int) sparseCase {
	t.Helper()
	c := sparseCase{path: sparseTestPaths[i%len(sparseTestPaths)], rows: rng.IntN(maxRows)}
	if i%10 == 0 {
		c.rows = rng.IntN(4)
	}
	c.lds = randomLayers(rng, c.path, c.rows)
	var err error
	if c.s, c.bufs, err = BuildSparse(c.lds, c.path); err != nil {
		t.Fatalf("case %d: %v", i, err)
	}
	return c
}

// TestSparseRoundTrip: random structures build, read back equal (validity
// nil for all valid) and build again to the same bytes.
func TestSparseRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := 0; i < 300; i++ {
		c := randomSparse(t, rng, i, 3000)
		path, rows, lds, s, bufs := c.path, c.rows, c.lds, c.s, c.bufs
		if k, err := SparseBuffers(s); err != nil || k != len(bufs) {
			t.Fatalf("case %d: SparseBuffers %d (%v), built %d", i, k, err, len(bufs))
		}
		got, err := ReadSparse(s, bufs, rowsOf(path, rows), path, totalBytes(bufs))
		if err != nil {
			t.Fatalf("case %d: %v\n%v", i, err, s)
		}
		for d := range lds {
			w, g := lds[d], got[d]
			if w.Len != g.Len || w.Dim != g.Dim || !slices.Equal(w.Offsets, g.Offsets) || !sameValid(w.Valid, g.Valid, w.Len) {
				t.Fatalf("case %d layer %d: read %+v, built from %+v", i, d, g, w)
			}
		}
		s2, bufs2, err := BuildSparse(got, path)
		if err != nil || !proto.Equal(s, s2) || len(bufs) != len(bufs2) {
			t.Fatalf("case %d: rebuilding differs (%v)", i, err)
		}
		for k := range bufs {
			if !bytes.Equal(bufs[k], bufs2[k]) {
				t.Fatalf("case %d: buffer %d differs on rebuilding", i, k)
			}
		}
	}
}

// sparseSample is a list page with explicit sets in every position: two
// list layers' positions, counts and validity as payloads.
func sparseSample(t testing.TB) (*enc23pb.SparseStructure, [][]byte, []Step, uint64) {
	rng := rand.New(rand.NewPCG(21, 21))
	path := []Step{{Kind: StepList}, {Kind: StepLeaf}}
	n := 3000
	valid := mask(n, func(int) bool { return rng.IntN(3) != 0 })
	offs := make([]int32, n+1)
	for i := 0; i < n; i++ {
		k := int32(0)
		if valid[i] && rng.IntN(2) == 0 {
			k = 1 + int32(rng.IntN(7))
		}
		offs[i+1] = offs[i] + k
	}
	lds := []LayerData{{Len: n, Valid: valid, Offsets: offs}, {Len: int(offs[n]), Valid: mask(int(offs[n]), func(int) bool { return rng.IntN(4) != 0 })}}
	s, bufs, err := BuildSparse(lds, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(bufs) != 4 {
		t.Fatalf("sample has %d buffers: %v", len(bufs), s)
	}
	return s, bufs, path, uint64(n)
}

// TestReadSparseCorrupt: every broken invariant is refused with
// ErrCorruptSparse.
func TestReadSparseCorrupt(t *testing.T) {
	s0, bufs0, path, rows := sparseSample(t)
	flatPositions := func(xs ...uint64) (*enc21pb.CompressiveEncoding, []byte) {
		return values.FlatEncoding(64), wordsOf(xs)
	}
	cases := []struct {
		name   string
		mutate func(s *enc23pb.SparseStructure, bufs [][]byte, path []Step, rows uint64) ([][]byte, []Step, uint64)
	}{
		{"layer_count", func(s *enc23pb.SparseStructure, b [][]byte, p []Step, r uint64) ([][]byte, []Step, uint64) {
			return b, p[:1], r
		}},
		{"kind_mismatch", func(s *enc23pb.SparseStructure, b [][]byte, p []Step, r uint64) ([][]byte, []Step, uint64) {
			return b, []Step{{Kind: StepStruct}, {Kind: StepLeaf}}, r
		}},
		{"no_kind", func(s *enc23pb.SparseStructure, b [][]byte, p []Step, r uint64) ([][]byte, []Step, uint64) {
			s.Layers[1].Layer = nil
			return b, p, r
		}},
		{"meaning", func(s *enc23pb.SparseStructure, b [][]byte, p []Step, r uint64) ([][]byte, []Step, uint64) {
			s.Layers[0].GetList().Validity.Meaning = 0
			return b, p, r
		}},
		{"missing_validity", func(s *enc23pb.SparseStructure, b [][]byte, p []Step, r uint64) ([][]byte, []Step, uint64) {
			s.Layers[0].GetList().Validity = nil
			return b, p, r
		}},
		{"extra_buffer", func(s *enc23pb.SparseStructure, b [][]byte, p []Step, r uint64) ([][]byte, []Step, uint64) {
			return append(b, []byte{1}), p, r
		}},
		{"missing_buffer", func(s *enc23pb.SparseStructure, b [][]byte, p []Step, r uint64) ([][]byte, []Step, uint64) {
			return b[:3], p, r
		}},
		{"truncated_payload", func(s *enc23pb.SparseStructure, b [][]byte, p []Step, r uint64) ([][]byte, []Step, uint64) {
			b[0] = b[0][:len(b[0])/2]
			return b, p, r
		}},
		{"too_many_positions", func(s *enc23pb.SparseStructure, b [][]byte, p []Step, r uint64) ([][]byte, []Step, uint64) {
			s.Layers[0].GetList().Validity.NumPositions = r + 1
			return b, p, r
		}},
		{"position_outside", func(s *enc23pb.SparseStructure, b [][]byte, p []Step, r uint64) ([][]byte, []Step, uint64) {
			v := s.Layers[1].GetValidity()
			v.Positions, b[3] = flatPositions(1, 2, 1<<40)
			v.NumPositions = 3
			return b, p, r
		}},
		{"positions_decrease", func(s *enc23pb.SparseStructure, b [][]byte, p []Step, r uint64) ([][]byte, []Step, uint64) {
			v := s.Layers[1].GetValidity()
			v.Positions, b[3] = flatPositions(1, 5, 4)
			v.NumPositions = 3
			return b, p, r
		}},
		{"positions_repeat", func(s *enc23pb.SparseStructure, b [][]byte, p []Step, r uint64) ([][]byte, []Step, uint64) {
			v := s.Layers[1].GetValidity()
			v.Positions, v.NumPositions = constantEncoding(64, 3), 2
			return b[:3], p, r
		}},
		{"range_outside", func(s *enc23pb.SparseStructure, b [][]byte, p []Step, r uint64) ([][]byte, []Step, uint64) {
			v := s.Layers[1].GetValidity()
			v.Positions, v.NumPositions = rangeEncoding(64, 10, 1<<30), 3
			return b[:3], p, r
		}},
		{"range_step0", func(s *enc23pb.SparseStructure, b [][]byte, p []Step, r uint64) ([][]byte, []Step, uint64) {
			v := s.Layers[1].GetValidity()
			v.Positions, v.NumPositions = rangeEncoding(64, 10, 0), 3
			return b[:3], p, r
		}},
		{"counts_sum", func(s *enc23pb.SparseStructure, b [][]byte, p []Step, r uint64) ([][]byte, []Step, uint64) {
			s.Layers[0].GetList().NumChildSlots++
			return b, p, r
		}},
		{"count_zero", func(s *enc23pb.SparseStructure, b [][]byte, p []Step, r uint64) ([][]byte, []Step, uint64) {
			l := s.Layers[0].GetList()
			l.Counts = constantEncoding(64, 0)
			return append(b[:1:1], b[2:]...), p, r
		}},
		{"empty_constant_count", func(s *enc23pb.SparseStructure, b [][]byte, p []Step, r uint64) ([][]byte, []Step, uint64) {
			l := s.Layers[0].GetList()
			l.Counts = emptyEncoding()
			return append(b[:1:1], b[2:]...), p, r
		}},
		{"non_empty_null_slot", func(s *enc23pb.SparseStructure, b [][]byte, p []Step, r uint64) ([][]byte, []Step, uint64) {
			// Every slot null, but some have children.
			v := s.Layers[0].GetList().Validity
			v.Meaning, v.Positions, v.NumPositions = validPos, emptyEncoding(), 0
			return b[:3], p, r
		}},
		{"rows_unbacked", func(s *enc23pb.SparseStructure, b [][]byte, p []Step, r uint64) ([][]byte, []Step, uint64) {
			return b, p, 1 << 40
		}},
		{"child_slots_unbacked", func(s *enc23pb.SparseStructure, b [][]byte, p []Step, r uint64) ([][]byte, []Step, uint64) {
			s.Layers[0].GetList().NumChildSlots = 1 << 35
			return b, p, r
		}},
		{"sequence_form", func(s *enc23pb.SparseStructure, b [][]byte, p []Step, r uint64) ([][]byte, []Step, uint64) {
			v := s.Layers[1].GetValidity()
			v.Positions = values.OutOfLineCodec{Bits: 64, Width: 64}.Encoding()
			return b, p, r
		}},
		{"fsl_rows", func(s *enc23pb.SparseStructure, b [][]byte, p []Step, r uint64) ([][]byte, []Step, uint64) {
			s.Layers[0] = &enc23pb.SparseStructuralLayer{Layer: &enc23pb.SparseStructuralLayer_FixedSizeList{FixedSizeList: &enc23pb.SparseFixedSizeListLayer{
				Dimension: 7, Validity: &enc23pb.SparseValiditySet{Meaning: nullPos, Positions: emptyEncoding()}}}}
			return b[3:], []Step{{Kind: StepFSL, Dim: 7}, {Kind: StepLeaf}}, 3001
		}},
		{"fsl_dim0", func(s *enc23pb.SparseStructure, b [][]byte, p []Step, r uint64) ([][]byte, []Step, uint64) {
			s.Layers[0] = &enc23pb.SparseStructuralLayer{Layer: &enc23pb.SparseStructuralLayer_FixedSizeList{FixedSizeList: &enc23pb.SparseFixedSizeListLayer{
				Validity: &enc23pb.SparseValiditySet{Meaning: nullPos, Positions: emptyEncoding()}}}}
			return b[3:], []Step{{Kind: StepFSL}, {Kind: StepLeaf}}, 0
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := proto.Clone(s0).(*enc23pb.SparseStructure)
			bufs := make([][]byte, len(bufs0))
			for i, b := range bufs0 {
				bufs[i] = slices.Clone(b)
			}
			bufs, p, r := c.mutate(s, bufs, slices.Clone(path), rows)
			_, err := ReadSparse(s, bufs, r, p, totalBytes(bufs))
			if !errors.Is(err, ErrCorruptSparse) {
				t.Fatalf("error %v, want ErrCorruptSparse", err)
			}
		})
	}
	// The sample itself reads.
	if _, err := ReadSparse(s0, bufs0, rows, path, totalBytes(bufs0)); err != nil {
		t.Fatal(err)
	}
}

// FuzzReadSparse: any sparse metadata and buffers either read or fail with
// ErrCorruptSparse, and never panic; what reads builds again.
func FuzzReadSparse(f *testing.F) {
	rng := rand.New(rand.NewPCG(8, 8))
	for i := 0; i < 24; i++ {
		pi := i % len(sparseTestPaths)
		path := sparseTestPaths[pi]
		rows := rng.IntN(300)
		lds := randomLayers(rng, path, rows)
		s, bufs, err := BuildSparse(lds, path)
		if err != nil {
			f.Fatal(err)
		}
		meta, _ := proto.Marshal(s)
		f.Add(meta, joinBufs(bufs), rowsOf(path, rows), uint8(pi))
	}
	s, bufs, _, rows := sparseSample(f)
	meta, _ := proto.Marshal(s)
	f.Add(meta, joinBufs(bufs), rows, uint8(1))
	f.Fuzz(func(t *testing.T, meta, joined []byte, rows uint64, pi uint8) {
		var s enc23pb.SparseStructure
		if proto.Unmarshal(meta, &s) != nil {
			return
		}
		path := sparseTestPaths[int(pi)%len(sparseTestPaths)]
		bufs := splitBufs(joined)
		lds, err := ReadSparse(&s, bufs, rows, path, uint64(len(joined)))
		if err != nil {
			if !errors.Is(err, ErrCorruptSparse) {
				t.Fatalf("error %v does not wrap ErrCorruptSparse", err)
			}
			return
		}
		if _, _, err := BuildSparse(lds, path); err != nil {
			t.Fatalf("read structure does not build: %v", err)
		}
		// The index agrees with the expansion on a few windows.
		x, err := ReadSparseIndex(&s, bufs, rows, path, uint64(len(joined)))
		if err != nil {
			t.Fatal(err)
		}
		alive := MaterializedMask(lds)
		if n := x.IndexMaterialized(); x.Ordinal(x.LeafSlots()) != n || n != countTrue(alive) {
			t.Fatalf("%d materialized, ordinal of the end %d, want %d", n, x.Ordinal(x.LeafSlots()), countTrue(alive))
		}
		for _, w := range [][2]int{{0, x.Rows()}, {x.Rows() / 3, x.Rows() / 2}} {
			got, s0, s1 := x.Window(w[0], w[1])
			want, w0, w1 := sliceLayers(lds, w[0], w[1])
			if s0 != w0 || s1 != w1 || len(got) != len(want) {
				t.Fatalf("window %v: leaf slots [%d, %d), want [%d, %d)", w, s0, s1, w0, w1)
			}
			a := make([]bool, s1-s0)
			x.Alive(a, s0)
			if !slices.Equal(a, alive[s0:s1]) {
				t.Fatalf("window %v: alive slots differ", w)
			}
		}
	})
}

// joinBufs frames buffers as [u32 LE length][bytes]...
func joinBufs(bufs [][]byte) []byte {
	var out []byte
	for _, b := range bufs {
		out = append(out, byte(len(b)), byte(len(b)>>8), byte(len(b)>>16), byte(len(b)>>24))
		out = append(out, b...)
	}
	return out
}

func splitBufs(b []byte) [][]byte {
	var out [][]byte
	for len(b) >= 4 {
		n := int(b[0]) | int(b[1])<<8 | int(b[2])<<16 | int(b[3])<<24
		b = b[4:]
		n = min(n, len(b))
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

func prototextUnmarshal(s string, m proto.Message) error { return prototext.Unmarshal([]byte(s), m) }

// BenchmarkBuildSparse: one validity layer of 1M slots.
func BenchmarkBuildSparse(b *testing.B) {
	for _, c := range benchNulls {
		rng := rand.New(rand.NewPCG(1, 1))
		valid := mask(benchSlots, func(int) bool { return rng.Float64() >= c.p })
		lds := []LayerData{{Len: benchSlots, Valid: valid}}
		path := []Step{{Kind: StepLeaf}}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, _, err := BuildSparse(lds, path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkReadSparse: the same layers read back.
func BenchmarkReadSparse(b *testing.B) {
	for _, c := range benchNulls {
		rng := rand.New(rand.NewPCG(1, 1))
		valid := mask(benchSlots, func(int) bool { return rng.Float64() >= c.p })
		path := []Step{{Kind: StepLeaf}}
		s, bufs, err := BuildSparse([]LayerData{{Len: benchSlots, Valid: valid}}, path)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := ReadSparse(s, bufs, benchSlots, path, totalBytes(bufs)+benchSlots/8); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
