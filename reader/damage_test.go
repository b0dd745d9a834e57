package reader_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/planarlance/planar/internal/corpus"
	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/writer"
)

// DamageCampaign opens and reads every damaged variant of the given files
// and reports each error that wraps neither ErrCorrupt nor ErrUnsupported and
// each panic. It returns the number of variants tried.
func damageCampaign(t *testing.T, files map[string][]byte, perFile int) int {
	t.Helper()
	tried, bad := 0, 0
	for name, b := range files {
		labels, variants := corpus.Damage(b, perFile, uint64(len(name)))
		for i, v := range variants {
			tried++
			err, p := callNoPanic(func() error { return readDamaged(v) })
			what := fmt.Sprintf("%s, %s", name, labels[i])
			switch {
			case p != nil:
				bad++
				t.Errorf("%s: panic: %v", what, p)
			case err != nil && !errors.Is(err, reader.ErrCorrupt) && !errors.Is(err, reader.ErrUnsupported):
				bad++
				t.Errorf("%s: error wraps neither ErrCorrupt nor ErrUnsupported: %v", what, err)
			}
			if bad > 20 {
				t.Fatal("too many failures")
			}
		}
	}
	return tried
}

// readDamaged opens b and reads all of it, a range and a few rows.
func readDamaged(b []byte) error {
	f, err := reader.Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return err
	}
	for i := 0; i < f.NumColumns(); i++ {
		for _, p := range f.Pages(i) {
			for _, r := range p.Buffers {
				if _, err := f.ReadBuffer(r); err != nil {
					return err
				}
			}
		}
	}
	rec, err := f.ReadAll()
	if err != nil {
		return err
	}
	rec.Release()
	n := f.NumRows()
	if n == 0 {
		return nil
	}
	if rec, err = f.ReadRange(n/3, n-n/3); err != nil {
		return err
	}
	rec.Release()
	if rec, err = f.Take([]int64{n - 1, 0, n / 2}); err != nil {
		return err
	}
	rec.Release()
	return nil
}

// TestDamagedFiles: thousands of damaged variants of planar files of every
// format (flat, nested, dictionary, sparse, constant pages) fail with errors
// of the documented classes, and never panic.
func TestDamagedFiles(t *testing.T) {
	mem := memory.NewGoAllocator()
	files := map[string][]byte{}
	for _, ff := range formats {
		rec := corpus.Record(mem, corpus.Flat(60), 3)
		files["flat-"+ff.String()] = writeFile(t, rec, writer.WithFormat(ff), writer.WithMaxPageBytes(512))
		rec.Release()
	}
	for i, c := range corpus.NestedWritable(40) {
		if i%3 != 0 {
			continue
		}
		rec := corpus.NestedRecord(mem, []corpus.NestedCase{c}, uint64(i))
		ff := formats[i%len(formats)]
		files[fmt.Sprintf("nested-%s-%s", c.Name(), ff)] = writeFile(t, rec, writer.WithFormat(ff), writer.WithMaxPageBytes(256))
		rec.Release()
	}
	for name, b := range sparseFiles(t) {
		files["sparse-"+name] = b
	}
	for name, b := range hugeFiles(t) {
		files["huge-"+name] = b
	}
	n := damageCampaign(t, files, 120)
	t.Logf("%d damaged variants of %d files", n, len(files))
}
