// Package values implements the value plane of a planar page: how the visible
// leaf values of a page are stored (chunked, zipped, constant or none), and the
// compressive codecs (Flat, bit packing, RLE, General, FSST, ...) that turn a
// block of values into bytes and back.
//
// Encoders are append-style: they append to a caller-owned buffer and return
// the extended slice, so callers can reuse memory across pages. Decoders
// validate every length, count and width before using it and return errors
// wrapping ErrCorrupt on bad input; they never panic.
//
// The rooms: codec.go holds the Codec interface, the Profile the estimates
// read and shared helpers; each codec family has its file, with its codec
// type (name, estimate, encoding, append) and its kernels: flat.go,
// bitpack.go (inline and out-of-line bit packing, FastLanes in fastlanes.go),
// rle.go, bss.go, general.go (LZ4/Zstd around another codec), variable.go,
// fsst.go, fslrows.go (fixed-size lists), packed.go (packed structs) and
// arith.go (constant, range and delta, stored in metadata). decode.go
// dispatches a CompressiveEncoding to the decoders; chunked.go and zipped.go
// are the chunked and zipped value cells' framing; levels.go runs a dense
// page's level streams through the codec the selector chose for them and
// reads them back.
package values
