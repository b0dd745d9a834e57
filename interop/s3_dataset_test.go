package interop

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
}
