package main

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/planarlance/planar/internal/corpus"
)

// batchRows is the rows per Arrow batch of the generated data; every writer
// is given the same batches.
const batchRows = 64 << 10

// columnName is the one column of every case.
const columnName = "v"

// preparedCase is a case whose data is in an Arrow IPC file, with the rows
// the takes use.
type preparedCase struct {
	Name       string `json:"name"`
	Slug       string `json:"slug"`
	Rows       int    `json:"rows"`
	Nulls      int    `json:"nulls"`
	Empties    int    `json:"empties,omitempty"`
	ArrowBytes int64  `json:"arrow_bytes"` // Arrow buffer bytes of all batches: the writers' input
	IPC        string `json:"-"`
	ValidRow   int64  `json:"valid_row"` // a row with a value (-1: none)
	NullRow    int64  `json:"null_row"`  // a null row (-1: none)
	WarmRow    int64  `json:"warm_row"`  // the warm-up take's row
}

// prepare generates the case's rows (seeded by seed and the case name, so
// that adding cases leaves the others' data unchanged) into dir/<slug>.arrow.
func prepare(c benchCase, rows int, seed uint64, dir string) (preparedCase, error) {
	h := fnv.New64a()
	h.Write([]byte(c.Name))
	rng := rand.New(rand.NewPCG(seed, h.Sum64()))
	kinds := c.kinds(rng, rows)
	p := preparedCase{Name: c.Name, Slug: slug(c.Name), Rows: rows, ValidRow: -1, NullRow: -1}
	p.IPC = filepath.Join(dir, p.Slug+".arrow")
	// Pick one row of each kind at random (reservoir sampling).
	var nv, nn int
	for i, k := range kinds {
		switch k {
		case rowValue:
			if nv++; rng.IntN(nv) == 0 {
				p.ValidRow = int64(i)
			}
		case rowNull:
			p.Nulls++
			if nn++; rng.IntN(nn) == 0 {
				p.NullRow = int64(i)
			}
		case rowEmpty:
			p.Empties++
		}
	}
	for p.WarmRow = 0; p.WarmRow < int64(rows)-1 && (p.WarmRow == p.ValidRow || p.WarmRow == p.NullRow); p.WarmRow++ {
	}

	f, err := os.Create(p.IPC)
	if err != nil {
		return p, err
	}
	defer f.Close()
	schema := arrow.NewSchema([]arrow.Field{{Name: columnName, Type: c.Col.Type(), Nullable: true}}, nil)
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
	if err != nil {
		return p, err
	}
	mem := memory.NewGoAllocator()
	for lo := 0; lo < rows || lo == 0; lo += batchRows {
		hi := min(lo+batchRows, rows)
		col := c.Col.build(mem, rng, kinds[lo:hi])
		rec := array.NewRecordBatch(schema, []arrow.Array{col}, int64(hi-lo))
		col.Release()
		p.ArrowBytes += corpus.ArrowBytes(rec)
		err := w.Write(rec)
		rec.Release()
		if err != nil {
			return p, fmt.Errorf("%s: %w", p.IPC, err)
		}
	}
	if err := w.Close(); err != nil {
		return p, err
	}
	return p, f.Close()
}

// readIPC returns the batches of an IPC file, which reference the file's
// mapped bytes: call release when done with them.
func readIPC(path string) (*arrow.Schema, []arrow.RecordBatch, func(), error) {
	data, unmap, err := mapFile(path)
	if err != nil {
		return nil, nil, nil, err
	}
	r, err := ipc.NewMappedFileReader(data)
	if err != nil {
		unmap()
		return nil, nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	defer r.Close()
	recs := make([]arrow.RecordBatch, 0, r.NumRecords())
	release := func() {
		for _, rec := range recs {
			rec.Release()
		}
		unmap()
	}
	for i := range r.NumRecords() {
		rec, err := r.RecordBatch(i)
		if err != nil {
			release()
			return nil, nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		rec.Retain()
		recs = append(recs, rec)
	}
	return r.Schema(), recs, release, nil
}
