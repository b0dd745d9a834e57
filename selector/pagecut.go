package selector

import (
	"math"
	"slices"
)

// Page cuts at null runs (storage 2.2).
//
// In a dense page every null row of a fixed-width column still holds its
// payload (a null 768-d float32 vector stores 3 KiB of zeros). A page whose
// rows are all null stores none: it is a constant all-null page, a few
// dozen bytes of metadata. So a run of null rows cut into a page of its own
// saves the run's payload, and costs the pages the cut adds: the null page
// and, when the run sits inside what would have been one page, the page
// after it. Each page costs its metadata and the reader's fixed work for a
// page (open it, schedule its buffers, set up its decoder; a take pays it
// per page touched).
//
// The choice, per batch of rows: the fewest stored bytes such that reading
// the column so far costs at most MaxCutReadRatio times reading it dense
// (every null row's payload inline, as Lance writes 2.2). Cutting the longest runs
// first saves the most bytes per page added, so the cut runs are the
// longest ones: every null run of at least some length.

// PageMetaBytes is what one more page adds to a 2.2 file: its entry in the
// column metadata (encoding, buffer offsets and sizes, row count), 67 bytes
// measured on constant all-null and one-row zipped pages of 768-d vectors.
const PageMetaBytes = 72

// PageReadWork is a reader's fixed work for one page, in bytes of plain
// values read in the same time: pylance 14.0.2 reads a 2.2 file of
// fixed-size lists at about 0.58 ns a byte and spends about 7.5 µs more
// per page (200k rows of 768-d vectors, half null at random, one page per
// run: 936 ms against 369 ms dense).
const PageReadWork = 13 << 10

// MaxCutReadRatio bounds the read work of a column whose null runs are cut
// into pages, relative to the same rows read dense.
const MaxCutReadRatio = 1.5

// MinNullRunPayload is the smallest payload of a null row for which the
// writer looks for null runs at all: below it (narrow columns) pages stay
// cut by size alone, as Lance cuts them.
const MinNullRunPayload = 64

// CutsNullRuns reports whether a column whose null rows each store rowBytes
// of payload has its null runs cut into pages of their own: not under the
// lance policy, nor with a forced structural encoding, nor for narrow
// values.
func CutsNullRuns(rowBytes int, o Options) bool {
	return o.Policy != PolicyLance && o.Structural == StructuralAuto && rowBytes >= MinNullRunPayload
}

// CutWork is the read work of a column's rows so far: Dense as if written
// dense, Cut as cut (stored bytes plus PageReadWork a page). A column's
// first batch starts from NewCutWork.
type CutWork struct{ Dense, Cut float64 }

// NewCutWork is the work of a column before its first row: one page.
func NewCutWork() CutWork { return CutWork{Cut: PageReadWork} }

// MinNullRun returns, for a batch of rows rows whose null runs have the
// given lengths (in any order; it sorts them), the shortest null run that
// gets a page of its own (math.MaxInt64: none), and the column's read work
// with the batch added. A cut run must at least pay for the metadata of the
// pages it adds, and the cuts together keep the column's read work, from
// its first row to this batch's last, within MaxCutReadRatio of its dense
// read: so the choice depends on the rows, not on how they were split into
// batches (a keyed backfill writes each null run as a batch of its own).
func MinNullRun(runs []int64, rows int64, rowBytes int, o Options, so CutWork) (int64, CutWork) {
	rb := float64(rowBytes)
	dense := float64(rows) * rb
	cut := int64(math.MaxInt64)
	stored, pages := dense, 0.0
	if CutsNullRuns(rowBytes, o) && len(runs) > 0 {
		budget := MaxCutReadRatio*(so.Dense+dense) - so.Cut
		slices.Sort(runs)
		for i := len(runs) - 1; i >= 0; {
			l := runs[i]
			if float64(l)*rb < 2*PageMetaBytes {
				break
			}
			// Every run of length l, together.
			j := i
			for j >= 0 && runs[j] == l {
				j--
			}
			k := float64(i - j)
			s, p := stored-k*float64(l)*rb, pages+2*k
			if s+p*PageReadWork > budget {
				break
			}
			stored, pages, cut = s, p, l
			i = j
		}
	}
	return cut, CutWork{Dense: so.Dense + dense, Cut: so.Cut + stored + pages*PageReadWork}
}
