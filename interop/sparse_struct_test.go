package interop

import (
	"bytes"
	"fmt"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/proto/enc23pb"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// sparseForce is field metadata that makes Lance write a non-trivial page
// sparse whatever its shape.
const sparseForce = `{"lance-encoding:structural-encoding": "sparse"}`

// sparseStructCases are tables pylance writes with sparse pages: the
// brief's shapes (vectors, mostly null-or-empty lists, wide strings) and,
// forced sparse, null patterns and list shapes that reach every sequence
// codec Lance chooses (ranges, delta, bit packing, RLE, dictionary, zstd).
var sparseStructCases = []struct{ name, code string }{
	{"fsl768", `
cols = {}
for p in [0.5002, 0.9, 0.99, 0.9999]:
    cols["v%d" % int(p * 10000)] = pa.array([None if random.random() < p else [1.5] * 768 for i in range(20000)], pa.list_(pa.float32(), 768))
t = pa.table(cols)`},
	{"list_i32_99", `
def row():
    r = random.random()
    if r < 0.5: return None
    if r < 0.99: return []
    return [random.randrange(1000) for _ in range(random.randrange(1, 6))]
t = pa.table({"l": pa.array([row() for i in range(100000)], pa.list_(pa.int32()))})`},
	{"string_400_99", `
t = pa.table({"s": pa.array([None if random.random() < 0.99 else "x" * random.randrange(380, 420) for i in range(20000)])})`},
	{"ints_forced", `
F = ` + sparseForce + `
n = 30000
def col(f):
    return pa.array([None if f(i) else i for i in range(n)], pa.int64())
fields, cols = [], []
pats = {
    "p01": lambda i: random.random() < 0.01, "p10": lambda i: random.random() < 0.10,
    "p30": lambda i: random.random() < 0.30, "p50": lambda i: random.random() < 0.50,
    "p70": lambda i: random.random() < 0.70, "p97": lambda i: random.random() < 0.97,
    "every3": lambda i: i % 3 == 1, "every3b": lambda i: i % 3 != 1,
    "head": lambda i: i < 1000, "tail": lambda i: i >= 29000, "middle": lambda i: 100 <= i < 20000,
    "one": lambda i: i == 777, "allbut1": lambda i: i != 777,
    "runs": lambda i: (i // 37) % 5 == 0, "bursts": lambda i: (i % 1000) < 3,
    "pairs": lambda i: i % 10 in (2, 3), "sq": lambda i: int(i ** 0.5) ** 2 == i,
}
for k, f in pats.items():
    fields.append(pa.field(k, pa.int64(), metadata=F)); cols.append(col(f))
t = pa.table(cols, schema=pa.schema(fields))`},
	{"ints_large", `
F = ` + sparseForce + `
n = 300000
fields = [pa.field(k, pa.int64(), metadata=F) for k in ["p40", "p60", "p05", "p95"]]
ps = [0.40, 0.60, 0.05, 0.95]
t = pa.table([pa.array([None if random.random() < p else i for i in range(n)], pa.int64()) for p in ps], schema=pa.schema(fields))`},
	{"lists_forced", `
F = ` + sparseForce + `
n = 20000
def lst(f):
    return pa.array([f(i) for i in range(n)], pa.list_(pa.int32()))
shapes = {
    "const2": lambda i: [1, 2],
    "vary": lambda i: None if random.random() < 0.2 else [7] * random.randrange(0, 9),
    "small_set": lambda i: [3] * random.choice([1, 2, 4]),
    "growing": lambda i: [1] * (1 + (i // 1000)),
    "ramp": lambda i: [1] * (1 + i % 5),
    "rare_long": lambda i: [2] * 300 if i % 997 == 0 else [],
    "null_items": lambda i: [None if random.random() < 0.5 else 1 for _ in range(3)],
    "empty_or_null": lambda i: None if i % 2 else ([] if i % 3 else [5]),
}
fields = [pa.field(k, pa.list_(pa.int32()), metadata=F) for k in shapes]
t = pa.table([lst(f) for f in shapes.values()], schema=pa.schema(fields))`},
	{"nested_forced", `
F = ` + sparseForce + `
n = 8000
st = pa.struct([("a", pa.int32()), ("b", pa.list_(pa.string()))])
def s(i):
    if random.random() < 0.3: return None
    return {"a": None if random.random() < 0.5 else i, "b": None if random.random() < 0.4 else ["x"] * random.randrange(0, 4)}
def ll(i):
    if random.random() < 0.2: return None
    return [None if random.random() < 0.3 else [i] * random.randrange(0, 3) for _ in range(random.randrange(0, 4))]
fields = [pa.field("s", st, metadata=F), pa.field("ll", pa.list_(pa.list_(pa.int64())), metadata=F),
          pa.field("ls", pa.list_(st), metadata=F)]
t = pa.table([pa.array([s(i) for i in range(n)], st),
              pa.array([ll(i) for i in range(n)], pa.list_(pa.list_(pa.int64()))),
              pa.array([None if i % 7 == 0 else [s(i) for _ in range(i % 3)] for i in range(n)], pa.list_(st))],
             schema=pa.schema(fields))`},
	{"fsl_struct", `
st = pa.struct([("x", pa.float32()), ("y", pa.float32())])
def v(i):
    if random.random() < 0.1: return None
    return [None if random.random() < 0.2 else {"x": 1.0, "y": None if i % 3 else 2.0} for _ in range(2)]
t = pa.table({"l": pa.array([None if i % 5 == 0 else [v(i) for _ in range(i % 3)] for i in range(6000)], pa.list_(pa.list_(st, 2)))})`},
}

// TestSparseStructureByteCompat: for every sparse page pylance writes, the
// structure planar decodes (structural.ReadSparse) and builds again
// (structural.BuildSparse) is the one pylance wrote: the same layers, set
// encodings and polarity, and the same structural buffer bytes.
func TestSparseStructureByteCompat(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	var pages, sets, samePages, sameSets, zstdSets int
	codecs := map[string]int{}
	for _, c := range sparseStructCases {
		t.Run(c.name, func(t *testing.T) {
			_, files := pylanceWrites(t, py, dir, c.name, c.code, "2.3")
			f, err := reader.OpenPath(files[0])
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			paths := columnPaths(t, f)
			for col := 0; col < f.NumColumns(); col++ {
				for pi, p := range f.Pages(col) {
					var pl enc23pb.PlanarLayout
					if !p.Planar || prototext.Unmarshal([]byte(p.Layout), &pl) != nil {
						continue
					}
					s := pl.GetStructure().GetSparse()
					if s == nil {
						continue
					}
					name := fmt.Sprintf("%s page %d", f.ColumnPath(col), pi)
					k, err := structural.SparseBuffers(s)
					if err != nil || k > len(p.Buffers) {
						t.Fatalf("%s: %d structural buffers of %d: %v", name, k, len(p.Buffers), err)
					}
					var all [][]byte
					var pageBytes uint64
					for _, b := range p.Buffers {
						bb, err := f.ReadBuffer(b)
						if err != nil {
							t.Fatal(err)
						}
						all = append(all, bb)
						pageBytes += uint64(len(bb))
					}
					want := all[len(all)-k:]
					lds, err := structural.ReadSparse(s, want, p.Rows, paths[col], pageBytes)
					if err != nil {
						t.Fatalf("%s: reading pylance's structure: %v", name, err)
					}
					got, gotBufs, err := structural.BuildSparse(lds, paths[col])
					if err != nil {
						t.Fatalf("%s: building: %v", name, err)
					}
					pages++
					n, same, zstd := compareSparse(t, name, s, want, got, gotBufs, codecs)
					sets += n
					sameSets += same
					zstdSets += zstd
					if n == same+zstd && proto.Equal(s, got) {
						samePages++
					}
				}
			}
		})
	}
	t.Logf("%d of %d sparse pages identical (zstd payload bytes aside), %d of %d sets byte-identical, %d more the same but for zstd bytes; codecs seen: %v",
		samePages, pages, sameSets, sets, zstdSets, codecs)
	if pages < 40 {
		t.Errorf("only %d sparse pages compared", pages)
	}
}

// compareSparse compares pylance's structure with planar's, set by set
// (descriptor and payload), and returns the number of sets and of identical
// ones.
//
// planar's zstd is not libzstd: a set both store under General(zstd) has
// the same descriptor and decodes to the same values, but its bytes may
// differ; such sets are counted in zstd, not as failures.
func compareSparse(t *testing.T, name string, want *enc23pb.SparseStructure, wantBufs [][]byte, got *enc23pb.SparseStructure, gotBufs [][]byte, codecs map[string]int) (sets, same, zstd int) {
	t.Helper()
	wl, gl := sparseSets(want, wantBufs), sparseSets(got, gotBufs)
	if len(wl) != len(gl) {
		t.Errorf("%s: %d sets, planar %d", name, len(wl), len(gl))
		return len(wl), 0, 0
	}
	for i := range wl {
		e := wl[i].desc.GetPositions()
		codecs[values.EncodingName(e)]++
		if proto.Equal(wl[i].desc, gl[i].desc) && bytes.Equal(wl[i].payload, gl[i].payload) {
			same++
			continue
		}
		if proto.Equal(wl[i].desc, gl[i].desc) && e.GetGeneral().GetCompression().GetScheme() == enc21pb.CompressionScheme_COMPRESSION_ALGORITHM_ZSTD {
			n := max(1, int(wl[i].desc.NumPositions&(1<<32-1)))
			a, err1 := values.DecodeBlock(e, wl[i].payload, n)
			b, err2 := values.DecodeBlock(e, gl[i].payload, n)
			if err1 == nil && err2 == nil && bytes.Equal(a.Data, b.Data) {
				t.Logf("%s set %d (%s): same codec, zstd bytes differ (pylance %d bytes, planar %d)", name, i, wl[i].what, len(wl[i].payload), len(gl[i].payload))
				zstd++
				continue
			}
		}
		t.Errorf("%s set %d (%s):\n pylance %v (%d bytes)\n planar  %v (%d bytes)", name, i, wl[i].what,
			prototext.Format(wl[i].desc), len(wl[i].payload), prototext.Format(gl[i].desc), len(gl[i].payload))
	}
	return len(wl), same, zstd
}

type sparseSetBytes struct {
	what    string
	desc    *enc23pb.SparseValiditySet // sequences are wrapped in one
	payload []byte
}

// sparseSets lists the sets of a structure with their payloads, in buffer
// order; list layers also compare their child slot counts.
func sparseSets(s *enc23pb.SparseStructure, bufs [][]byte) []sparseSetBytes {
	var out []sparseSetBytes
	next := 0
	add := func(what string, v *enc23pb.SparseValiditySet) {
		var p []byte
		if values.HasPayload(v.GetPositions()) && next < len(bufs) {
			p = bufs[next]
			next++
		}
		out = append(out, sparseSetBytes{what, v, p})
	}
	for i, l := range s.GetLayers() {
		switch x := l.GetLayer().(type) {
		case *enc23pb.SparseStructuralLayer_Validity:
			add(fmt.Sprintf("layer %d validity", i), x.Validity)
		case *enc23pb.SparseStructuralLayer_FixedSizeList:
			add(fmt.Sprintf("layer %d fsl(%d) validity", i, x.FixedSizeList.Dimension), x.FixedSizeList.GetValidity())
		case *enc23pb.SparseStructuralLayer_List:
			ls := x.List
			add(fmt.Sprintf("layer %d list non-empty (child slots %d)", i, ls.NumChildSlots),
				&enc23pb.SparseValiditySet{Positions: ls.NonEmptyPositions, NumPositions: ls.NumNonEmptyPositions + ls.NumChildSlots<<32})
			add(fmt.Sprintf("layer %d list counts", i), &enc23pb.SparseValiditySet{Positions: ls.Counts, NumPositions: ls.NumNonEmptyPositions})
			add(fmt.Sprintf("layer %d list validity", i), ls.GetValidity())
		}
	}
	return out
}

// columnPaths gives the structural path of each physical column of a file.
func columnPaths(t *testing.T, f *reader.File) [][]structural.Step {
	var out [][]structural.Step
	for _, fld := range f.Schema().Fields() {
		out = append(out, structural.LeafPathsField(fld)...)
	}
	if len(out) != f.NumColumns() {
		t.Fatalf("%d leaf paths for %d columns", len(out), f.NumColumns())
	}
	return out
}
