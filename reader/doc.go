// Package reader reads Lance v2.1, 2.2 and 2.3 files: the container, the
// schema, and the pages of every form planar writes and the forms Lance's own
// writer produces. Dense pages, whether they arrived as pb21 metadata
// (lance.encodings21.PageLayout) or as planar metadata
// (lance.encodings23.PlanarLayout), are normalized into one description and
// decoded into levels plus visible values; sparse planar pages are decoded
// straight into per-layer structure. Either way every page ends as the same
// per-layer structure (structural.LayerData) and leaf array, which are then
// assembled into the field's Arrow array.
//
// The reader validates what it reads (buffer ranges inside the file, counts
// consistent, encodings allowed where they appear) and returns errors wrapping
// ErrCorrupt or ErrUnsupported; it does not panic on any input bytes.
package reader
