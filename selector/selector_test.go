package selector

import "testing"

func TestChooseRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		page Page
		want ValueCodec
		str  Structure
	}{
		{"flat all null", Page{SingleNullable: true, NumVisible: 9, AllNull: true}, None, Dense},
		{"nested all null", Page{NumVisible: 9, AllNull: true}, SparseNone, Sparse},
		{"no visible values", Page{NumVisible: 0}, SparseNone, Sparse},
		{"trivial constant", Page{Degenerate: true, NumVisible: 9, Scalar: []byte{1}, NullFree: true}, Constant, Dense},
		{"structured constant", Page{NumVisible: 9, Scalar: []byte{1}, NullFree: true}, SparseConstant, Sparse},
		{"narrow", Page{Degenerate: true, NumVisible: 9, MaxValueBytes: 8, CanZip: true}, Chunked, Dense},
		{"wide", Page{NumVisible: 9, MaxValueBytes: 256, CanZip: true}, Zipped, Dense},
		{"wide but not zippable", Page{NumVisible: 9, MaxValueBytes: 4096}, Chunked, Dense},
		{"just under wide", Page{NumVisible: 9, MaxValueBytes: 255, CanZip: true}, Chunked, Dense},
	} {
		p := Choose(tc.page, Options{})
		if p.Values != tc.want || p.Structure != tc.str {
			t.Errorf("%s: got %v x %v, want %v x %v", tc.name, p.Structure, p.Values, tc.str, tc.want)
		}
		if p.Reason == "" {
			t.Errorf("%s: no reason", tc.name)
		}
		// Canonicality: dense constant / none only with trivial structure.
		if p.Structure == Dense && (p.Values == Constant && !tc.page.Degenerate || p.Values == None && !tc.page.SingleNullable) {
			t.Errorf("%s: dense %v with non-trivial structure", tc.name, p.Values)
		}
	}
}
