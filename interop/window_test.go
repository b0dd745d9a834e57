package interop

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/writer"
)

// TestWindowChunks: the performance classes written under the cost policy,
// which compresses some pages in large chunks ("windows" of up to 2^15
// values and 64 KiB of raw values, general compression over plain,
// byte-stream-split or FSST-coded values), are read back equal by pylance
// (whole file, row ranges, takes) and by planar, in 2.2 and 2.3. The test
// also checks that windows were written at all: chunks of more than 4096
// values, General over FSST and Zstd-compressed definition levels.
func TestWindowChunks(t *testing.T) {
	py := python(t)
	dir := t.TempDir()
	mem := memory.NewGoAllocator()
	var datasets []dataset
	var files []string
	classes := corpus.PerfClasses(0.25)
	// Windows shrunk where the levels of a list page are skewed.
	classes = append(classes, corpus.PerfClass{Name: "skewed-lists", Record: func(mem memory.Allocator, seed uint64) arrow.RecordBatch {
		return corpus.SkewedLists(mem, 300_000, 40, seed)
	}})
	for _, pc := range classes {
		if strings.HasPrefix(pc.Name, "fsl768") {
			continue // zipped: no chunks
		}
		rec := pc.Record(mem, 3)
		defer rec.Release()
		ds := dataset{Arrow: filepath.Join(dir, pc.Name+".arrow")}
		writeIPC(t, ds.Arrow, []arrow.RecordBatch{rec})
		for _, f := range []writer.Format{writer.Format2_2, writer.Format2_3} {
			p := filepath.Join(dir, fmt.Sprintf("%s.planar-%s.lance", pc.Name, f))
			opts := []writer.Option{writer.WithFormat(f)}
			if pc.Name == "urls" {
				// String windows are opt-in (selector.KeyStringWindows).
				opts = append(opts, writer.WithColumnOptions(rec.Schema().Field(0).Name, map[string]string{selector.KeyStringWindows: "on"}))
			}
			writePlanar(t, p, []arrow.RecordBatch{rec}, opts...)
			ds.Planar = append(ds.Planar, fileSpec{File: p, Format: f.String()})
			files = append(files, p)
			checkPlanarRead(t, p, rec)
		}
		datasets = append(datasets, ds)
	}
	// The forms this test is about must occur.
	var bigChunks, zstdFsst, zstdLevels bool
	for _, p := range files {
		for _, fp := range filePages(t, p) {
			if strings.Contains(fp.encoding, "general(zstd,fsst(") {
				zstdFsst = true
			}
			if strings.Contains(fp.encoding, "def=general(zstd,") {
				zstdLevels = true
			}
		}
		if maxChunkValues(t, p) > 4096 {
			bigChunks = true
		}
	}
	if !bigChunks || !zstdFsst || !zstdLevels {
		t.Errorf("windows not exercised: chunks over 4096 values %v, general over fsst %v, zstd levels %v", bigChunks, zstdFsst, zstdLevels)
	}
	res := runCheck(t, py, dir, datasets)
	t.Logf("checked against pylance %s", res.Pylance)
	got := 0
	for _, r := range res.Reads {
		got++
		if !r.OK {
			msg := strings.Join(r.Diffs, "; ")
			if r.Error != nil {
				msg = *r.Error
			}
			t.Errorf("%s: pylance read failed: %s", filepath.Base(r.File), msg)
			continue
		}
		t.Logf("%s: equal (%v)", filepath.Base(r.File), r.Encodings)
	}
	if want := 2 * len(datasets); got != want {
		t.Errorf("got %d read results, want %d", got, want)
	}
}

// maxChunkValues is the largest value count a non-final chunk of a dense
// chunked page of the file declares (u32 chunk words: low 4 bits log2).
func maxChunkValues(t *testing.T, path string) int {
	t.Helper()
	f, err := reader.OpenPath(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer f.Close()
	most := 0
	for c := 0; c < f.NumColumns(); c++ {
		for _, p := range f.Pages(c) {
			if !strings.HasPrefix(p.Cell, "dense x chunked") || len(p.Buffers) == 0 {
				continue
			}
			meta, err := f.ReadBuffer(p.Buffers[0])
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i+4 <= len(meta)-4; i += 4 { // the last chunk may record 0
				most = max(most, 1<<(binary.LittleEndian.Uint32(meta[i:])&0xF))
			}
		}
	}
	return most
}
