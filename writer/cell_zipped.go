package writer

import (
	"fmt"

	"github.com/planarlance/planar/proto/enc21pb"
	"github.com/planarlance/planar/structural"
	"github.com/planarlance/planar/values"
)

// Zipped pages (full-zip bytes): one record per value, with its control
// word when the page has levels.

// encodeZipped writes the page as dense x zipped (full-zip bytes): one record
// per level entry, control word then value bytes.
func (c *pageEnc) encodeZipped(d structural.Dense, pv pageValues, enc *encoded) error {
	if d.NumItems > 0xFFFFFFFF {
		return fmt.Errorf("zipped page of %d items exceeds the u32 item count: %w", d.NumItems, ErrInvalidOption)
	}
	if fixedZip(pv.info.kind) && d.Rep != nil && !c.cfg.format.planarMetadata() && len(d.Layers) == len(c.path) {
		// Readable by Lance 13 next to pages with nulls in these layers
		// (see structural.NullableItems).
		d = structural.NullableItems(d, c.itemLayers)
	}
	br, bd := values.LevelWidths(d.Rep, d.Def)
	if bd == 0 && d.Def != nil {
		// Def levels that are all zero still have layers with bands (a
		// struct layer kept nullable, an unused null band): without a
		// def width Lance's reader takes the page as all valid and, when
		// another page of the batch has nulls there, gives such a layer
		// one valid entry per item, not per slot ("Incorrect number of
		// nulls for StructArray"). Lance's own writer sizes the width by
		// the bands, never 0 when there is one.
		bd = 1
	}
	lv := values.ZipLevels{BitsRep: br, BitsDef: bd, MaxRep: structural.NumLists(d.Layers), MaxVisibleDef: structural.MaxVisibleDef(d.Layers)}
	fz := &enc21pb.FullZipLayout{
		BitsRep: uint32(br), BitsDef: uint32(bd), NumItems: uint32(d.NumItems), NumVisibleItems: uint32(d.NumVisible),
		Layers: d.Layers,
	}
	n := 0
	if d.Rep == nil && d.Def == nil {
		n = d.NumItems
	}
	var data, idx []byte
	var err error
	inPlace := false // data is the page's values, not the data scratch
	switch pv.info.kind {
	case values.KindVarPacked:
		ob := values.VariablePackedOffsetBits(pv.offsets)
		fz.Details = &enc21pb.FullZipLayout_BitsPerOffset{BitsPerOffset: uint32(ob)}
		fe := make([]values.VarPackedFieldEncoding, len(pv.info.layouts))
		for k, l := range pv.info.layouts {
			fe[k].PackedLayout = l
		}
		fz.ValueCompression = values.VariablePackedStructEncoding(fe)
		data, idx, err = values.AppendZippedVariable(c.data[:0], lv, d.Rep, d.Def, pv.offsets, pv.fixed, ob)
	case values.KindVariable:
		fz.Details = &enc21pb.FullZipLayout_BitsPerOffset{BitsPerOffset: uint32(pv.info.offBits)}
		fz.ValueCompression, _ = c.plainEncoding(pv)
		offs, vals := pv.offsets, pv.fixed
		switch pc := enc.plan.Codec.(type) {
		case values.FsstCodec:
			if pv.fsst { // coded by encode
				fz.ValueCompression = pc.Encoding()
			}
		case values.GeneralCodec:
			// Each value compressed on its own (empty values stay empty).
			fz.ValueCompression = pc.Encoding()
			vals = c.zvals[:0]
			offs = append(c.zoffs[:0], 0)
			for i := 0; i < pv.n; i++ {
				if v := pv.fixed[pv.offsets[i]:pv.offsets[i+1]]; len(v) > 0 {
					if vals, err = values.AppendCompressed(vals, pc.Scheme, pc.Level, v); err != nil {
						return err
					}
				}
				offs = append(offs, uint64(len(vals)))
			}
			c.zvals, c.zoffs = vals, offs
		}
		data, idx, err = values.AppendZippedVariable(c.data[:0], lv, d.Rep, d.Def, offs, vals, pv.info.offBits)
	default:
		width, rows := c.zipRecords(pv)
		fz.Details = &enc21pb.FullZipLayout_BitsPerValue{BitsPerValue: uint32(8 * width)}
		fz.ValueCompression = c.zipEncoding(pv)
		if br+bd == 0 && len(rows) == n*width {
			// No control words: the records are the values as they
			// are, written from where they lie (the gathered or
			// borrowed values; keepBuffers leaves them).
			data, inPlace = rows, true
			break
		}
		if c.deferZip {
			err = c.deferZipped(enc, lv, d, rows, width, n)
			break
		}
		data, idx, err = values.AppendZippedFixed(c.data[:0], lv, d.Rep, d.Def, rows, width, n)
	}
	if err != nil {
		return err
	}
	if enc.later == nil {
		if !inPlace {
			c.data = data
		}
		enc.bufs = [][]byte{data}
		if idx != nil {
			enc.bufs = append(enc.bufs, idx)
		}
	}
	enc.layout = &enc21pb.PageLayout{Layout: &enc21pb.PageLayout_FullZipLayout{FullZipLayout: fz}}
	enc.desc = "per-value " + values.EncodingName(fz.ValueCompression)
	if br+bd > 0 {
		enc.desc += fmt.Sprintf(" cw=%d+%d bits", br, bd)
	}
	return nil
}

// deferZipped fills enc.later and enc.laterLens with the fixed-width
// records AppendZippedFixed writes for these arguments: a dense trial of
// wide values that a sparse trial follows measures its lengths alone, and
// the page pays for the records (a copy of every slot's value) only when
// it keeps that trial. A half-null embedding page wrote 16 MiB of dense
// records per page to keep its 8 MiB of sparse ones.
func (c *pageEnc) deferZipped(enc *encoded, lv values.ZipLevels, d structural.Dense, rows []byte, width, n int) error {
	dl, il, err := values.ZippedFixedLen(lv, d.Rep, d.Def, len(rows), width, n)
	if err != nil {
		return err
	}
	if testHookDeferred != nil {
		testHookDeferred(false)
	}
	enc.laterLens = []int{dl}
	if il > 0 {
		enc.laterLens = append(enc.laterLens, il)
	}
	enc.later = func() ([][]byte, error) {
		data, idx, err := values.AppendZippedFixed(c.data[:0], lv, d.Rep, d.Def, rows, width, n)
		if err != nil {
			return nil, err
		}
		c.data = data
		if idx != nil {
			return [][]byte{data, idx}, nil
		}
		return [][]byte{data}, nil
	}
	return nil
}

// deferZipTrials enables deferZipped (tests compare the files written
// with and without it); testHookDeferred, when set, is called for each
// deferred trial (kept false) and each one a page keeps (kept true).
var (
	deferZipTrials   = true
	testHookDeferred func(kept bool)
)

// fixedZip reports whether values of kind are zipped as fixed-width records.
func fixedZip(k values.Kind) bool { return k != values.KindVarPacked && k != values.KindVariable }

// zipRecords returns the record width in bytes and the concatenated value
// records of a fixed-width zipped page (item validity bytes first for
// fixed-size lists with null items).
func (c *pageEnc) zipRecords(pv pageValues) (int, []byte) {
	switch pv.info.kind {
	case values.KindNull:
		return 1, make([]byte, pv.n)
	case values.KindBool:
		// Zipped booleans are widened to one byte per value.
		out := make([]byte, pv.n)
		for i := range out {
			out[i] = (pv.fixed[i/8] >> (i % 8)) & 1
		}
		return 1, out
	case values.KindFSL:
		rb := pv.info.rowBits() / 8
		if pv.itemValid == nil {
			return rb, pv.fixed
		}
		// Per row: the row's bits of every layer that stores validity
		// (outer first, rounded up to bytes), then the data (Lance's
		// per-value FSL records).
		vb := 0
		per := make([]int, len(pv.itemValid))
		for k, v := range pv.itemValid {
			per[k] = pv.info.dims[k]
			if k > 0 {
				per[k] *= per[k-1]
			}
			if v != nil {
				vb += (per[k] + 7) / 8
			}
		}
		out := make([]byte, 0, pv.n*(vb+rb))
		for r := 0; r < pv.n; r++ {
			for k, v := range pv.itemValid {
				if v != nil {
					out = append(out, sliceBits(v, r*per[k], per[k])...)
				}
			}
			out = append(out, pv.fixed[r*rb:(r+1)*rb]...)
		}
		return vb + rb, out
	}
	return pv.info.bits / 8, pv.fixed
}

func (c *pageEnc) zipEncoding(pv pageValues) *enc21pb.CompressiveEncoding {
	switch pv.info.kind {
	case values.KindFSL:
		e, _ := c.plainEncoding(pv)
		return e
	case values.KindBool, values.KindNull:
		return values.FlatEncoding(8)
	case values.KindPacked:
		return values.PackedStructEncoding(pv.info.fields)
	}
	return values.FlatEncoding(pv.info.bits)
}
