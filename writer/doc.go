// Package writer writes Arrow record batches as a Lance file. It orchestrates:
// batches are buffered per column and cut into pages; each page is measured
// (stats), planned (selector), encoded as a structural plane (structural) and
// a value plane (values), and the page buffers, column metadata, schema,
// offset tables and footer are laid out exactly as Lance's container requires.
//
// Three output formats exist (WithFormat): Format2_2 (the default, as in
// Lance and LanceDB; footer 2.2 and the pb21 page metadata every current
// Lance reads, LanceDB 0.40's Lance 13 included), Format2_3 (footer 2.3 and
// the planar page metadata lance.encodings23.PlanarLayout, read by pylance
// 14 only and unstable there) and Format2_3Interim (footer 2.3 with pb21
// metadata, the grammar of the unstable 2.3 before the planar rework). The page buffers of dense pages are byte for
// byte the same in every format; only the metadata differs.
package writer
