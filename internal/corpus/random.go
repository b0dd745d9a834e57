package corpus

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// RandCase is one case of the differential fuzzer: a random schema, its data
// as record batches (slices with non-zero offsets, children offset inside
// their parents), and the writer settings to use. It is drawn from its seed
// alone, so a seed names the case.
type RandCase struct {
	Seed    uint64
	Schema  *arrow.Schema
	Batches []arrow.RecordBatch
	// Format is "2.2" or "2.3", Policy "cost" or "lance"; PageBytes is the
	// page budget (0: the writer's default).
	Format    string
	Policy    string
	PageBytes int64
}

// Rows is the number of rows over all batches.
func (c *RandCase) Rows() int64 {
	n := int64(0)
	for _, b := range c.Batches {
		n += b.NumRows()
	}
	return n
}

// Release releases the batches.
func (c *RandCase) Release() {
	for _, b := range c.Batches {
		b.Release()
	}
	c.Batches = nil
}

// String describes the case's settings and schema in one line.
func (c *RandCase) String() string {
	sizes := make([]string, len(c.Batches))
	for i, b := range c.Batches {
		sizes[i] = fmt.Sprint(b.NumRows())
	}
	return fmt.Sprintf("seed=%d format=%s policy=%s page=%d batches=[%s] schema=%s", c.Seed, c.Format, c.Policy,
		c.PageBytes, strings.Join(sizes, " "), strings.ReplaceAll(c.Schema.String(), "\n", " "))
}

// Dump prints every column of every batch, for a minimised failure.
func (c *RandCase) Dump() string {
	var sb strings.Builder
	sb.WriteString(c.String())
	sb.WriteByte('\n')
	for bi, b := range c.Batches {
		for ci, col := range b.Columns() {
			fmt.Fprintf(&sb, "batch %d column %q (offset %d): %v\n", bi, b.ColumnName(ci), col.Data().Offset(), col)
		}
	}
	return sb.String()
}

// Subset returns the case with only the given columns and, for each kept
// batch, rows [lo, hi) (a batch index with lo == hi == -1 is dropped). The
// arrays are shared with c.
func (c *RandCase) Subset(cols []int, keep [][2]int) *RandCase {
	fields := make([]arrow.Field, len(cols))
	for i, ci := range cols {
		fields[i] = c.Schema.Field(ci)
	}
	out := *c
	out.Schema = arrow.NewSchema(fields, nil)
	out.Batches = nil
	for bi, b := range c.Batches {
		lo, hi := keep[bi][0], keep[bi][1]
		if lo < 0 {
			continue
		}
		arrs := make([]arrow.Array, len(cols))
		for i, ci := range cols {
			arrs[i] = array.NewSlice(b.Column(ci), int64(lo), int64(hi))
		}
		out.Batches = append(out.Batches, array.NewRecordBatch(out.Schema, arrs, int64(hi-lo)))
		for _, a := range arrs {
			a.Release()
		}
	}
	return &out
}

// nullPat is how a layer's slots are null.
type nullPat int

const (
	nullNone   nullPat = iota // nullable field with no nulls
	nullRandom                // independent, with probability p
	nullAll                   // every slot
	nullRuns                  // long runs of nulls and values
	nullOne                   // exactly one null slot
	nullLead                  // a leading stretch
	nullTrail                 // a trailing stretch
	nullParent                // only where the parent is null (masked)
	numNullPats
)

// valPat is how leaf values are drawn.
type valPat int

const (
	valRandom valPat = iota
	valSmall
	valSorted
	valRuns
	valConst
	valLowCard
	valEdge // extremes: NaN, ±Inf, -0, min/max, empty, unicode
	numValPats
)

// rnode is one field of a random schema with the way its data is drawn.
type rnode struct {
	field  arrow.Field
	kids   []*rnode
	nulls  nullPat
	p      float64 // nullRandom probability
	garble bool    // slots under a null parent hold garbage, not nulls
	bitmap bool    // attach a validity bitmap even without nulls
	skew   bool    // children arrays carry a non-zero offset
	vals   valPat
	maxLen int     // lists: longest list
	emptyP float64 // lists: probability of an empty list
	wide   bool    // strings over 256 bytes
	card   int     // valLowCard: distinct values
	dict   *rnode  // dictionary values
	// dictArr is the column's current dictionary (shared by batches).
	dictArr arrow.Array
}

type rgen struct {
	r    *rand.Rand
	mem  memory.Allocator
	name int
}

// RandomCase draws the differential case of seed.
func RandomCase(mem memory.Allocator, seed uint64) *RandCase {
	g := &rgen{r: rand.New(rand.NewPCG(seed, 0x5eed_d1ff)), mem: mem}
	r := g.r
	c := &RandCase{Seed: seed, Format: "2.3", Policy: "cost"}
	if r.IntN(3) == 0 {
		c.Format = "2.2"
	}
	if r.IntN(3) == 0 {
		c.Policy = "lance"
	}
	switch r.IntN(4) {
	case 0:
		c.PageBytes = int64(64 << r.IntN(12)) // 64 B .. 128 KiB: many pages
	case 1:
		c.PageBytes = int64(1 + r.IntN(4096))
	}
	ncols := 1 + r.IntN(3)
	nodes := make([]*rnode, ncols)
	fields := make([]arrow.Field, ncols)
	for i := range nodes {
		nodes[i] = g.node(fmt.Sprintf("c%d", i), 0, true)
		fields[i] = nodes[i].field
	}
	c.Schema = arrow.NewSchema(fields, nil)
	var rows int
	switch k := r.IntN(20); {
	case k == 0:
		rows = 1
	case k < 8:
		rows = r.IntN(40)
	case k < 15:
		rows = 40 + r.IntN(400)
	case k < 19:
		rows = 400 + r.IntN(4000)
	default:
		rows = 4000 + r.IntN(20000)
	}
	nb := 1 + r.IntN(4)
	if rows == 0 {
		nb = 1
	}
	cuts := make([]int, 0, nb+1)
	cuts = append(cuts, 0)
	for i := 1; i < nb; i++ {
		cuts = append(cuts, r.IntN(rows+1))
	}
	cuts = append(cuts, rows)
	for i := 1; i < len(cuts); i++ { // sort the few cut points
		for j := i; j > 0 && cuts[j] < cuts[j-1]; j-- {
			cuts[j], cuts[j-1] = cuts[j-1], cuts[j]
		}
	}
	for b := 0; b+1 < len(cuts); b++ {
		n := cuts[b+1] - cuts[b]
		arrs := make([]arrow.Array, ncols)
		for i, nd := range nodes {
			// Top-level slices: draw extra rows around the batch and
			// cut it out, so the batch arrays have non-zero offsets.
			pre, post := 0, 0
			if r.IntN(2) == 0 {
				pre, post = r.IntN(9), r.IntN(5)
			}
			full := g.array(nd, pre+n+post, nil)
			arrs[i] = array.NewSlice(full, int64(pre), int64(pre+n))
			full.Release()
		}
		c.Batches = append(c.Batches, array.NewRecordBatch(c.Schema, arrs, int64(n)))
		for _, a := range arrs {
			a.Release()
		}
	}
	// Drawn last, so the cases of earlier seeds keep their data: in 2.3,
	// one column in eight asks for a structural encoding (sparse or
	// miniblock), which both writers honour.
	if c.Format == "2.3" && r.IntN(8) == 0 {
		i := r.IntN(ncols)
		enc := []string{"sparse", "sparse", "miniblock"}[r.IntN(3)]
		fields[i].Metadata = arrow.NewMetadata([]string{"lance-encoding:structural-encoding"}, []string{enc})
		c.Schema = arrow.NewSchema(fields, nil)
		for b, rec := range c.Batches {
			c.Batches[b] = array.NewRecordBatch(c.Schema, rec.Columns(), rec.NumRows())
			rec.Release()
		}
	}
	return c
}

func (g *rgen) fieldName() string {
	g.name++
	return fmt.Sprintf("f%d", g.name)
}

// node draws a field: a container while depth allows, else a leaf.
func (g *rgen) node(name string, depth int, top bool) *rnode {
	r := g.r
	n := &rnode{nulls: nullPat(r.IntN(int(numNullPats))), garble: r.IntN(3) == 0, bitmap: r.IntN(4) == 0, skew: r.IntN(3) == 0}
	if top && n.nulls == nullParent {
		n.nulls = nullRandom
	}
	n.p = []float64{0.01, 0.1, 0.5, 0.9, 0.99}[r.IntN(5)]
	nullable := r.IntN(5) != 0
	var dt arrow.DataType
	// Containers get rarer with depth (half the top-level columns are
	// flat), so simple shapes are not drowned by deep ones.
	kind := 9
	if depth < 4 && r.Float64() < []float64{0.5, 0.4, 0.25, 0.15}[depth] {
		kind = r.IntN(6)
	}
	switch kind {
	case 0, 1: // struct
		k := 1 + r.IntN(3)
		fs := make([]arrow.Field, k)
		for i := range fs {
			kid := g.node(g.fieldName(), depth+1, false)
			n.kids = append(n.kids, kid)
			fs[i] = kid.field
		}
		dt = arrow.StructOf(fs...)
	case 2, 3: // list / large list
		kid := g.node("item", depth+1, false)
		n.kids = []*rnode{kid}
		n.maxLen = []int{1, 3, 8, 40}[r.IntN(4)]
		n.emptyP = []float64{0, 0.1, 0.5, 0.95}[r.IntN(4)]
		if kind == 2 {
			dt = arrow.ListOfField(kid.field)
		} else {
			dt = arrow.LargeListOfField(kid.field)
		}
	case 4: // fixed-size list of struct (structural)
		k := 1 + r.IntN(2)
		fs := make([]arrow.Field, k)
		st := &rnode{nulls: nullPat(r.IntN(int(numNullPats))), p: 0.1, garble: r.IntN(2) == 0}
		for i := range fs {
			kid := g.node(g.fieldName(), depth+2, false)
			st.kids = append(st.kids, kid)
			fs[i] = kid.field
		}
		st.field = arrow.Field{Name: "item", Type: arrow.StructOf(fs...), Nullable: r.IntN(3) != 0}
		n.kids = []*rnode{st}
		dt = arrow.FixedSizeListOfField(int32(1+r.IntN(3)), st.field)
	case 5: // map
		key := &rnode{vals: valPat(r.IntN(int(numValPats))), card: 2 + r.IntN(20)}
		key.field = arrow.Field{Name: "key", Type: []arrow.DataType{arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int32}[r.IntN(2)]}
		val := g.node("value", depth+2, false)
		val.field.Nullable = true
		mt := arrow.MapOf(key.field.Type, val.field.Type)
		entries := &rnode{field: mt.ElemField(), kids: []*rnode{key, val}}
		n.kids = []*rnode{entries}
		n.maxLen = []int{1, 4, 10}[r.IntN(3)]
		n.emptyP = []float64{0, 0.2, 0.9}[r.IntN(3)]
		dt = mt
	default:
		dt = g.leaf(n)
	}
	n.field = arrow.Field{Name: name, Type: dt, Nullable: nullable || dt.ID() == arrow.NULL}
	if !n.field.Nullable {
		n.nulls = nullNone
	}
	return n
}

var (
	tzs       = []string{"", "UTC", "America/New_York"}
	timeUnits = []arrow.TimeUnit{arrow.Second, arrow.Millisecond, arrow.Microsecond, arrow.Nanosecond}
)

// leaf draws a leaf type and its value pattern.
func (g *rgen) leaf(n *rnode) arrow.DataType {
	r := g.r
	n.vals = valPat(r.IntN(int(numValPats)))
	n.card = []int{1, 2, 5, 100, 1000}[r.IntN(5)]
	n.wide = r.IntN(6) == 0
	switch r.IntN(30) {
	case 0:
		return arrow.FixedWidthTypes.Boolean
	case 1:
		return arrow.PrimitiveTypes.Int8
	case 2:
		return arrow.PrimitiveTypes.Int16
	case 3:
		return arrow.PrimitiveTypes.Int32
	case 4:
		return arrow.PrimitiveTypes.Int64
	case 5:
		return []arrow.DataType{arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32, arrow.PrimitiveTypes.Uint64}[r.IntN(4)]
	case 6:
		return arrow.FixedWidthTypes.Float16
	case 7:
		return arrow.PrimitiveTypes.Float32
	case 8:
		return arrow.PrimitiveTypes.Float64
	case 9:
		return &arrow.Decimal128Type{Precision: int32(1 + r.IntN(38)), Scale: int32(r.IntN(3))}
	case 10:
		return &arrow.Decimal256Type{Precision: int32(39 + r.IntN(38)), Scale: int32(r.IntN(5))}
	case 11:
		return []arrow.DataType{arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Date64}[r.IntN(2)]
	case 12:
		return []arrow.DataType{arrow.FixedWidthTypes.Time32s, arrow.FixedWidthTypes.Time32ms, arrow.FixedWidthTypes.Time64us, arrow.FixedWidthTypes.Time64ns}[r.IntN(4)]
	case 13:
		return &arrow.TimestampType{Unit: timeUnits[r.IntN(4)], TimeZone: tzs[r.IntN(3)]}
	case 14:
		return &arrow.DurationType{Unit: timeUnits[r.IntN(4)]}
	case 15, 16:
		return arrow.BinaryTypes.String
	case 17:
		return arrow.BinaryTypes.LargeString
	case 18:
		return arrow.BinaryTypes.Binary
	case 19:
		return arrow.BinaryTypes.LargeBinary
	case 20:
		return &arrow.FixedSizeBinaryType{ByteWidth: []int{1, 3, 16, 300}[r.IntN(4)]}
	case 21, 22, 23: // vectors
		item := &rnode{nulls: nullPat(r.IntN(int(numNullPats))), p: 0.05, vals: n.vals, card: n.card}
		if item.nulls == nullParent {
			item.nulls = nullNone
		}
		it := []arrow.DataType{arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Uint8,
			arrow.PrimitiveTypes.Float64, arrow.FixedWidthTypes.Boolean}[r.IntN(5)]
		dim := []int32{1, 2, 3, 4, 8, 16, 128, 768}[r.IntN(8)]
		if r.IntN(5) == 0 { // nested vector
			inner := &rnode{nulls: item.nulls, p: item.p, vals: n.vals, card: n.card, field: arrow.Field{Name: "item", Type: it, Nullable: r.IntN(2) == 0}}
			if !inner.field.Nullable {
				inner.nulls = nullNone
			}
			it = arrow.FixedSizeListOfField(int32(2+r.IntN(2)), inner.field)
			item.kids = []*rnode{inner}
			dim = int32(1 + r.IntN(4))
		}
		item.field = arrow.Field{Name: "item", Type: it, Nullable: r.IntN(2) == 0}
		if !item.field.Nullable {
			item.nulls = nullNone
		}
		n.kids = []*rnode{item}
		return arrow.FixedSizeListOfField(dim, item.field)
	case 24, 25: // dictionary
		idx := []arrow.DataType{arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
			arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint16, arrow.PrimitiveTypes.Uint32}[r.IntN(7)]
		vt := []arrow.DataType{arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.Binary, arrow.PrimitiveTypes.Int32}[r.IntN(4)]
		n.dict = &rnode{field: arrow.Field{Name: "dict", Type: vt}, vals: n.vals, card: n.card, wide: n.wide}
		return &arrow.DictionaryType{IndexType: idx, ValueType: vt}
	case 26:
		return arrow.Null
	default:
		return arrow.BinaryTypes.String
	}
}

// valid draws the validity of n slots of node nd under parent validity pv
// (nil: all valid). A slot under a null parent is null unless the node
// garbles (then it is drawn like any other slot).
func (g *rgen) valid(nd *rnode, n int, pv []bool) []bool {
	if nd.field.Type.ID() == arrow.NULL {
		return make([]bool, n)
	}
	out := make([]bool, n)
	r := g.r
	run := r.IntN(2) == 0
	one := r.IntN(max(n, 1))
	for i := range out {
		parentOK := pv == nil || pv[i]
		var v bool
		switch nd.nulls {
		case nullNone:
			v = true
		case nullRandom:
			v = r.Float64() >= nd.p
		case nullAll:
			v = false
		case nullRuns:
			if r.IntN(50) == 0 {
				run = !run
			}
			v = run
		case nullOne:
			v = i != one
		case nullLead:
			v = i >= n/3
		case nullTrail:
			v = i < n-n/3
		case nullParent:
			v = parentOK
		}
		if !nd.field.Nullable {
			v = true // only masked slots may be null, and they stay valid here
		}
		if !parentOK && !nd.garble && nd.field.Nullable {
			v = false
		}
		out[i] = v
	}
	return out
}

func and(a, b []bool) []bool {
	if b == nil {
		return a
	}
	out := make([]bool, len(a))
	for i := range a {
		out[i] = a[i] && b[i]
	}
	return out
}

// bitmapOf returns the validity bitmap and null count of v (no bitmap when
// nothing is null, unless the node asks for one).
func (g *rgen) bitmapOf(nd *rnode, v []bool) (*memory.Buffer, int) {
	nulls := 0
	for _, ok := range v {
		if !ok {
			nulls++
		}
	}
	if nulls == 0 && !nd.bitmap {
		return nil, 0
	}
	buf := memory.NewResizableBuffer(g.mem)
	buf.Resize(int(bitutil.BytesForBits(int64(len(v)))))
	bm := buf.Bytes()
	for i := range bm {
		bm[i] = 0
	}
	for i, ok := range v {
		if ok {
			bitutil.SetBit(bm, i)
		}
	}
	return buf, nulls
}

// array draws n slots of node nd; pv is the parent's effective validity.
func (g *rgen) array(nd *rnode, n int, pv []bool) arrow.Array {
	t := nd.field.Type
	switch t.ID() {
	case arrow.STRUCT:
		v := g.valid(nd, n, pv)
		ev := and(v, pv)
		kids := make([]arrow.ArrayData, len(nd.kids))
		for i, k := range nd.kids {
			a := g.skewed(k, n, ev, nd.skew)
			kids[i] = a.Data()
			defer a.Release()
		}
		bm, nulls := g.bitmapOf(nd, v)
		d := array.NewData(t, n, []*memory.Buffer{bm}, kids, nulls, 0)
		defer d.Release()
		releaseBuf(bm)
		return array.MakeFromData(d)
	case arrow.LIST, arrow.LARGE_LIST, arrow.MAP:
		v := g.valid(nd, n, pv)
		ev := and(v, pv)
		lens := make([]int, n)
		total := 0
		for i := range lens {
			l := 1 + g.r.IntN(nd.maxLen)
			if g.r.Float64() < nd.emptyP {
				l = 0
			}
			if !ev[i] && !(nd.garble && g.r.IntN(2) == 0) {
				l = 0 // null lists are usually empty; sometimes garbage
			}
			lens[i] = l
			total += l
		}
		cv := make([]bool, 0, total)
		for i, l := range lens {
			for j := 0; j < l; j++ {
				cv = append(cv, ev[i])
			}
		}
		kid := g.skewed(nd.kids[0], total, cv, nd.skew)
		defer kid.Release()
		wide := t.ID() == arrow.LARGE_LIST
		ob := memory.NewResizableBuffer(g.mem)
		if wide {
			ob.Resize(8 * (n + 1))
		} else {
			ob.Resize(4 * (n + 1))
		}
		o := 0
		for i := 0; i <= n; i++ {
			if wide {
				binary.LittleEndian.PutUint64(ob.Bytes()[8*i:], uint64(o))
			} else {
				binary.LittleEndian.PutUint32(ob.Bytes()[4*i:], uint32(o))
			}
			if i < n {
				o += lens[i]
			}
		}
		bm, nulls := g.bitmapOf(nd, v)
		d := array.NewData(t, n, []*memory.Buffer{bm, ob}, []arrow.ArrayData{kid.Data()}, nulls, 0)
		defer d.Release()
		releaseBuf(bm)
		ob.Release()
		return array.MakeFromData(d)
	case arrow.FIXED_SIZE_LIST:
		v := g.valid(nd, n, pv)
		ev := and(v, pv)
		dim := int(t.(*arrow.FixedSizeListType).Len())
		cv := make([]bool, 0, n*dim)
		for i := 0; i < n; i++ {
			for j := 0; j < dim; j++ {
				cv = append(cv, ev[i])
			}
		}
		kid := g.skewed(nd.kids[0], n*dim, cv, nd.skew)
		defer kid.Release()
		bm, nulls := g.bitmapOf(nd, v)
		d := array.NewData(t, n, []*memory.Buffer{bm}, []arrow.ArrayData{kid.Data()}, nulls, 0)
		defer d.Release()
		releaseBuf(bm)
		return array.MakeFromData(d)
	case arrow.DICTIONARY:
		dt := t.(*arrow.DictionaryType)
		// (A column's distinct values stay within what arrow's dictionary
		// unification accepts for its keys, as planar's writer requires.)
		card := max(1, min(nd.card, maxIndex(dt.IndexType)-1))
		if nd.dictArr == nil {
			nd.dictArr = g.leafArray(nd.dict, dt.ValueType, card, nil)
		}
		// One dictionary for the column, as a writer of several batches
		// usually has; now and then a batch brings its own, drawn from the
		// same values (a column's values must fit its keys together).
		dict := nd.dictArr
		if card > 1 && g.r.IntN(8) == 0 {
			lo := g.r.IntN(card - 1)
			dict = array.NewSlice(nd.dictArr, int64(lo), int64(lo+1+g.r.IntN(card-lo-1)))
			defer dict.Release()
			card = dict.Len()
		}
		v := g.valid(nd, n, pv)
		ib := array.NewBuilder(g.mem, dt.IndexType)
		defer ib.Release()
		for i := 0; i < n; i++ {
			k := g.r.IntN(card)
			if nd.vals == valRuns {
				k = (i / 17) % card
			}
			if !v[i] {
				ib.AppendNull()
				continue
			}
			appendInt(ib, int64(k))
		}
		idx := ib.NewArray()
		defer idx.Release()
		return array.NewDictionaryArray(dt, idx, dict)
	}
	return g.leafArray(nd, t, n, g.valid(nd, n, pv))
}

// skewed draws n slots of a child; with skew it draws extra slots in front
// and slices them off, so the child array has a non-zero offset.
func (g *rgen) skewed(nd *rnode, n int, pv []bool, skew bool) arrow.Array {
	if !skew {
		return g.array(nd, n, pv)
	}
	pre := 1 + g.r.IntN(5)
	ppv := make([]bool, pre+n)
	for i := 0; i < pre; i++ {
		ppv[i] = true
	}
	if pv == nil {
		for i := pre; i < pre+n; i++ {
			ppv[i] = true
		}
	} else {
		copy(ppv[pre:], pv)
	}
	full := g.array(nd, pre+n, ppv)
	defer full.Release()
	return array.NewSlice(full, int64(pre), int64(pre+n))
}

func releaseBuf(b *memory.Buffer) {
	if b != nil {
		b.Release()
	}
}
