package reader

import (
	"encoding/binary"
	"fmt"

	"github.com/planarlance/planar/proto/enc23pb"
	"github.com/planarlance/planar/values"
)

// decodeIndexed decodes the indexed value plane of a sparse page (Lance
// 2.3's sparse x indexed cell): one u32 index per leaf slot, null slots
// included, under a block codec (buffer 0, empty when the codec is
// metadata-only), and the dictionary items as zipped variable-width values
// without control words (buffer 1) addressed by an offset index of
// NumItems+1 entries of 1, 2, 4 or 8 bytes (buffer 2). It returns the
// indices (32-bit values) and the items.
func decodeIndexed(ix *enc23pb.IndexedValues, bufs [][]byte, slots int) (values.Block, *values.Block, error) {
	idxEnc, items := ix.GetIndices(), ix.GetItems()
	if idxEnc == nil || items == nil {
		return values.Block{}, nil, fmt.Errorf("indexed values without indices or items: %w", ErrCorrupt)
	}
	if len(bufs) != 3 {
		return values.Block{}, nil, fmt.Errorf("indexed values with %d buffers, want 3: %w", len(bufs), ErrCorrupt)
	}
	if items.NumItems == 0 || items.NumItems > 0xFFFFFFFF || items.NumItems != items.NumVisibleItems || items.Levels != nil {
		return values.Block{}, nil, fmt.Errorf("indexed dictionary of %d items (%d visible, levels %v): %w", items.NumItems, items.NumVisibleItems, items.Levels != nil, ErrCorrupt)
	}
	a, ok := items.Addressing.(*enc23pb.ZippedValues_BitsPerOffset)
	if !ok || (a.BitsPerOffset != 32 && a.BitsPerOffset != 64) {
		return values.Block{}, nil, fmt.Errorf("indexed dictionary items not addressed by 32- or 64-bit lengths: %w", ErrCorrupt)
	}
	// The items: at least one length prefix each, so their count is bounded
	// by the item buffer.
	if items.NumItems > uint64(len(bufs[1])/int(a.BitsPerOffset/8)) {
		return values.Block{}, nil, fmt.Errorf("indexed dictionary of %d items in %d bytes: %w", items.NumItems, len(bufs[1]), ErrCorrupt)
	}
	n := int(items.NumItems)
	fz, err := format21Zipped(items)
	if err != nil {
		return values.Block{}, nil, err
	}
	zp, err := decodeZippedPage(fz, bufs[1:], n)
	if err != nil {
		return values.Block{}, nil, fmt.Errorf("indexed dictionary items: %w", err)
	}
	if !zp.vals.Variable() || zp.vals.N != n {
		return values.Block{}, nil, fmt.Errorf("indexed dictionary items decoded as %d %d-bit values: %w", zp.vals.N, zp.vals.Bits, ErrCorrupt)
	}
	dict := zp.vals

	// The indices.
	if values.HasPayload(idxEnc) != (len(bufs[0]) > 0) {
		return values.Block{}, nil, fmt.Errorf("indexed values: index payload of %d bytes for %s: %w", len(bufs[0]), values.EncodingName(idxEnc), ErrCorrupt)
	}
	var payload []byte
	if len(bufs[0]) > 0 {
		payload = bufs[0]
	}
	idx, err := values.DecodeBlock(idxEnc, payload, slots)
	if err != nil {
		return values.Block{}, nil, fmt.Errorf("indexed values indices: %w", err)
	}
	if idx.Bits != 32 || idx.N != slots || len(idx.Data) < 4*slots {
		return values.Block{}, nil, fmt.Errorf("indexed values indices decoded as %d %d-bit values, want %d u32: %w", idx.N, idx.Bits, slots, ErrCorrupt)
	}
	for i := 0; i < slots; i++ {
		if k := binary.LittleEndian.Uint32(idx.Data[4*i:]); uint64(k) >= items.NumItems {
			return values.Block{}, nil, fmt.Errorf("indexed values: slot %d names item %d of %d: %w", i, k, items.NumItems, ErrCorrupt)
		}
	}
	return idx, &dict, nil
}
