package interop

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/planarlance/planar/internal/s3test"
)

type s3Step struct {
	Step        string   `json:"step"`
	Version     int      `json:"version"`
	Rows        int      `json:"rows"`
	Equal       *bool    `json:"equal"`
	ExactlyOnce *bool    `json:"exactly_once"`
	Error       *string  `json:"error"`
	Errors      []string `json:"errors"`
	Versions    []int    `json:"versions"`
}

// TestPylanceS3Dataset has pylance create, read and append a dataset on the
// local S3-compatible server through storage_options, with concurrent
// appenders committing through conditional puts, then checks from Go what
// landed in the bucket.
func TestPylanceS3Dataset(t *testing.T) {
	py := python(t)
	srv := s3test.Start(t)
	const writers, appends = 3, 2
	uri := "s3://" + srv.Bucket + "/ds"

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "s3check.py", uri, strconv.Itoa(writers), strconv.Itoa(appends))
	cmd.Env = append(withoutAWS(os.Environ()), srv.Env()...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("s3check.py: %v\n%s\nweed log: %s", err, stderr.String(), srv.LogPath)
	}
	var res struct {
		Pylance string   `json:"pylance"`
		Steps   []s3Step `json:"steps"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("s3check.py output: %v\n%s", err, out)
	}
	steps := map[string]s3Step{}
	for _, s := range res.Steps {
		steps[s.Step] = s
	}
	check := func(name string, version, rows int) s3Step {
		t.Helper()
		s, ok := steps[name]
		if !ok {
			t.Fatalf("step %q missing: %s", name, out)
		}
		if s.Version != version || s.Rows != rows {
			t.Errorf("%s: version %d rows %d, want %d %d", name, s.Version, s.Rows, version, rows)
		}
		return s
	}
	check("create", 1, 1000)
	if s := steps["create again"]; s.Error == nil {
		t.Errorf("create over an existing dataset succeeded")
	}
	if s := check("read", 1, 1000); s.Equal == nil || !*s.Equal {
		t.Errorf("read back differs from what was written")
	}
	check("append", 2, 1500)
	last := 2 + writers*appends
	s := check("concurrent appends", last, 1500+writers*appends*100)
	if s.ExactlyOnce == nil || !*s.ExactlyOnce || len(s.Errors) > 0 {
		t.Errorf("concurrent appends: exactly once %v, errors %v", s.ExactlyOnce, s.Errors)
	}
	if len(s.Versions) != last {
		t.Errorf("versions %v, want 1..%d", s.Versions, last)
	}
	check("version 1", 1, 1000)

	// What pylance left in the bucket: a manifest and a transaction file per
	// version, and one data file per write.
	c := srv.Client()
	count := map[string]int{}
	p := s3.NewListObjectsV2Paginator(c, &s3.ListObjectsV2Input{Bucket: aws.String(srv.Bucket), Prefix: aws.String("ds/")})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		for _, o := range page.Contents {
			rest := strings.TrimPrefix(aws.ToString(o.Key), "ds/")
			dir, _, _ := strings.Cut(rest, "/")
			count[dir]++
		}
	}
	if count["_versions"] < last || count["_transactions"] != last || count["data"] != last {
		t.Errorf("objects under ds/: %v; want %d manifests, transactions and data files", count, last)
	}
	t.Logf("pylance %s on %s: %v", res.Pylance, srv.Endpoint, count)
}

func withoutAWS(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, "AWS_") {
			out = append(out, kv)
		}
	}
	return out
}
