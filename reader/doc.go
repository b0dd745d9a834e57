// Package reader reads Lance v2.1, 2.2 and 2.3 files: the container, the
// schema, and the pages of every form planar writes and the forms Lance's own
// writer produces for the supported types. Every page description, whether it
// arrived as pb21 metadata (lance.encodings21.PageLayout) or as planar
// metadata (lance.encodings23.PlanarLayout), is normalized into one page
// model before decoding.
//
// The reader validates what it reads (buffer ranges inside the file, counts
// consistent, encodings allowed where they appear) and returns errors wrapping
// ErrCorrupt or ErrUnsupported; it does not panic on any input bytes.
package reader
