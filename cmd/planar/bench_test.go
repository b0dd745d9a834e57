package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/planarlance/planar/internal/pyenv"
)

// BenchmarkConvert measures Parquet -> Lance on the mixed test table
// ($PLANAR_CONVERT_ROWS rows, default 1Mi, Parquet with snappy, 64Ki-row
// row groups):
//
//	go test ./cmd/planar -run '^$' -bench Convert -benchtime 3x
//
// read: arrow-go reading the Parquet alone (the source side of convert,
// batches drained); file: convert to a Lance 2.3 file; dataset: convert to a
// dataset (storage 2.2); pylance: pyarrow.parquet.read_table then
// lance.write_dataset in the interop venv, timed inside python (the
// interpreter's start excluded). Each reports rows/s and the output's size
// next to the Parquet file's.
func BenchmarkConvert(b *testing.B) {
	src := benchParquet(b)
	fi, _ := os.Stat(src)
	rows := benchRows()
	b.Logf("source: %d rows, %s Parquet", rows, humanBytes(fi.Size()))
	b.Run("read", func(b *testing.B) {
		for b.Loop() {
			s, err := openSource(context.Background(), src, kindParquet, sourceOptions{batchRows: 64 << 10})
			if err != nil {
				b.Fatal(err)
			}
			for {
				rec, err := s.next()
				if err != nil {
					b.Fatal(err)
				}
				if rec == nil {
					break
				}
			}
			s.Close()
		}
		b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"file", nil},
		{"file-2.2", []string{"--format", "2.2"}},
		{"dataset", []string{"--dataset"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dst := filepath.Join(b.TempDir(), "out.lance")
			for b.Loop() {
				os.RemoveAll(dst)
				args := append(append([]string{"convert", "-q"}, tc.args...), src, dst)
				if err := run(args, new(bytes.Buffer)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(treeSize(dst)), "out-bytes")
			b.ReportMetric(float64(fi.Size()), "parquet-bytes")
		})
	}
	b.Run("pylance", func(b *testing.B) {
		py, _, err := pyenv.Find("")
		if err != nil {
			b.Skip(err)
		}
		dst := filepath.Join(b.TempDir(), "py.lance")
		script := `
import sys, time, shutil
import pyarrow.parquet as pq, lance
shutil.rmtree(sys.argv[2], ignore_errors=True)
t0 = time.perf_counter()
t = pq.read_table(sys.argv[1])
lance.write_dataset(t, sys.argv[2])
print(time.perf_counter() - t0)
`
		var total time.Duration
		for b.Loop() {
			out, err := exec.Command(py, "-c", script, src, dst).CombinedOutput()
			if err != nil {
				b.Fatalf("%v: %s", err, out)
			}
			secs, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
			if err != nil {
				b.Fatalf("python said %q", out)
			}
			total += time.Duration(secs * float64(time.Second))
		}
		b.ReportMetric(float64(rows)*float64(b.N)/total.Seconds(), "rows/s")
		b.ReportMetric(float64(treeSize(dst)), "out-bytes")
		b.ReportMetric(float64(fi.Size()), "parquet-bytes")
	})
}

func benchRows() int {
	if n, err := strconv.Atoi(os.Getenv("PLANAR_CONVERT_ROWS")); err == nil && n > 0 {
		return n
	}
	return 1 << 20
}

var benchSrc struct {
	once sync.Once
	path string
}

// benchParquet writes the benchmark's Parquet file once per process.
func benchParquet(b *testing.B) string {
	benchSrc.once.Do(func() {
		dir, err := os.MkdirTemp("", "planar-convert-bench")
		if err != nil {
			b.Fatal(err)
		}
		n := benchRows()
		var recs []arrow.RecordBatch
		for at := 0; at < n; at += 64 << 10 {
			recs = append(recs, mixedRecord(min(64<<10, n-at), at))
		}
		benchSrc.path = filepath.Join(dir, "src.parquet")
		writeParquet(b, benchSrc.path, recs, 64<<10)
	})
	return benchSrc.path
}

// treeSize is the bytes of a file or of every file under a directory.
func treeSize(path string) int64 {
	var n int64
	filepath.WalkDir(path, func(_ string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}
