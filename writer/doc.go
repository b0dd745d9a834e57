// Package writer writes Arrow record batches as a Lance file.
//
// To use it: New(w, schema, options...) over any io.Writer, WriteBatch for
// each batch (a bad batch is refused with ErrInvalidBatch, naming the
// column, and the writer stays usable), Close, then Report for what was
// chosen for every page and why. The options a user sets: WithFormat (2.2,
// the default, read by LanceDB 0.40 and pylance 14; or 2.3),
// WithColumnOptions (per-column encoding knobs, the selector.Key* keys, also
// taken from Arrow field metadata), WithPolicy (selector.PolicyCost, the
// default, or selector.PolicyLance: what pylance writes), WithMaxPageBytes
// and WithConcurrency. CheckBatch runs WriteBatch's checks without a writer.
// For tables (directories LanceDB opens), use package dataset.
//
// Inside, the writer orchestrates:
// batches are buffered per column and cut into pages; each page is measured
// (stats), planned (selector), encoded as a structural plane (structural) and
// a value plane (values), and the page buffers, column metadata, schema,
// offset tables and footer are laid out exactly as Lance's container requires.
// Where a choice needs an encoding to measure, the writer runs the trials
// the selector lists (selector.Ladder, selector.Fallback) and keeps the one
// it picks.
//
// Three output formats exist (WithFormat): Format2_2 (the default, as in
// Lance and LanceDB; footer 2.2 and the pb21 page metadata every current
// Lance reads, LanceDB 0.40's Lance 13 included), Format2_3 (footer 2.3 and
// the planar page metadata lance.encodings23.PlanarLayout, read by pylance
// 14 only and unstable there) and Format2_3Interim (footer 2.3 with pb21
// metadata, the grammar of the unstable 2.3 before the planar rework). The page buffers of dense pages are byte for
// byte the same in every format; only the metadata differs.
package writer
