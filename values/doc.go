// Package values implements the value plane of a planar page: how the visible
// leaf values of a page are stored (chunked, zipped, constant or none), and the
// compressive codecs (Flat, bit packing, RLE, General, FSST, ...) that turn a
// block of values into bytes and back.
//
// Encoders are append-style: they append to a caller-owned buffer and return
// the extended slice, so callers can reuse memory across pages. Decoders
// validate every length, count and width before using it and return errors
// wrapping ErrCorrupt on bad input; they never panic.
package values
