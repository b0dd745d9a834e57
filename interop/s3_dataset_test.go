package interop

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
	lds "github.com/planarlance/planar/dataset"
	"github.com/planarlance/planar/internal/s3test"
)

// TestDatasetS3PlanarPylance: planar creates and appends a dataset on the
// local S3 server (storage options); pylance reads it with storage_options
// and appends; planar reads pylance's version (configured by the AWS
// environment variables).
func TestDatasetS3PlanarPylance(t *testing.T) {
	py := python(t)
	srv := s3test.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	opts := map[string]string{
		"aws_access_key_id":     srv.AccessKey,
		"aws_secret_access_key": srv.SecretKey,
		"aws_endpoint":          srv.Endpoint,
		"aws_region":            srv.Region,
		"allow_http":            "true",
	}
	so := lds.WithStorageOptions(opts)
	uri := "s3://" + srv.Bucket + "/planar/ds"

	w, err := lds.Create(ctx, uri, dsSchema, so, lds.WithMaxRowsPerFile(200))
	if err != nil {
		t.Fatal(err)
	}
	planarWrite(t, w, 0, 300, 100)
	a, err := lds.Append(ctx, uri, so)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	planarWrite(t, a, 300, 200, 100)
	t.Logf("planar append of 200 rows on S3 took %v", time.Since(start))

	// pylance, with storage_options only (no AWS_* in its environment).
	optsJSON, err := json.Marshal(opts)
	if err != nil {
		t.Fatal(err)
	}
	pyRun := func(args ...string) map[string]any {
		t.Helper()
		cmd := exec.CommandContext(ctx, py, append([]string{"dataset_check.py"}, args...)...)
		cmd.Env = append(withoutAWS(os.Environ()), "PLANAR_STORAGE_OPTIONS="+string(optsJSON))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("dataset_check.py %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
		}
		var res map[string]any
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("dataset_check.py output %q: %v", out, err)
		}
		return res
	}
	dir := t.TempDir()
	all := filepath.Join(dir, "all.arrow")
	writeDatasetIPC(t, all, [2]int64{0, 500})
	res := pyRun("check", uri, all, "2")
	if res["rows"] != float64(500) || res["version"] != float64(2) {
		t.Fatalf("pylance read: %v", res)
	}
	more := filepath.Join(dir, "more.arrow")
	writeDatasetIPC(t, more, [2]int64{500, 250})
	if res := pyRun("append", uri, more); res["version"] != float64(3) {
		t.Fatalf("pylance append: %v", res)
	}

	// planar reads pylance's version through the environment alone.
	for _, e := range srv.Env() {
		k, v, _ := strings.Cut(e, "=")
		t.Setenv(k, v)
	}
	planarCheck(t, uri, 3, 750)
	planarCheck(t, uri, 1, 300)

	// Data files of several multipart parts, each published while the next
	// is encoded: 64 KiB values that do not compress, 250 rows a file (16.4
	// MB: a part of 8 MiB and a shorter one), then a file under one part.
	bigURI := "s3://" + srv.Bucket + "/planar/multipart"
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "payload", Type: arrow.BinaryTypes.Binary},
	}, nil)
	rng := rand.New(rand.NewPCG(5, 8))
	var recs []arrow.RecordBatch
	for first := int64(0); first < 600; first += 50 {
		b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
		for i := first; i < first+50; i++ {
			b.Field(0).(*array.Int64Builder).Append(i)
			v := make([]byte, 64<<10)
			for k := 0; k < len(v); k += 8 {
				binary.LittleEndian.PutUint64(v[k:], rng.Uint64())
			}
			b.Field(1).(*array.BinaryBuilder).Append(v)
		}
		recs = append(recs, b.NewRecordBatch())
		b.Release()
	}
	bw, err := lds.Create(ctx, bigURI, schema, so, lds.WithMaxRowsPerFile(250))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := bw.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	d, err := bw.Commit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var sizes []uint64
	for _, f := range d.Fragments() {
		sizes = append(sizes, f.Files[0].FileSizeBytes)
	}
	if len(sizes) != 3 || sizes[0] <= 8<<20 || sizes[1] <= 8<<20 || sizes[2] >= 8<<20 {
		t.Fatalf("data files of %v bytes, want two over one part (8 MiB) and one under", sizes)
	}
	bigIPC := filepath.Join(dir, "multipart.arrow")
	f, err := os.Create(bigIPC)
	if err != nil {
		t.Fatal(err)
	}
	iw, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := iw.Write(r); err != nil {
			t.Fatal(err)
		}
		r.Release()
	}
	if err := iw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if res := pyRun("check", bigURI, bigIPC, "1"); res["rows"] != float64(600) {
		t.Fatalf("pylance read of the multipart files: %v", res)
	}
}
