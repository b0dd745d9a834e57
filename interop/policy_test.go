package interop

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/writer"
)

// columnEncodings lists, per physical column, "cell: encoding" of its pages.
func columnEncodings(t *testing.T, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range filePages(t, path) {
		if prev, ok := out[p.column]; ok {
			out[p.column] = prev + " | " + p.encoding
		} else {
			out[p.column] = p.encoding
		}
	}
	return out
}

// TestPolicyLanceMatchesPylance: with the lance policy, planar chooses the
// same cells and encoding trees as pylance 14's 2.3 writer for the flat
// corpus (every fixed-width type under every null pattern and value shape)
// and the nested corpus. Differences are failures unless listed, with the
// reason, in knownPolicyColumnDiffs.
func TestPolicyLanceMatchesPylance(t *testing.T) {
	py := python(t)
	mem := memory.NewGoAllocator()
	dir := t.TempDir()
	// pylance 14 gives columns below a fixed-size list of structs the item
	// count as their length, so it cannot read them together with other
	// columns (even in its own files): each gets a file of its own.
	var nested, fslStruct []corpus.NestedCase
	for _, c := range corpus.NestedWritable(1500) {
		if strings.HasPrefix(c.Name(), "fsl_struct") {
			fslStruct = append(fslStruct, c)
		} else {
			nested = append(nested, c)
		}
	}
	sets := map[string]arrow.RecordBatch{
		"flat":   corpus.Record(mem, corpus.Flat(5000), 11),
		"nested": corpus.NestedRecord(mem, nested, 21),
	}
	for _, c := range fslStruct {
		sets[c.Name()] = corpus.NestedRecord(mem, []corpus.NestedCase{c}, 21)
	}
	var datasets []dataset
	var names []string
	for name, rec := range sets {
		ds := dataset{Arrow: filepath.Join(dir, name+".arrow")}
		writeIPC(t, ds.Arrow, []arrow.RecordBatch{rec})
		p := filepath.Join(dir, name+".planar.lance")
		writePlanar(t, p, []arrow.RecordBatch{rec}, writer.WithPolicy(selector.PolicyLance))
		ds.Planar = []fileSpec{{File: p, Format: "2.3"}}
		ds.Pylance = []pylanceSpec{{File: filepath.Join(dir, name+".pylance.lance"), Version: "2.3"}}
		datasets = append(datasets, ds)
		names = append(names, name)
	}
	res := runCheck(t, py, dir, datasets)
	total, same := 0, 0
	for i, name := range names {
		if !res.Reads[i].OK {
			msg := strings.Join(res.Reads[i].Diffs, "; ")
			if res.Reads[i].Error != nil {
				msg += *res.Reads[i].Error
			}
			t.Errorf("%s: pylance could not read planar's file: %s", name, msg)
		}
		w := res.Writes[i]
		if !w.OK {
			t.Errorf("%s: pylance write failed: %s", name, *w.Error)
			continue
		}
		pl, yl := columnEncodings(t, datasets[i].Planar[0].File), columnEncodings(t, w.File)
		for col, want := range yl {
			total++
			got := pl[col]
			if got == want {
				same++
				continue
			}
			if why, ok := knownPolicyColumnDiff(got, want); ok {
				t.Logf("%s: known difference (%s): planar %s, pylance %s", col, why, got, want)
				continue
			}
			t.Errorf("%s: lance policy %s, pylance %s", col, got, want)
		}
	}
	t.Logf("lance policy vs pylance 2.3: %d of %d columns with identical cells and encoding trees", same, total)
}

// knownPolicyColumnDiff recognises, from the two encodings, the differences
// the lance policy does not reproduce yet, and says why.
func knownPolicyColumnDiff(planar, pylance string) (string, bool) {
	switch {
	case strings.Contains(pylance, "rle(bitpack") || strings.Contains(planar, "rle(bitpack") ||
		strings.Contains(pylance, ",bitpack8(w=") || strings.Contains(planar, ",bitpack8(w="):
		return "composite RLE (bit-packed run values or lengths) against plain RLE or bit packing: Lance measures the encoded sizes, planar estimates them, and they differ near the tie", true
	case strings.Contains(planar, "dict=") != strings.Contains(pylance, "dict="):
		return "Lance's sample-based dictionary budget differs from planar's exact count near the threshold", true
	}
	return "", false
}
