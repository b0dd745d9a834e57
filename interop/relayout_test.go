package interop

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/relayout"
	"github.com/planarlance/planar/writer"
)

// relayoutCount tallies one direction of TestRelayout.
type relayoutCount struct {
	files, pages, identical, reencoded int
	bytesIdentical, bytesReencoded     uint64
}

func (c *relayoutCount) add(o relayoutCount) {
	c.files += o.files
	c.pages += o.pages
	c.identical += o.identical
	c.reencoded += o.reencoded
	c.bytesIdentical += o.bytesIdentical
	c.bytesReencoded += o.bytesReencoded
}

// relayoutPages compares every page of src with its image in dst after
// one or more conversions (their reports in order): a page no conversion
// re-encoded must have the same buffers in both files, at the same positions
// unless a conversion moved them.
func relayoutPages(t *testing.T, src, dst string, reps ...relayout.Report) relayoutCount {
	t.Helper()
	fs, err := reader.OpenPath(src)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	fd, err := reader.OpenPath(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	cnt := relayoutCount{files: 1}
	// Buffers keep their positions unless a step re-encoded pages (its
	// data region is then rebuilt).
	moved := false
	for _, rep := range reps {
		moved = moved || rep.Moved
	}
	for c := 0; c < fs.NumColumns(); c++ {
		ps, pd := fs.Pages(c), fd.Pages(c)
		// at[i] is the first page of source page i's image, intact[i]
		// whether it is one page no step re-encoded.
		at := make([]int, len(ps)+1)
		intact := make([]bool, len(ps))
		for i := range at {
			at[i] = i
		}
		for i := range intact {
			intact[i] = true
		}
		for _, rep := range reps {
			var start []int // per page of this step's source: its first output page
			var reenc []bool
			n := 0
			for _, p := range rep.Pages {
				if p.Index == c {
					start = append(start, n)
					reenc = append(reenc, p.Action == relayout.Reencoded)
					n += p.NewPages
				}
			}
			start = append(start, n)
			if len(start) <= at[len(ps)] {
				t.Fatalf("%s: the reports do not cover the pages", fs.ColumnPath(c))
			}
			for i := range intact {
				if at[i+1]-at[i] != 1 || reenc[at[i]] {
					intact[i] = false
				}
			}
			for i := range at {
				at[i] = start[at[i]]
			}
		}
		if at[len(ps)] != len(pd) {
			t.Errorf("%s: %d pages in the output, expected %d", fs.ColumnPath(c), len(pd), at[len(ps)])
			continue
		}
		for i, p := range ps {
			var size uint64
			for _, r := range p.Buffers {
				size += r.Size
			}
			cnt.pages++
			if !intact[i] {
				cnt.reencoded++
				cnt.bytesReencoded += size
				continue
			}
			q := pd[at[i]]
			same := len(q.Buffers) == len(p.Buffers)
			for b, r := range p.Buffers {
				if !same {
					break
				}
				x, err1 := fs.ReadBuffer(r)
				y, err2 := fd.ReadBuffer(q.Buffers[b])
				same = err1 == nil && err2 == nil && bytes.Equal(x, y) && (moved || r == q.Buffers[b])
			}
			if !same {
				t.Errorf("%s page %d: buffers differ or moved", fs.ColumnPath(c), i)
				continue
			}
			cnt.identical++
			cnt.bytesIdentical += size
		}
	}
	return cnt
}

// pylanceReadsEqual has pylance read a file and compares it with rec.
func pylanceReadsEqual(t *testing.T, w *pyWorker, path string, rec arrow.RecordBatch) {
	t.Helper()
	out := path + ".py"
	r := w.call(map[string]any{"op": "read", "file": path, "out": out})
	if !r.OK {
		t.Errorf("pylance cannot read %s: %s: %s", filepath.Base(path), r.Stage, r.Error)
		return
	}
	schema, got, err := readStream(out + ".all.arrows")
	if err != nil {
		t.Fatal(err)
	}
	want := make([][]arrow.Array, rec.NumCols())
	names := make([]string, rec.NumCols())
	for i := range want {
		want[i] = []arrow.Array{rec.Column(i)}
		names[i] = rec.ColumnName(i)
	}
	if diffs := compareTo(schema, got, want, names, seq(int(rec.NumRows()))); len(diffs) > 0 {
		t.Errorf("pylance reads %s differently from the data: %s", filepath.Base(path), strings.Join(firstN(diffs, 5), "; "))
	}
}

func convertFile(t *testing.T, src, dst, target string, reencode bool) relayout.Report {
	t.Helper()
	rep, err := relayout.ConvertPath(src, dst, relayout.Options{Target: target, Reencode: reencode})
	if err != nil {
		t.Fatalf("%s -> %s: %v", filepath.Base(src), target, err)
	}
	t.Logf("%s -> %s: %d -> %d bytes; %d pages kept, %d re-expressed, %d re-encoded (%d -> %d bytes)", filepath.Base(src), target,
		rep.InputSize, rep.OutputSize, rep.Kept, rep.Reexpressed, rep.Reencoded, rep.BytesReencoded, rep.BytesWritten)
	return rep
}

// TestRelayout is issue 13's acceptance test of the metadata-only
// conversion, against pylance 14.0.2, over the flat and nested corpora the
// writer tests use (and the sparse corpus for pages without counterpart).
func TestRelayout(t *testing.T) {
	py := python(t)
	w, err := startWorker(py)
	if err != nil {
		t.Fatal(err)
	}
	defer w.stop()
	dir := t.TempDir()
	mem := memory.NewGoAllocator()
	flat := corpus.Record(mem, corpus.Flat(5000), 7)
	defer flat.Release()
	nested := corpus.NestedRecord(mem, corpus.NestedWritable(1500), 7)
	defer nested.Release()
	recs := map[string]arrow.RecordBatch{"flat": flat, "nested": nested}
	names := []string{"flat", "nested"}
	var d1, d2, d3 relayoutCount
	var whole3, files3, denseWhole int

	// 1. planar 2.3 -> 2.2: buffers of every re-expressed page identical;
	// pylance reads the 2.2 file equal to the data.
	t.Run("planar23to22", func(t *testing.T) {
		for _, name := range names {
			src := filepath.Join(dir, name+"-planar23.lance")
			writePlanar(t, src, []arrow.RecordBatch{recs[name]}, writer.WithMaxPageBytes(64<<10))
			dst := filepath.Join(dir, name+"-planar23-to22.lance")
			rep := convertFile(t, src, dst, relayout.V2_2, true)
			d1.add(relayoutPages(t, src, dst, rep))
			checkPlanarRead(t, dst, recs[name])
			pylanceReadsEqual(t, w, dst, recs[name])
			logReencoded(t, name, rep)
		}
	})

	// 2. pylance 2.2 -> 2.3: planar and pylance read the 2.3 file equal to
	// the data. 3. and back to 2.2: the original page bytes.
	t.Run("pylance22to23and back", func(t *testing.T) {
		for _, name := range names {
			ipcPath := filepath.Join(dir, name+".arrows")
			if err := writeStream(ipcPath, recs[name].Schema(), []arrow.RecordBatch{recs[name]}); err != nil {
				t.Fatal(err)
			}
			orig := filepath.Join(dir, name+"-pylance22.lance")
			if r := w.call(map[string]any{"op": "write", "ipc": ipcPath, "file": orig, "version": "2.2"}); !r.OK {
				t.Fatalf("pylance writes %s: %s: %s", name, r.Stage, r.Error)
			}
			to23 := filepath.Join(dir, name+"-pylance22-to23.lance")
			rep := convertFile(t, orig, to23, relayout.V2_3, true)
			d2.add(relayoutPages(t, orig, to23, rep))
			checkPlanarRead(t, to23, recs[name])
			pylanceReadsEqual(t, w, to23, recs[name])
			logReencoded(t, name, rep)

			back := filepath.Join(dir, name+"-pylance22-to23-to22.lance")
			rep3 := convertFile(t, to23, back, relayout.V2_2, true)
			// Compare with the original: the pages re-expressed both ways
			// hold the original buffers at the original positions.
			d3.add(relayoutPages(t, orig, back, rep, rep3))
			ob, _ := os.ReadFile(orig)
			bb, _ := os.ReadFile(back)
			files3++
			if bytes.Equal(ob, bb) {
				whole3++
			} else if rep.Reencoded == 0 && rep3.Reencoded == 0 {
				t.Errorf("%s: every page re-expressed both ways, yet the file differs from pylance's", name)
			}
			checkPlanarRead(t, back, recs[name])
			pylanceReadsEqual(t, w, back, recs[name])

			// The fields none of whose pages needed re-encoding, written
			// by pylance alone: 2.2 -> 2.3 -> 2.2 without Reencode gives
			// pylance's file back byte for byte.
			dense := withoutReencoded(recs[name], rep)
			defer dense.Release()
			ipcDense := filepath.Join(dir, name+"-dense.arrows")
			if err := writeStream(ipcDense, dense.Schema(), []arrow.RecordBatch{dense}); err != nil {
				t.Fatal(err)
			}
			origD := filepath.Join(dir, name+"-dense-pylance22.lance")
			if r := w.call(map[string]any{"op": "write", "ipc": ipcDense, "file": origD, "version": "2.2"}); !r.OK {
				t.Fatalf("pylance writes %s: %s: %s", name, r.Stage, r.Error)
			}
			d23 := filepath.Join(dir, name+"-dense-to23.lance")
			repD := convertFile(t, origD, d23, relayout.V2_3, false)
			pylanceReadsEqual(t, w, d23, dense)
			backD := filepath.Join(dir, name+"-dense-to23-to22.lance")
			convertFile(t, d23, backD, relayout.V2_2, false)
			ob, _ = os.ReadFile(origD)
			bb, _ = os.ReadFile(backD)
			if !bytes.Equal(ob, bb) {
				k := 0
				for k < len(ob) && k < len(bb) && ob[k] == bb[k] {
					k++
				}
				t.Errorf("%s: %d dense fields: 2.2 -> 2.3 -> 2.2 is not pylance's file (%d and %d bytes, first difference at %d)", name, dense.NumCols(), len(ob), len(bb), k)
				os.WriteFile("/tmp/relayout-orig.lance", ob, 0o644)
				os.WriteFile("/tmp/relayout-back.lance", bb, 0o644)
			} else {
				denseWhole++
				t.Logf("%s: %d fields, %d pages: 2.2 -> 2.3 -> 2.2 gives pylance's %d-byte file back byte for byte", name, dense.NumCols(), len(repD.Pages), len(ob))
			}
		}
	})

	// 4. Sparse and indexed pages have no 2.2 counterpart: the error names
	// column and page; with Reencode pylance reads the 2.2 file.
	t.Run("sparse", func(t *testing.T) {
		cells := map[string]int{}
		for _, c := range corpus.Sparse(20000, 500, 20000) {
			rec := c.Record(mem, 11)
			src := filepath.Join(dir, c.Name+"-sparse23.lance")
			writePlanar(t, src, []arrow.RecordBatch{rec})
			f, err := reader.OpenPath(src)
			if err != nil {
				t.Fatal(err)
			}
			sparse := -1
			for i, p := range f.Pages(0) {
				cells[p.Cell]++
				if sparse < 0 && strings.HasPrefix(p.Cell, "sparse") {
					sparse = i
				}
			}
			f.Close()
			dst := filepath.Join(dir, c.Name+"-sparse23-to22.lance")
			_, err = relayout.ConvertPath(src, dst, relayout.Options{Target: relayout.V2_2})
			switch {
			case sparse >= 0 && !errors.Is(err, relayout.ErrNoCounterpart):
				t.Errorf("%s: sparse page %d converted without Reencode: %v", c.Name, sparse, err)
			case err != nil && !errors.Is(err, relayout.ErrNoCounterpart):
				t.Errorf("%s: %v", c.Name, err)
			case err != nil && (!strings.Contains(err.Error(), `column "`+c.Name) || !strings.Contains(err.Error(), `", page `)):
				// A sparse page, or a dense one with a 2.3-only codec.
				t.Errorf("%s: error does not name column and page: %v", c.Name, err)
			}
			if _, serr := os.Stat(dst); err != nil && !os.IsNotExist(serr) {
				t.Errorf("%s: a failed conversion left %s", c.Name, dst)
			}
			rep := convertFile(t, src, dst, relayout.V2_2, true)
			if sparse >= 0 && rep.Reencoded == 0 {
				t.Errorf("%s: no page re-encoded", c.Name)
			}
			checkPlanarRead(t, dst, rec)
			pylanceReadsEqual(t, w, dst, rec)
			rec.Release()
		}
		t.Logf("source cells: %v", cells)
		if cells["sparse x indexed"] == 0 || cells["sparse x none"] == 0 || cells["sparse x zipped"] == 0 {
			t.Errorf("the sparse corpus no longer reaches every sparse cell: %v", cells)
		}
	})
	// 2.1's u16-framed mini-block pages have no counterpart in 2.2 or 2.3
	// (the chunk headers inside the data buffer hold u16 sizes).
	t.Run("u16", func(t *testing.T) {
		ipcPath := filepath.Join(dir, "flat.arrows")
		orig := filepath.Join(dir, "flat-pylance21.lance")
		if r := w.call(map[string]any{"op": "write", "ipc": ipcPath, "file": orig, "version": "2.1"}); !r.OK {
			t.Fatalf("pylance writes 2.1: %s: %s", r.Stage, r.Error)
		}
		for _, target := range []string{relayout.V2_2, relayout.V2_3} {
			dst := filepath.Join(dir, "flat-pylance21-to"+target+".lance")
			_, err := relayout.ConvertPath(orig, dst, relayout.Options{Target: target})
			if !errors.Is(err, relayout.ErrNoCounterpart) || !strings.Contains(err.Error(), "u16") {
				t.Fatalf("2.1 -> %s: %v", target, err)
			}
			rep := convertFile(t, orig, dst, target, true)
			u16 := 0
			for _, p := range rep.Pages {
				if p.From == "2.1 mini-block (u16 chunks)" {
					u16++
					if p.Action != relayout.Reencoded {
						t.Errorf("%s page %d: %s %s", p.Column, p.Page, p.From, p.Action)
					}
				}
			}
			if u16 == 0 {
				t.Fatalf("no u16-framed page in pylance's 2.1 file")
			}
			checkPlanarRead(t, dst, flat)
			pylanceReadsEqual(t, w, dst, flat)
		}
	})
	for _, d := range []struct {
		name string
		c    relayoutCount
	}{{"1 planar 2.3 -> 2.2", d1}, {"2 pylance 2.2 -> 2.3", d2}, {"3 -> back to 2.2", d3}} {
		t.Logf("%s: %d files, %d pages: %d identical (%d bytes), %d re-encoded (%d bytes)",
			d.name, d.c.files, d.c.pages, d.c.identical, d.c.bytesIdentical, d.c.reencoded, d.c.bytesReencoded)
	}
	t.Logf("3: %d of %d files byte-identical to pylance's original; %d of %d files of the fields without re-encoded pages", whole3, files3, denseWhole, files3)
}

func logReencoded(t *testing.T, name string, rep relayout.Report) {
	t.Helper()
	why := map[string]int{}
	for _, p := range rep.Pages {
		if p.Action == relayout.Reencoded {
			why[p.From+": "+p.Reason]++
		}
	}
	for k, n := range why {
		t.Logf("%s: %d pages re-encoded: %s", name, n, k)
	}
}

// withoutReencoded is rec without the top-level fields that have a
// re-encoded page in rep.
func withoutReencoded(rec arrow.RecordBatch, rep relayout.Report) arrow.RecordBatch {
	drop := map[string]bool{}
	for _, p := range rep.Pages {
		if p.Action == relayout.Reencoded {
			drop[strings.SplitN(p.Column, ".", 2)[0]] = true
		}
	}
	var fields []arrow.Field
	var cols []arrow.Array
	for i, f := range rec.Schema().Fields() {
		if !drop[f.Name] {
			fields = append(fields, f)
			cols = append(cols, rec.Column(i))
		}
	}
	return array.NewRecordBatch(arrow.NewSchema(fields, nil), cols, rec.NumRows())
}
