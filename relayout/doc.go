// Package relayout re-expresses a Lance file in another format version (2.2
// or 2.3) by rewriting only its metadata.
//
// Every dense planar (2.3) cell is a metadata-only re-expression of a pb21
// (2.2) page (internal/format's PlanarFromPB21 and PB21FromPlanar; FORMAT.md
// §2). A conversion therefore copies the file's data region verbatim, so no
// page buffer, global buffer or the schema moves, and writes new column
// metadata (the page descriptions), offset tables and footer after it. Pages
// already in the target form keep their description bytes, and a column
// none of whose pages changes keeps its metadata bytes.
//
// A page has a counterpart in the target only when its description, once
// re-expressed, is accepted by the target version's grammar as Lance 14
// checks it (lance-file versions/v2_2 and v2_3 reader.rs; grammar.go): 2.3
// sparse cells (and so the indexed value codec), 2.3-only codec trees in
// 2.2 (Range and Delta, generic variable-width offsets, RLE other than flat
// values with u8 run lengths), and in 2.3 the u16-framed mini-block pages of
// 2.1, constant pages with level buffers, blob v1 and interim sparse pages
// have none. Such a page fails the conversion with ErrNoCounterpart naming
// column and page, unless Options.Reencode is set: then only those pages are
// decoded through reader/ and encoded again through writer/ in the target
// format (the selector chooses their form). The data region is then rebuilt
// without their old bytes: every other buffer is copied byte for byte, in
// its order, but moves (Report.Moved).
//
// The package sits on reader/ (validation, typed errors, decoding for
// re-encoding) and internal/format; it uses writer/ only to re-encode.
// ConvertPath writes atomically: a temporary file next to the destination,
// renamed into place when complete, removed on any error.
package relayout
