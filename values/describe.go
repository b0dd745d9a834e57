package values

import (
	"fmt"
	"strings"

	"github.com/planarlance/planar/proto/enc21pb"
)

// EncodingName prints a compressive encoding tree in the compact notation
// of Codec.Name ("general(zstd,bitpack32)", "fsl8,validity(flat32)"), for
// any tree a file may hold, planar's or Lance's.
func EncodingName(e *enc21pb.CompressiveEncoding) string {
	switch c := e.GetCompression().(type) {
	case nil:
		return "missing"
	case *enc21pb.CompressiveEncoding_Flat:
		return fmt.Sprintf("flat%d", c.Flat.BitsPerValue)
	case *enc21pb.CompressiveEncoding_Variable:
		return "variable(" + EncodingName(c.Variable.Offsets) + ")"
	case *enc21pb.CompressiveEncoding_InlineBitpacking:
		return fmt.Sprintf("bitpack%d", c.InlineBitpacking.UncompressedBitsPerValue)
	case *enc21pb.CompressiveEncoding_OutOfLineBitpacking:
		return fmt.Sprintf("bitpack%d(w=%d)", c.OutOfLineBitpacking.UncompressedBitsPerValue, c.OutOfLineBitpacking.GetValues().GetFlat().GetBitsPerValue())
	case *enc21pb.CompressiveEncoding_Rle:
		return "rle(" + EncodingName(c.Rle.Values) + "," + EncodingName(c.Rle.RunLengths) + ")"
	case *enc21pb.CompressiveEncoding_ByteStreamSplit:
		return fmt.Sprintf("bss%d", c.ByteStreamSplit.GetValues().GetFlat().GetBitsPerValue())
	case *enc21pb.CompressiveEncoding_General:
		return fmt.Sprintf("general(%v,%s)", Scheme(c.General.GetCompression().GetScheme()), EncodingName(c.General.Values))
	case *enc21pb.CompressiveEncoding_Fsst:
		return "fsst(" + EncodingName(c.Fsst.Values) + ")"
	case *enc21pb.CompressiveEncoding_FixedSizeList:
		v := ""
		if c.FixedSizeList.HasValidity {
			v = ",validity"
		}
		return fmt.Sprintf("fsl%d%s(%s)", c.FixedSizeList.ItemsPerValue, v, EncodingName(c.FixedSizeList.Values))
	case *enc21pb.CompressiveEncoding_Constant:
		if len(c.Constant.Value) == 0 {
			return "constant"
		}
		return fmt.Sprintf("constant(%d bytes)", len(c.Constant.Value))
	case *enc21pb.CompressiveEncoding_Range:
		return fmt.Sprintf("range%d(%d,+%d)", c.Range.UncompressedBitsPerValue, c.Range.Start, c.Range.Step)
	case *enc21pb.CompressiveEncoding_Delta:
		return fmt.Sprintf("delta%d(%s)", c.Delta.UncompressedBitsPerValue, EncodingName(c.Delta.Deltas))
	case *enc21pb.CompressiveEncoding_PackedStruct:
		if bits, err := ParsePackedStruct(e); err == nil {
			return fmt.Sprintf("packed-struct%v", bits)
		}
		return "packed-struct"
	case *enc21pb.CompressiveEncoding_VariablePackedStruct:
		return "variable-packed-struct"
	case *enc21pb.CompressiveEncoding_Dictionary:
		return fmt.Sprintf("dict[%d](%s,%s)", c.Dictionary.NumDictionaryItems, EncodingName(c.Dictionary.Indices), EncodingName(c.Dictionary.Items))
	}
	t := fmt.Sprintf("%T", e.GetCompression())
	return strings.TrimPrefix(t, "*enc21pb.CompressiveEncoding_")
}
