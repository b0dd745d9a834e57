// Package reader reads Lance files (storage 2.1, 2.2 and 2.3): every page
// form planar writes and those Lance's own writer produces. Start with
// OpenPath (or Open over any io.ReaderAt), then read:
//
//   - File.NewRecordReader: a stream of record batches, with WithColumns
//     (top-level fields), WithRowRange and WithBatchRows;
//   - File.ReadAll, ReadRange: rows into one batch;
//   - File.Take, TakeColumns: rows by number, in any order;
//   - File.Schema, NumRows, Version, Pages: what the file holds and how
//     each page is encoded; IOStats: requests and bytes read.
//
// Errors wrap ErrCorrupt (the bytes are not what they claim; ErrNotLance
// when they are no Lance file at all, with a word on what they look like)
// or ErrUnsupported (well-formed content planar does not decode;
// ErrUnsupportedVersion), apart from ErrOutOfRange for rows outside the file
// and the errors of the caller's io.ReaderAt. The reader checks what it
// reads (buffer ranges inside the file, counts consistent, encodings allowed
// where they appear), never panics on any input bytes, and allocates no
// more than the file's size or the rows asked for warrant.
//
// Internally, every read (ReadAll, ReadRange, the stream, Take) goes
// through one pipeline (read.go readRuns, cell.go): a leaf column's rows
// are cut into element windows per page, each page's windows are read by
// the reader of its cell (sparse, dense chunked or zipped, constant, or a
// page decoded whole), and the leaf's arrays are joined once; the leaves of
// a field are then assembled into its Arrow array. Dense pages, whether they
// arrived as pb21 metadata (lance.encodings21.PageLayout) or as planar
// metadata (lance.encodings23.PlanarLayout), are normalized into one
// description and decoded into levels plus visible values; sparse planar
// pages are decoded straight into per-layer structure. Either way every
// page ends as the same per-layer structure (structural.LayerData) and leaf
// array.
//
// Sparse pages are read by row window: the first read of a page loads its
// structural buffers and its value codec's addressing data (offset index,
// chunk words, dictionary indices and item offsets) once and caches the
// decoded structure in the File; every read then fetches only the value
// bytes of the rows it asks for (a row with no leaf value reads none).
//
// Dense chunked and zipped pages are read by row window too when a read
// covers part of a page: the chunk words, the chunked repetition index and
// the dictionary are loaded once per page and cached in the File; a read
// then fetches and decodes only the chunks holding its rows (chunked pages
// with lists but no repetition index are decoded whole), or only the
// records of its rows (zipped pages: by stride, or through the repetition
// index entries of the rows). A Take plans the byte ranges of all its rows
// first and reads them with nearby ranges coalesced; each chunk is fetched
// and decoded once per Take, and the rows a Take asks of one dense page are
// joined into one array.
//
// File.NewRecordReader streams rows as record batches of a chosen size
// (WithBatchRows), of chosen top-level fields (WithColumns) and rows
// (WithRowRange): an arrow-go array.RecordReader whose memory is a batch and
// the pages it spans, since every window-read page kind decodes only the
// batch's rows and whole-decoded pages are dropped once passed.
// ReadAll is its single batch.
//
// Allocations are bounded by the file's size or by the rows a read asks for:
// counts that size an allocation must be backed by the page's bytes (beyond
// a fixed allowance), and pages that store no values (constant and all-null
// pages) are decoded only for the rows a read asks for.
package reader
