// Package structural implements the structural plane of a planar page: how
// rows map to leaf value slots, in both of its forms.
//
// The dense form is repetition and definition levels with their layer kinds
// (Lance's RepDefLayer): BuildDense makes them from Arrow arrays for the
// writer and UnravelPath turns them back into per-layer structure
// (LayerData: validity, list offsets, fixed-size-list dimensions) for the
// reader.
//
// The sparse form is Lance 14's SparseStructure: per layer a validity set
// (the null or the valid positions), list layers their non-empty positions
// and child counts, each a block-encoded u64 sequence. BuildSparse encodes
// LayerData into it, choosing polarity and sequence codecs exactly as Lance
// 14 does (so the same structure gives the same descriptors and bytes);
// ReadSparseIndex reads it back as a SparseIndex, checking every invariant
// (errors wrap ErrCorruptSparse): the position sets as stored, expanded to
// LayerData one window of rows at a time, with the rank of each leaf slot
// among the stored values, so a read of a few rows costs the page's stored
// positions, not its slots; ReadSparse is the expansion of the whole page.
// Positions (Materialized) is the set of leaf slots a sparse page stores
// values for, as the writer computes it.
//
// A page of a list of leaves (alone, or a struct's field) has its sparse
// layers read from its arrays (ListLayers), not unraveled from levels; when its levels are over Lance's
// mini-block budget (so a 2.3 page is stored sparse), ListShell gives what
// BuildDense gives but the levels, which are then never built.
package structural
