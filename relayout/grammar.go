package relayout

import (
	"fmt"

	"github.com/planarlance/planar/proto/enc21pb"
)

// The page grammars of Lance 14's stable readers, as lance-file 14.0.2
// checks them when it opens a file (versions/v2_2/reader.rs and
// versions/v2_3/reader.rs, validate_page_layout and
// validate_compressive_encoding). A re-expressed description that breaks
// them would be refused by pylance however correct its buffers are.

// eachPresent runs check over the codec trees that are present (not nil)
// and returns the first error.
func eachPresent(check func(*enc21pb.CompressiveEncoding) error, es ...*enc21pb.CompressiveEncoding) error {
	for _, e := range es {
		if e != nil {
			if err := check(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// check22 reports why a pb21 page description is not in the 2.2 grammar.
func check22(l *enc21pb.PageLayout) error {
	switch x := l.GetLayout().(type) {
	case *enc21pb.PageLayout_MiniBlockLayout:
		m := x.MiniBlockLayout
		if !m.HasLargeChunk {
			return fmt.Errorf("u16-framed mini-block chunks (2.1): 2.2 requires u32 chunk framing")
		}
		if err := eachPresent(enc22, m.RepCompression, m.DefCompression, m.Dictionary); err != nil {
			return err
		}
		return enc22(m.ValueCompression)
	case *enc21pb.PageLayout_FullZipLayout:
		return enc22(x.FullZipLayout.ValueCompression)
	case *enc21pb.PageLayout_ConstantLayout:
		return eachPresent(enc22, x.ConstantLayout.RepCompression, x.ConstantLayout.DefCompression)
	case *enc21pb.PageLayout_BlobLayout:
		if x.BlobLayout.InnerLayout == nil {
			return fmt.Errorf("blob page without inner layout")
		}
		return check22(x.BlobLayout.InnerLayout)
	case *enc21pb.PageLayout_SparseLayout:
		return fmt.Errorf("interim sparse layout: not part of the 2.2 grammar")
	default:
		return fmt.Errorf("page without layout")
	}
}

// enc22 checks a codec tree against the 2.2 grammar: the 2.3-only tags
// Range and Delta are unknown, variable-width offsets are Flat, and RLE
// holds flat 8/16/32/64-bit values with flat u8 run lengths.
func enc22(e *enc21pb.CompressiveEncoding) error {
	if e == nil {
		return fmt.Errorf("codec tree with a missing node")
	}
	switch c := e.Compression.(type) {
	case *enc21pb.CompressiveEncoding_Flat, *enc21pb.CompressiveEncoding_InlineBitpacking, *enc21pb.CompressiveEncoding_Constant:
		return nil
	case *enc21pb.CompressiveEncoding_Variable:
		if _, ok := c.Variable.GetOffsets().GetCompression().(*enc21pb.CompressiveEncoding_Flat); !ok {
			return fmt.Errorf("variable-width offsets as %s: 2.2 requires Flat offsets (generic offsets are 2.3-only)", tag(c.Variable.GetOffsets()))
		}
		return nil
	case *enc21pb.CompressiveEncoding_OutOfLineBitpacking:
		return enc22(c.OutOfLineBitpacking.Values)
	case *enc21pb.CompressiveEncoding_Fsst:
		return enc22(c.Fsst.Values)
	case *enc21pb.CompressiveEncoding_Dictionary:
		if err := enc22(c.Dictionary.Indices); err != nil {
			return err
		}
		return enc22(c.Dictionary.Items)
	case *enc21pb.CompressiveEncoding_Rle:
		v := c.Rle.GetValues().GetFlat()
		r := c.Rle.GetRunLengths().GetFlat()
		if v == nil || v.Data != nil || !(v.BitsPerValue == 8 || v.BitsPerValue == 16 || v.BitsPerValue == 32 || v.BitsPerValue == 64) ||
			r == nil || r.Data != nil || r.BitsPerValue != 8 {
			return fmt.Errorf("RLE with %s values and %s run lengths: 2.2 requires flat values and flat u8 run lengths",
				tag(c.Rle.GetValues()), tagBits(c.Rle.GetRunLengths()))
		}
		return nil
	case *enc21pb.CompressiveEncoding_ByteStreamSplit:
		return enc22(c.ByteStreamSplit.Values)
	case *enc21pb.CompressiveEncoding_General:
		return enc22(c.General.Values)
	case *enc21pb.CompressiveEncoding_FixedSizeList:
		return enc22(c.FixedSizeList.Values)
	case *enc21pb.CompressiveEncoding_PackedStruct:
		return enc22(c.PackedStruct.Values)
	case *enc21pb.CompressiveEncoding_VariablePackedStruct:
		for _, f := range c.VariablePackedStruct.Fields {
			if err := enc22(f.GetValue()); err != nil {
				return err
			}
		}
		return nil
	case *enc21pb.CompressiveEncoding_Range, *enc21pb.CompressiveEncoding_Delta:
		return fmt.Errorf("%s encoding: a 2.3-only codec", tag(e))
	default:
		return fmt.Errorf("codec tree node without compression")
	}
}

// position is where a codec tree sits in a 2.3 page (lance-file's
// EncodingPosition): Range and Delta are legal only in blocks whose payload
// is optional (sparse sequences, indexed indices) and inside the generic
// offsets of a variable-width chunk.
type position int

const (
	posBlock     position = iota // buffer-backed block: levels, dictionaries
	posMiniBlock                 // chunk values
	posPerValue                  // zipped values
)

// check23 reports why the execution form of a dense planar page (a pb21
// description) is not in the 2.3 grammar. Sparse cells come from 2.3 files
// only and are passed through unchanged.
func check23(l *enc21pb.PageLayout) error {
	switch x := l.GetLayout().(type) {
	case *enc21pb.PageLayout_MiniBlockLayout:
		m := x.MiniBlockLayout
		if !m.HasLargeChunk {
			return fmt.Errorf("u16-framed mini-block chunks (2.1): 2.3 requires u32 chunk framing")
		}
		block := func(e *enc21pb.CompressiveEncoding) error { return enc23(e, posBlock) }
		if err := eachPresent(block, m.RepCompression, m.DefCompression, m.Dictionary); err != nil {
			return err
		}
		return enc23(m.ValueCompression, posMiniBlock)
	case *enc21pb.PageLayout_FullZipLayout:
		return enc23(x.FullZipLayout.ValueCompression, posPerValue)
	case *enc21pb.PageLayout_ConstantLayout:
		return nil
	case *enc21pb.PageLayout_BlobLayout:
		return fmt.Errorf("blob v1 page: not part of the 2.3 grammar")
	case *enc21pb.PageLayout_SparseLayout:
		return fmt.Errorf("interim sparse layout: not part of the 2.3 grammar")
	default:
		return fmt.Errorf("page without layout")
	}
}

func enc23(e *enc21pb.CompressiveEncoding, pos position) error {
	if e == nil {
		return fmt.Errorf("codec tree with a missing node")
	}
	switch c := e.Compression.(type) {
	case *enc21pb.CompressiveEncoding_Flat, *enc21pb.CompressiveEncoding_InlineBitpacking, *enc21pb.CompressiveEncoding_Constant:
		return nil
	case *enc21pb.CompressiveEncoding_Variable:
		if pos == posMiniBlock {
			// Lance's BinaryMiniBlockDecompressor::from_variable: no values
			// codec; Flat offsets are the legacy layout (32 or 64 bits),
			// anything else a fixed-width block sequence.
			if c.Variable.Values != nil {
				return fmt.Errorf("variable-width chunk with a values codec")
			}
			o := c.Variable.GetOffsets()
			if f := o.GetFlat(); f != nil {
				if f.Data != nil || (f.BitsPerValue != 32 && f.BitsPerValue != 64) {
					return fmt.Errorf("legacy variable-width chunk offsets of %d bits", f.BitsPerValue)
				}
				return nil
			}
			return blockSequence(o)
		}
		return enc23(c.Variable.GetOffsets(), pos)
	case *enc21pb.CompressiveEncoding_OutOfLineBitpacking:
		return enc23(c.OutOfLineBitpacking.Values, pos)
	case *enc21pb.CompressiveEncoding_Fsst:
		return enc23(c.Fsst.Values, pos)
	case *enc21pb.CompressiveEncoding_Dictionary:
		if err := enc23(c.Dictionary.Indices, pos); err != nil {
			return err
		}
		return enc23(c.Dictionary.Items, pos)
	case *enc21pb.CompressiveEncoding_Rle:
		if err := enc23(c.Rle.Values, pos); err != nil {
			return err
		}
		return enc23(c.Rle.RunLengths, pos)
	case *enc21pb.CompressiveEncoding_ByteStreamSplit:
		return enc23(c.ByteStreamSplit.Values, pos)
	case *enc21pb.CompressiveEncoding_General:
		return enc23(c.General.Values, pos)
	case *enc21pb.CompressiveEncoding_FixedSizeList:
		return enc23(c.FixedSizeList.Values, pos)
	case *enc21pb.CompressiveEncoding_PackedStruct:
		return enc23(c.PackedStruct.Values, pos)
	case *enc21pb.CompressiveEncoding_VariablePackedStruct:
		for _, f := range c.VariablePackedStruct.Fields {
			if err := enc23(f.GetValue(), pos); err != nil {
				return err
			}
		}
		return nil
	case *enc21pb.CompressiveEncoding_Range, *enc21pb.CompressiveEncoding_Delta:
		return fmt.Errorf("%s encoding outside an optional-payload block", tag(e))
	default:
		return fmt.Errorf("codec tree node without compression")
	}
}

// blockSequence accepts the fixed-width block sequences generic chunk
// offsets may use (Lance's create_fixed_width_block_decompressor).
func blockSequence(e *enc21pb.CompressiveEncoding) error {
	switch c := e.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Flat, *enc21pb.CompressiveEncoding_Constant, *enc21pb.CompressiveEncoding_Range,
		*enc21pb.CompressiveEncoding_OutOfLineBitpacking, *enc21pb.CompressiveEncoding_InlineBitpacking:
		return nil
	case *enc21pb.CompressiveEncoding_Delta:
		return blockSequence(c.Delta.Deltas)
	case *enc21pb.CompressiveEncoding_General:
		return blockSequence(c.General.Values)
	case *enc21pb.CompressiveEncoding_Rle, *enc21pb.CompressiveEncoding_Dictionary:
		return nil
	default:
		return fmt.Errorf("variable-width chunk offsets as %s", tag(e))
	}
}

// tag names the root of a codec tree.
func tag(e *enc21pb.CompressiveEncoding) string {
	switch e.GetCompression().(type) {
	case *enc21pb.CompressiveEncoding_Flat:
		return "Flat"
	case *enc21pb.CompressiveEncoding_Variable:
		return "Variable"
	case *enc21pb.CompressiveEncoding_Constant:
		return "Constant"
	case *enc21pb.CompressiveEncoding_OutOfLineBitpacking:
		return "OutOfLineBitpacking"
	case *enc21pb.CompressiveEncoding_InlineBitpacking:
		return "InlineBitpacking"
	case *enc21pb.CompressiveEncoding_Fsst:
		return "Fsst"
	case *enc21pb.CompressiveEncoding_Dictionary:
		return "Dictionary"
	case *enc21pb.CompressiveEncoding_Rle:
		return "Rle"
	case *enc21pb.CompressiveEncoding_ByteStreamSplit:
		return "ByteStreamSplit"
	case *enc21pb.CompressiveEncoding_General:
		return "General"
	case *enc21pb.CompressiveEncoding_FixedSizeList:
		return "FixedSizeList"
	case *enc21pb.CompressiveEncoding_PackedStruct:
		return "PackedStruct"
	case *enc21pb.CompressiveEncoding_VariablePackedStruct:
		return "VariablePackedStruct"
	case *enc21pb.CompressiveEncoding_Range:
		return "Range"
	case *enc21pb.CompressiveEncoding_Delta:
		return "Delta"
	}
	return "nothing"
}

func tagBits(e *enc21pb.CompressiveEncoding) string {
	if f := e.GetFlat(); f != nil {
		return fmt.Sprintf("Flat%d", f.BitsPerValue)
	}
	return tag(e)
}
