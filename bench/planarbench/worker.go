package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/planarlance/planar/reader"
	"github.com/planarlance/planar/selector"
	"github.com/planarlance/planar/writer"
)

// workerFlag, as the first argument, makes the binary measure one planar
// write and read (a job in JSON as the second argument) and print the
// measurement as JSON. It is not listed in -help: the command runs itself
// this way so that every measurement has a fresh process.
const workerFlag = "-planar-worker"

// job is one measurement. The pylance script takes the same JSON.
type job struct {
	IPC     string `json:"ipc"`
	Out     string `json:"out"`               // the file to write
	Policy  string `json:"policy,omitempty"`  // planar: cost or lance
	Version string `json:"version"`           // file format: 2.3 or 2.2
	IO      bool   `json:"io"`                // also count the IO of the takes
	Dataset string `json:"dataset,omitempty"` // pylance: where to write the dataset for the IO count
	Warm    int64  `json:"warm"`
	Valid   int64  `json:"valid"` // -1: no such row
	Null    int64  `json:"null"`
}

// ioCount is the IO of one take: read requests and bytes.
type ioCount struct {
	Requests int64 `json:"requests"`
	Bytes    int64 `json:"bytes"`
}

// measurement is what one run of a writer measured.
type measurement struct {
	FileBytes  int64    `json:"file_bytes"`
	WriteSec   float64  `json:"write_s"`   // wall time of the write alone
	ReadAllSec float64  `json:"readall_s"` // open and read every row
	TakeValid  *ioCount `json:"take_valid,omitempty"`
	TakeNull   *ioCount `json:"take_null,omitempty"`
	IONote     string   `json:"io_note,omitempty"`
	// ReadBack is "ok" when the writer's own reader read the file back
	// equal to the input, else what differed.
	ReadBack string `json:"read_back"`
	// MaxRSSKB is the process's peak resident memory (write, ReadAll and
	// takes together; the mapped input counts where touched).
	MaxRSSKB int64  `json:"max_rss_kb,omitempty"`
	Error    string `json:"error,omitempty"`
}

// runWorker is the main of a worker process: it decodes the one JSON job in
// args, runs it and prints its measurement as JSON (exit status 2 for a bad
// job, 1 when the result cannot be written).
func runWorker[J any](flag string, args []string, stdout io.Writer, run func(J) any) int {
	var j J
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "planarbench: "+flag+" takes one JSON job")
		return 2
	}
	if err := json.Unmarshal([]byte(args[0]), &j); err != nil {
		fmt.Fprintln(os.Stderr, "planarbench:", err)
		return 2
	}
	if err := json.NewEncoder(stdout).Encode(run(j)); err != nil {
		fmt.Fprintln(os.Stderr, "planarbench:", err)
		return 1
	}
	return 0
}

func workerMain(args []string, stdout io.Writer) int {
	return runWorker(workerFlag, args, stdout, func(j job) any {
		m, err := measurePlanar(j)
		if err != nil {
			m.Error = err.Error()
		}
		m.MaxRSSKB = maxRSSKB()
		return m
	})
}

func measurePlanar(j job) (measurement, error) {
	var m measurement
	schema, recs, release, err := readIPC(j.IPC)
	if err != nil {
		return m, err
	}
	defer release()
	opts := []writer.Option{}
	switch j.Policy {
	case "cost":
		opts = append(opts, writer.WithPolicy(selector.PolicyCost))
	case "lance":
		opts = append(opts, writer.WithPolicy(selector.PolicyLance))
	default:
		return m, fmt.Errorf("policy %q", j.Policy)
	}
	format, err := writer.ParseFormat(j.Version)
	if err != nil {
		return m, err
	}
	opts = append(opts, writer.WithFormat(format))

	runtime.GC()
	t0 := time.Now()
	if err := writeFile(j.Out, schema, recs, opts); err != nil {
		return m, fmt.Errorf("write: %w", err)
	}
	m.WriteSec = time.Since(t0).Seconds()
	st, err := os.Stat(j.Out)
	if err != nil {
		return m, err
	}
	m.FileBytes = st.Size()

	runtime.GC()
	t0 = time.Now()
	f, err := reader.OpenPath(j.Out)
	if err != nil {
		return m, fmt.Errorf("open: %w", err)
	}
	all, err := f.ReadAll()
	m.ReadAllSec = time.Since(t0).Seconds()
	f.Close()
	if err != nil {
		return m, fmt.Errorf("read all: %w", err)
	}
	m.ReadBack = compare(all, recs)
	all.Release()

	if j.IO {
		if m.TakeValid, m.TakeNull, err = planarTakeIO(j.Out, j.Warm, j.Valid, j.Null); err != nil {
			return m, err
		}
	}
	return m, nil
}

// writeFile writes recs with planar through a 1 MiB buffer (no fsync: the
// pylance side does not sync either).
func writeFile(path string, schema *arrow.Schema, recs []arrow.RecordBatch, opts []writer.Option) error {
	return writeBuffered(path, func(out io.Writer) error {
		w, err := writer.New(out, schema, opts...)
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := w.WriteBatch(r); err != nil {
				w.Close()
				return err
			}
		}
		return w.Close()
	})
}

// writeBuffered creates path and runs write over a 1 MiB buffer of it,
// then flushes and closes it.
func writeBuffered(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// planarTakeIO opens path with planar's reader, takes the warm-up row, then
// counts the requests and bytes of a take of the valid and of the null row
// (nil where there is no such row).
func planarTakeIO(path string, warm, valid, null int64) (*ioCount, *ioCount, error) {
	f, err := reader.OpenPath(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	take := func(row int64) (*ioCount, error) {
		if row < 0 {
			return nil, nil
		}
		f.ResetIOStats()
		rec, err := f.Take([]int64{row})
		if err != nil {
			return nil, fmt.Errorf("take row %d: %w", row, err)
		}
		rec.Release()
		s := f.IOStats()
		return &ioCount{Requests: s.Requests, Bytes: s.Bytes}, nil
	}
	if _, err := take(warm); err != nil {
		return nil, nil, err
	}
	v, err := take(valid)
	if err != nil {
		return nil, nil, err
	}
	n, err := take(null)
	return v, n, err
}

// compare says "ok" if all holds the rows of recs, else where it differs.
func compare(all arrow.RecordBatch, recs []arrow.RecordBatch) string {
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	if all.NumRows() != rows {
		return fmt.Sprintf("%d rows, want %d", all.NumRows(), rows)
	}
	var off int64
	for _, r := range recs {
		for c := range int(r.NumCols()) {
			slice := array.NewSlice(all.Column(c), off, off+r.NumRows())
			got := sameTypeAs(slice, r.Column(c).DataType())
			eq := array.Equal(got, r.Column(c))
			got.Release()
			slice.Release()
			if !eq {
				return fmt.Sprintf("column %q differs in rows [%d, %d)", r.ColumnName(c), off, off+r.NumRows())
			}
		}
		off += r.NumRows()
	}
	return "ok"
}
