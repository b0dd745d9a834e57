// Package selector chooses how each page is encoded. A user of planar needs
// only a few of its names: the Key* constants (the field-metadata keys and
// the values each accepts, set on Arrow fields or with
// writer.WithColumnOptions), Policy (PolicyCost, the default, weighs bytes
// against read and write work; PolicyLance chooses what pylance 14 chooses),
// Weights (the cost policy's trade-off, writer.WithCostWeights) and
// OptionError (a bad key or value). The rest serves the writer.
//
// The selector chooses, for each page, the cell of the planar matrix
// (structural codec x value codec), the compressive codec tree of the
// values and, once the writer has cut a dense page into chunks, the codecs
// of its level streams (levels.go), from what the stats pass measured and
// the field's options. Choices made by encoding are the selector's too:
// it lists the trials of a page and picks among what they measured
// (trials.go: dense against sparse, fallbacks when levels do not fit a
// chunk), and says which page dictionary to try and where it goes
// (dictionary.go). The writer executes the plans it returns and makes no
// choice of its own.
package selector

import (
	"fmt"
	"math"
	"math/bits"
	"sort"

	"github.com/planarlance/planar/values"
)

// StructuralPlane is the structural plane of a plan: how its rows'
// nesting and nulls are stored.
type StructuralPlane int

// Structural planes.
const (
	Dense StructuralPlane = iota
	Sparse
)

// ValuePlane is the value plane of a plan: how its leaf values are
// stored.
type ValuePlane int

// Value planes.
const (
	Chunked ValuePlane = iota
	Zipped
	Constant
	None
	// Indexed: u32 dictionary indices per leaf slot under a block codec,
	// the distinct items stored zipped (Lance 2.3; sparse structure only).
	Indexed
)

func (v ValuePlane) String() string {
	return [...]string{"chunked", "zipped", "constant", "none", "indexed"}[v]
}

func (s StructuralPlane) String() string {
	return [...]string{"dense", "sparse"}[s]
}

// Compression names the codec of the level streams inside chunks.
type Compression int

// Level codecs the writer can execute.
const (
	Flat Compression = iota
	// Bitpacked levels: inline bit packing when a chunk's levels fit one
	// 1024-level block, else out-of-line bit packing at the page's width.
	Bitpacked
)

func (c Compression) String() string { return [...]string{"flat", "bitpacked"}[c] }

// Candidate is one value codec tree the selector considered, with its
// estimated size.
type Candidate struct {
	Codec values.Codec
	Bytes int // estimated stored bytes of the values
	// InnerBytes (general compression) is the child codec's estimated
	// size: the bytes the compressor works on.
	InnerBytes int
	ReadCost   float64 // estimated read work, byte-equivalents
	WriteCost  float64 // estimated encoding work, byte-equivalents
	Cost       float64 // Bytes + Lambda·ReadCost + Mu·WriteCost
}

func (c Candidate) String() string {
	return fmt.Sprintf("%s=%dB/%.0f", c.Codec.Name(), c.Bytes, c.Cost)
}

// Plan is the selector's decision for one page.
type Plan struct {
	Structure StructuralPlane
	Values    ValuePlane
	// Codec is the compressive tree of the chunked values (nil for other
	// cells; zipped pages derive their per-value codec from the kind).
	Codec      values.Codec
	LevelComp  Compression // codec of the def/rep streams inside chunks
	Candidates []Candidate // every chunked candidate with its estimate, winner first
	Reason     string      // why this plan won, for reports
	// RepCodec and DefCodec are the level streams' codecs of a dense
	// chunked page (WithLevelCodecs, once the page is cut into chunks).
	RepCodec, DefCodec values.Codec
	// TrySparse (cost policy, dense plans only): the page's structure is
	// not trivial and sparse structure may be cheaper; the writer encodes
	// both and keeps the one Cheaper prefers.
	TrySparse bool
}

// Page is what the selector needs to know about one page.
type Page struct {
	Degenerate     bool   // every layer all-valid: no level streams
	SingleNullable bool   // exactly one layer, a nullable leaf
	NumVisible     int    // leaf value slots
	AllNull        bool   // every visible value is null
	Scalar         []byte // non-nil: every non-null visible value (at least one) equals this inline scalar
	MaxValueBytes  int    // largest visible value in bytes
	CanZip         bool   // values are byte aligned, so per-record storage is possible
	NullFree       bool   // no visible value is null (so a scalar needs no leaf validity)
	HasLevels      bool

	Kind         values.Kind
	Bits         int    // values.KindFixed: value bits; values.KindFSL: item bits
	Dims         []int  // values.KindFSL
	ItemValidity []bool // values.KindFSL: per list layer (outer first), whether its children's validity is stored
	Float        bool   // floating-point values (byte stream split applies)
	PackedBits   []int  // values.KindPacked: the bits of each child
	// Profile holds the values' statistics and a sample (Fixed for 8..64-bit
	// fixed values, Var for variable ones).
	Profile *values.Profile
	// DictIndices: the values are page dictionary indices (Lance 2.3 keeps
	// their RLE plain: u8 run lengths, flat run values).
	DictIndices bool
	// Format23: the file is Lance 2.3, which admits variable-width chunks
	// whose offsets are block-encoded on their own and u16 RLE run lengths.
	Format23 bool
	// Fsst, when set, is a symbol table trained on the page (strings only);
	// the selector decides whether to use it.
	Fsst *values.FsstTable
	// SparseOnly: Lance cannot read this page's structure from dense levels
	// (a structural fixed-size list together with a list layer: its 2.x
	// dense reader stops at "Not yet supported FSL<...List<...>>"), so the
	// page must be a sparse cell: sparse x none / constant, else sparse x
	// chunked (every leaf slot in the chunks, no levels), as Lance 14
	// writes these columns. Only in 2.3 files; forced structural encodings
	// are ignored.
	SparseOnly bool

	// Structure facts for the choice of structure (2.3).
	NumRows     int  // top-level rows of the page
	NumLevels   int  // entries of the level streams (>= NumVisible)
	HasLists    bool // a list layer on the column's path
	HasFSLLayer bool // a structural fixed-size list (over a struct or a list) on the path
	// OverBudget: the dense levels exceed Lance's mini-block level budget
	// (structural.OverLevelBudget).
	OverBudget bool
	// ValidLeaves is the number of leaf slots holding a value (valid all
	// the way up): the values a sparse page stores.
	ValidLeaves int
	// ValidBytes is the size of those values (variable-width: their bytes).
	ValidBytes int
	// NoLengthStat: Lance 14 keeps no length statistic for pages of these
	// values (Arrow dictionary arrays, fixed-size lists of booleans: checked
	// with pylance), so its narrow test fails and they count as wide values
	// for sparse_wide.
	NoLengthStat bool
	// LanceStructure: choose dense or sparse by Lance's rules whatever the
	// policy (columns below a structural fixed-size list: pylance 14 reads
	// a struct holding one beside other children only as its own writer
	// lays the pages out).
	LanceStructure bool
}

// WideValueBytes is the value size from which pages are zipped instead of
// chunked (Lance's narrow/wide threshold).
const WideValueBytes = 256

// FsstMinBytes and FsstMinMaxLen gate automatic FSST like Lance: pages of at
// least 32 KiB of strings with a value of at least 5 bytes.
const (
	FsstMinBytes  = 32 << 10
	FsstMinMaxLen = 5
)

// Choose returns the plan for one page. The cell follows Lance's writer
// (constant detection, then narrow -> chunked, wide -> zipped) and the planar
// canonicality rules (dense x constant and dense x none only in the
// degenerate form); field options may force the cell. The chunked value
// codec is the candidate with the smallest estimated size among those the
// options allow.
func Choose(p Page, o Options) Plan {
	if p.ValidLeaves == 0 && !p.AllNull {
		p.ValidLeaves = p.NumVisible // not counted: every slot holds a value
	}
	plan := choose(p, o)
	if !p.Format23 {
		// Files before 2.3 have no sparse structure: pages without value
		// bytes keep their levels (Lance's ConstantLayout).
		plan.Structure = Dense
	}
	return withAsked(plan, p, o)
}

// withAsked starts the plan's reason with what the column's metadata asked
// and, when a forced structural encoding was not applied, says why.
func withAsked(plan Plan, p Page, o Options) Plan {
	asked := o.Asked()
	if asked == "" {
		return plan
	}
	plan.Reason = "asked " + asked + "; " + plan.Reason
	switch {
	case o.Structural == StructuralFullZip && plan.Values != Zipped && plan.Values != None && plan.Values != Constant && !p.CanZip:
		plan.Reason += "; not zipped: these values have no per-value form in Lance"
	case o.Structural == StructuralSparse && plan.Structure != Sparse && !p.Format23:
		plan.Reason += "; not sparse: sparse structure needs format 2.3"
	case o.Structural == StructuralSparse && plan.Structure != Sparse:
		plan.Reason += "; not sparse: the page has no structure to make sparse"
	}
	return plan
}

func choose(p Page, o Options) Plan {
	plan := Plan{Structure: Dense, LevelComp: Flat}
	if p.Profile == nil {
		p.Profile = &values.Profile{N: p.NumVisible, Bits: p.Bits}
	}
	if p.SparseOnly {
		o.Structural = StructuralAuto
	}
	if p.Format23 && !p.SparseOnly {
		if ok, why := sparseStructure(p, o); ok {
			return sparsePlan(p, o, why)
		}
		if o.Structural == StructuralSparse {
			o.Structural = StructuralAuto // trivial structure is always dense
		}
	}
	switch {
	case p.SparseOnly && (p.NumVisible == 0 || p.AllNull):
		plan.Structure, plan.Values, plan.Reason = Sparse, None, "no non-null values; fixed-size list of structs with a list: sparse only"
		return plan
	case p.SparseOnly && p.Scalar != nil:
		plan.Structure, plan.Values, plan.Reason = Sparse, Constant, "every value equal; fixed-size list of structs with a list: sparse only"
		return plan
	case p.SparseOnly:
		// Chunked below, under sparse structure.
	case p.NumVisible > 0 && p.AllNull && p.SingleNullable && !p.Format23:
		plan.Values, plan.Reason = None, "every value null, no other structure"
		return plan
	case p.NumVisible > 0 && p.AllNull && p.SingleNullable:
		// In planar metadata a null leaf is structure: all-null is sparse.
		plan.Structure, plan.Values, plan.Reason = Sparse, None, "every value null"
		return plan
	case p.NumVisible > 0 && p.Degenerate && p.Scalar != nil && p.NullFree && (o.Structural == StructuralAuto || o.Policy == PolicyLance):
		plan.Values, plan.Reason = Constant, "every value equal, trivial structure"
		return plan
	case (p.NumVisible == 0 || p.AllNull) && o.Structural == StructuralAuto:
		plan.Structure, plan.Values, plan.Reason = Sparse, None, "no non-null values under non-trivial structure"
		return plan
	case p.Scalar != nil && (p.NullFree || p.Format23) && o.Structural == StructuralAuto:
		plan.Structure, plan.Values, plan.Reason = Sparse, Constant, "every value equal under non-trivial structure"
		return plan
	case p.Kind == values.KindVarPacked:
		plan.Values, plan.Reason = Zipped, "packed struct with variable-width children (Lance reads it per value only)"
		return plan
	case o.Structural == StructuralFullZip && p.CanZip:
		plan.Values, plan.Reason = Zipped, "zipped as asked"
		plan.Codec = zippedCodec(p, o)
		return plan
	case o.Structural == StructuralAuto && p.MaxValueBytes >= WideValueBytes && p.CanZip:
		plan.Values, plan.Reason = Zipped, "wide values (>= 256 bytes)"
		plan.Codec = zippedCodec(p, o)
		plan.TrySparse = trySparse(p, o, plan)
		return plan
	}
	plan.Values, plan.Reason = Chunked, "narrow values"
	if o.Structural == StructuralMiniBlock {
		plan.Reason = "chunked as asked"
	}
	if p.SparseOnly {
		plan.Structure, plan.Reason = Sparse, "fixed-size list of structs with a list: sparse x chunked"
		p.HasLevels = false
	}
	if p.HasLevels {
		plan.LevelComp = Bitpacked
	}
	plan.Candidates = candidates(p, o)
	for i := range plan.Candidates {
		c := &plan.Candidates[i]
		if g, ok := c.Codec.(values.GeneralCodec); ok && c.InnerBytes == 0 {
			c.InnerBytes, _ = g.Inner.Estimate(p.Profile)
		}
		c.ReadCost = readCost(c.Codec, c.Bytes, c.InnerBytes, p.Profile)
		c.WriteCost = writeCost(c.Codec, c.InnerBytes, p.Profile)
		c.Cost = o.cost(c.Codec, c.Bytes, c.InnerBytes, p.Profile)
	}
	// Cheapest first; ties keep the simpler (earlier) codec.
	sort.SliceStable(plan.Candidates, func(i, j int) bool { return plan.Candidates[i].Cost < plan.Candidates[j].Cost })
	plan.Codec = plan.Candidates[0].Codec
	if n := len(plan.Candidates); n > 1 {
		// The winner and the runner-up; the report lists every candidate.
		plan.Reason += fmt.Sprintf("; %v policy: %s over %s (%d candidates)", o.Policy, plan.Candidates[0], plan.Candidates[1], n)
	}
	plan.TrySparse = trySparse(p, o, plan)
	return plan
}

// candidates lists the chunked value codec trees the options admit for the
// page, each with its estimated size. The list is never empty: the plain
// codec of the kind is the fallback when no estimate is possible.
func candidates(p Page, o Options) []Candidate {
	prof := p.Profile
	lance := o.Policy == PolicyLance
	g := o.generalScheme()
	var base []values.Codec
	// bssOnly: Lance's rule when general compression is asked for and byte
	// stream split applies: the values are split, then compressed.
	bssOnly := false
	switch p.Kind {
	case values.KindFixed:
		base = []values.Codec{values.FlatCodec{Bits: p.Bits}}
		if o.Compression == CompressionNone || prof.Fixed == nil {
			break
		}
		word := p.Bits == 8 || p.Bits == 16 || p.Bits == 32 || p.Bits == 64
		if word && o.allows("bitpack") {
			base = append(base, values.BitpackCodec{Bits: p.Bits})
		}
		if word && o.allows("rle") && o.rleAllowed(prof.Fixed.Runs, prof.N) && !(!lance && o.Codec == "" && rleCannotWin(p.Bits, prof)) {
			base = append(base, values.RleCodec{Bits: p.Bits})
			if p.Format23 && !(lance && p.DictIndices) {
				base = append(base, values.RleCodec{Bits: p.Bits, LenBits: 16})
				if !lance || rlePlainLoses(p.Bits, prof) {
					// Lance 2.3's composite RLE: run values or run lengths
					// bit packed (Lance tries it only when plain RLE loses
					// to the raw or bit-packed size).
					if w := prof.Fixed.BitWidth; w > 0 && w < p.Bits {
						base = append(base, values.RleCodec{Bits: p.Bits, ValueWidth: w})
					}
					if m := prof.MaxRunPiece(255, 4096); m > 0 {
						if w := bits.Len(uint(m)); w < 8 {
							base = append(base, values.RleCodec{Bits: p.Bits, LenWidth: w})
						}
					}
				}
			}
		}
		if p.Bits == 32 || p.Bits == 64 {
			switch {
			case o.Codec == "bss":
				base = append(base, values.BssCodec{Bits: p.Bits})
			case g != 0 && o.BSS == BSSOn:
				bssOnly = true
			case g != 0 && o.BSS == BSSAuto && lance:
				bssOnly = ByteEntropy(prof.Sample) < 4
			case g != 0 && o.BSS == BSSAuto:
				base = append(base, values.BssCodec{Bits: p.Bits})
			}
			if bssOnly {
				base = []values.Codec{values.BssCodec{Bits: p.Bits}}
			}
		}
		if o.Codec != "" {
			base = forced(base, o.Codec)
		}
	case values.KindPacked:
		// Lance stores packed rows as they are (no general compression).
		return []Candidate{{Codec: values.PackedStructCodec{Bits: p.PackedBits}, Bytes: prof.RawBytes()}}
	case values.KindBool:
		base = []values.Codec{values.FlatCodec{Bits: 1}}
		if lance {
			g = 0 // Lance leaves booleans uncompressed
		}
	case values.KindFSL:
		var inner values.Codec = values.FlatCodec{Bits: p.Bits}
		validity := 0
		for k := len(p.Dims) - 1; k >= 0; k-- {
			has := k < len(p.ItemValidity) && p.ItemValidity[k]
			inner = values.FslCodec{Dim: p.Dims[k], HasValidity: has, Values: inner}
			if has {
				validity += (p.NumVisible*prod(p.Dims[:k+1]) + 7) / 8
			}
		}
		// Lance keeps fixed-size lists uncompressed in chunks.
		return []Candidate{{Codec: inner, Bytes: prof.RawBytes() + validity}}
	case values.KindVariable:
		v := values.VariableCodec{OffBits: prof.OffBits}
		base = []values.Codec{v}
		// (The lance policy keeps wide values, forced into chunks, on flat
		// offsets, as pylance does.)
		if p.Format23 && prof.Var != nil && g == 0 && !(lance && prof.Var.MaxLen >= WideValueBytes) {
			// Lance 2.3's form: each chunk's offsets as a delta block (base
			// 0) over out-of-line bit packing at the page's longest value;
			// when every value is empty, one constant zero offset (Lance's
			// reader takes out-of-line widths 1..bits-1 only).
			switch w := bits.Len64(uint64(prof.Var.MaxLen)); {
			case w == 0:
				base = append(base, values.VariableCodec{OffBits: prof.OffBits, Offsets: values.ConstantCodec{Value: make([]byte, prof.OffBits/8)}})
			case w < prof.OffBits:
				base = append(base, values.VariableCodec{OffBits: prof.OffBits, Offsets: values.DeltaCodec{
					Bits: prof.OffBits, Deltas: values.OutOfLineCodec{Bits: prof.OffBits, Width: w}}})
			}
		}
		if st := prof.Var; p.Format23 && st != nil && g == 0 && st.Nulls == 0 && st.N > 0 && st.MinLen == st.MaxLen && st.MaxLen > 0 {
			// Every value has one length: the offsets are a range.
			base = append(base, values.VariableCodec{OffBits: prof.OffBits, Offsets: values.RangeCodec{
				Bits: prof.OffBits, Step: uint64(st.MaxLen)}})
		}
		if useFsst(p, o) {
			f := values.FsstCodec{Table: p.Fsst, Values: v}
			if o.Compression == CompressionFsst || lance {
				base = base[:0] // Lance's rule: FSST whenever it applies
			}
			base = append(base, f)
			if !lance && p.Format23 && prof.Var != nil {
				// Beyond Lance's writer (its reader takes any Variable
				// under FSST): coded values with delta-packed offsets. A
				// coded value is at most twice its raw length.
				if w := bits.Len64(uint64(2 * prof.Var.MaxLen)); w > 0 && w < prof.OffBits {
					base = append(base, values.FsstCodec{Table: p.Fsst, Values: values.VariableCodec{OffBits: prof.OffBits, Offsets: values.DeltaCodec{
						Bits: prof.OffBits, Deltas: values.OutOfLineCodec{Bits: prof.OffBits, Width: w}}}})
				}
			}
		}
	default:
		return []Candidate{{Codec: values.FlatCodec{Bits: max(p.Bits, 8)}}}
	}
	switch {
	case g != 0:
		// Compression the field asks for wraps every candidate; like Lance,
		// the plain candidates stay in case it does not pay.
		n := len(base)
		for _, c := range base[:n] {
			base = append(base, values.GeneralCodec{Scheme: g, Level: o.Level, Inner: c})
		}
		if bssOnly {
			base = base[n:]
		}
	}
	var out []Candidate
	for _, c := range base {
		if n, ok := c.Estimate(prof); ok {
			out = append(out, Candidate{Codec: c, Bytes: n})
		}
	}
	if !lance && g == 0 && o.Compression == CompressionAuto && o.Codec == "" && len(out) > 0 {
		// Beyond Lance's rules: general compression, left to the cost
		// model, over the smallest candidate and over the plain one (and
		// byte stream split for 32/64-bit values). Each is a trial
		// compression of the sample, so the list is kept short. Zstd runs
		// at its fastest level: most of the gain at a fraction of the time.
		// (Bit-packed forms leave little for general compression to find:
		// the inner candidate is the best of the others.)
		best := out[0]
		for _, c := range out[1:] {
			if r, ok := c.Codec.(values.RleCodec); ok && r.ValueWidth > 0 {
				continue
			}
			if c.Bytes < best.Bytes {
				best = c
			}
		}
		inner := []values.Codec{best.Codec}
		if out[0].Codec != best.Codec {
			inner = append(inner, out[0].Codec)
		}
		// A trial whose work alone (read and write, at any compressed
		// size) costs more than a candidate already estimated cannot win
		// and is not run: low-cardinality strings' index pages skip
		// every Zstd trial so, and a fresh process the encoder tables
		// those trials fault in.
		bound := math.Inf(1)
		for _, c := range out {
			bound = min(bound, o.cost(c.Codec, c.Bytes, 0, prof))
		}
		pays := func(c values.Codec, innerBytes int) bool {
			return !pruneTrials || o.cost(c, 0, innerBytes, prof) < bound
		}
		// Byte stream split is tried for floats, and for other values whose
		// byte positions are skewed enough to gain from it.
		if p.Kind == values.KindFixed && (p.Bits == 32 || p.Bits == 64) && o.BSS != BSSOff && (p.Float || ByteEntropy(prof.Sample) < 5) {
			inner = append(inner, values.BssCodec{Bits: p.Bits})
		}
		for _, c := range inner {
			if _, ok := c.(values.FsstCodec); ok {
				continue
			}
			inner, ok := c.Estimate(prof)
			if !ok {
				continue
			}
			// Over flat or split fixed-width values, chunks of up to 4096
			// values (32 KiB): fewer, larger compression calls.
			chunk := 0
			switch c.(type) {
			case values.FlatCodec, values.BssCodec:
				if p.Kind == values.KindFixed && p.Bits%8 == 0 {
					chunk = 4096
					for chunk*p.Bits/8 > 32<<10 {
						chunk /= 2
					}
				}
			}
			lz := values.GeneralCodec{Scheme: values.SchemeLZ4, Inner: c, ChunkValues: chunk}
			if !pays(lz, inner) {
				continue // (nor can Zstd, whose work is the larger)
			}
			n, ok := lz.Estimate(prof)
			if ok {
				out = append(out, Candidate{Codec: lz, Bytes: n, InnerBytes: inner})
			}
			_, isBss := c.(values.BssCodec)
			if ok && !isBss && n*20 > inner*19 {
				// LZ4 found no repetition; Zstd's entropy coder could
				// still gain on skewed bytes, but those are what bit
				// packing and byte stream split already take.
				continue
			}
			zs := values.GeneralCodec{Scheme: values.SchemeZstd, Level: AutoZstdLevel, Inner: c, ChunkValues: chunk}
			if !pays(zs, inner) {
				continue
			}
			if n, ok := zs.Estimate(prof); ok {
				out = append(out, Candidate{Codec: zs, Bytes: n, InnerBytes: inner})
			}
		}
		out = append(out, largeChunkCandidates(p, o, pays)...)
	}
	if len(out) == 0 {
		out = append(out, Candidate{Codec: base[0], Bytes: prof.RawBytes()})
	}
	return out
}

// pruneTrials lets candidates skip the trials that cannot win (tests
// compare the choices made with and without it).
var pruneTrials = true

// AutoZstdLevel is the Zstd level of general compression the cost policy
// adds on its own (the field did not ask for it): the fastest level.
const AutoZstdLevel = 1

// ZstdPerValueMinLen is the longest value from which Lance compresses the
// records of a zipped variable-width page with Zstd unasked (32 KiB).
const ZstdPerValueMinLen = 32 << 10

// zippedCodec is the per-value codec of a zipped variable-width page, by
// Lance's rules: FSST where it applies, else Zstd per value when the field
// asks for general compression (Lance writes Zstd for any scheme here) or
// values reach ZstdPerValueMinLen, else plain Variable. Fixed-width zipped
// pages have no per-value codec choice (nil).
func zippedCodec(p Page, o Options) values.Codec {
	if p.Kind != values.KindVariable || p.Profile == nil || p.Profile.Var == nil {
		return nil
	}
	v := values.VariableCodec{OffBits: p.Profile.OffBits}
	switch {
	case o.Compression == CompressionNone:
		return v
	case useFsst(p, o):
		return values.FsstCodec{Table: p.Fsst, Values: v}
	case o.generalScheme() != 0 || p.Profile.Var.MaxLen >= ZstdPerValueMinLen:
		return values.GeneralCodec{Scheme: values.SchemeZstd, Level: o.Level, Inner: v}
	}
	return v
}

// useFsst is Lance's FSST rule: asked for, or (automatically) a string page
// of at least FsstMinBytes whose longest value has FsstMinMaxLen bytes.
func useFsst(p Page, o Options) bool {
	prof := p.Profile
	return p.Fsst != nil && (o.Compression == CompressionFsst ||
		(o.Compression == CompressionAuto && prof.Var != nil && prof.RawBytes() >= FsstMinBytes && prof.Var.MaxLen >= FsstMinMaxLen))
}

// ByteEntropy is the mean Shannon entropy, in bits, of each byte position of
// the fixed-width values of b (Lance's test for byte stream split: below 4
// bits per byte position, splitting helps general compression).
func ByteEntropy(b values.Block) float64 {
	w := b.Bits / 8
	if b.Variable() || w == 0 || b.N == 0 {
		return 8
	}
	var hist [8][256]int
	for i := 0; i < b.N; i++ {
		for j := 0; j < w && j < 8; j++ {
			hist[j][b.Data[i*w+j]]++
		}
	}
	total := 0.0
	for j := 0; j < w && j < 8; j++ {
		h := 0.0
		for _, c := range hist[j] {
			if c > 0 {
				q := float64(c) / float64(b.N)
				h -= q * math.Log2(q)
			}
		}
		total += h
	}
	return total / float64(min(w, 8))
}

// rleCannotWin (cost policy) reports whether every RLE form stores at least
// what bit packing does, so estimating them (a scan of the page's runs) is
// wasted: each run stores its value at no fewer bits than bit packing's
// width and a length of at least one bit, so runs·(w+1) ≥ n·w settles it.
func rleCannotWin(bits int, prof *values.Profile) bool {
	w := prof.Fixed.BitWidth
	if w <= 0 || w > bits {
		w = bits
	}
	return int64(prof.Fixed.Runs)*int64(w+1) >= int64(prof.N)*int64(w)
}

// rlePlainLoses reports whether plain RLE is estimated no smaller than the
// raw values or larger than bit packing.
func rlePlainLoses(bits int, prof *values.Profile) bool {
	rle, ok1 := values.RleCodec{Bits: bits}.Estimate(prof)
	bp, ok2 := values.BitpackCodec{Bits: bits}.Estimate(prof)
	return ok1 && (rle >= prof.RawBytes() || ok2 && bp < rle)
}

// forced keeps the candidate of the forced codec kind (flat when none
// matches, which Options.Set prevents for the column's type).
func forced(base []values.Codec, codec string) []values.Codec {
	for _, c := range base {
		var kind string
		switch c.(type) {
		case values.FlatCodec:
			kind = "flat"
		case values.BitpackCodec:
			kind = "bitpack"
		case values.RleCodec:
			kind = "rle"
		case values.BssCodec:
			kind = "bss"
		}
		if kind == codec {
			return []values.Codec{c}
		}
	}
	return base[:1]
}

func prod(d []int) int {
	n := 1
	for _, x := range d {
		n *= x
	}
	return n
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
