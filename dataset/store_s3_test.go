package dataset

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/planarlance/planar/internal/s3test"
)

// envFunc turns KEY=VALUE pairs into a getenv.
func envFunc(kv ...string) func(string) string {
	m := map[string]string{}
	for _, e := range kv {
		k, v, _ := strings.Cut(e, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

func TestS3Store(t *testing.T) {
	srv := s3test.Start(t)
	t.Run("env", func(t *testing.T) {
		s, err := newS3Store("s3://"+srv.Bucket+"/env/ds", envFunc(srv.Env()...), nil)
		if err != nil {
			t.Fatal(err)
		}
		testObjectStore(t, s)
	})
	t.Run("storage options", func(t *testing.T) {
		opts := map[string]string{
			"aws_access_key_id":     srv.AccessKey,
			"aws_secret_access_key": srv.SecretKey,
			"aws_endpoint":          srv.Endpoint,
			"aws_region":            srv.Region,
			"allow_http":            "true",
		}
		s, err := newS3Store("s3://"+srv.Bucket+"/opts", envFunc(), opts)
		if err != nil {
			t.Fatal(err)
		}
		testObjectStore(t, s)
		// The prefix confines the store: the other store's keys are unseen.
		got, err := s.List(t.Context(), "")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range got {
			if strings.Contains(o.Key, "env/") {
				t.Fatalf("store under opts/ lists %s", o.Key)
			}
		}
	})
	t.Run("wrong secret", func(t *testing.T) {
		env := append(srv.Env(), "AWS_SECRET_ACCESS_KEY=wrong")
		s, err := newS3Store("s3://"+srv.Bucket+"/x", envFunc(env...), nil)
		if err != nil {
			t.Fatal(err)
		}
		err = s.Put(t.Context(), "k", []byte("v"))
		if err == nil || errors.Is(err, ErrObjectExists) || errors.Is(err, ErrObjectNotFound) {
			t.Fatalf("put with a wrong secret: %v", err)
		}
	})
}

func TestS3Config(t *testing.T) {
	tests := []struct {
		name    string
		env     []string
		opts    map[string]string
		want    s3Config
		wantErr error
	}{
		{name: "defaults", want: s3Config{region: "us-east-1"}},
		{
			name: "env",
			env:  []string{"AWS_ENDPOINT_URL=http://h:1", "AWS_ENDPOINT_URL_S3=http://s3:2", "AWS_DEFAULT_REGION=r1", "AWS_ACCESS_KEY_ID=a", "AWS_SECRET_ACCESS_KEY=s", "AWS_ALLOW_HTTP=true"},
			want: s3Config{endpoint: "http://s3:2", region: "r1", accessKey: "a", secretKey: "s", allowHTTP: true},
		},
		{
			name: "options override env",
			env:  []string{"AWS_ENDPOINT_URL=https://h", "AWS_REGION=r1", "AWS_ACCESS_KEY_ID=a", "AWS_SECRET_ACCESS_KEY=s"},
			opts: map[string]string{"aws_endpoint": "http://o:3", "AWS_REGION": "r2", "aws_access_key_id": "b", "aws_secret_access_key": "t", "allow_http": "true", "aws_session_token": "tok"},
			want: s3Config{endpoint: "http://o:3", region: "r2", accessKey: "b", secretKey: "t", sessionToken: "tok", allowHTTP: true},
		},
		{name: "http without allow_http", env: []string{"AWS_ENDPOINT_URL=http://h:1"}, wantErr: ErrInvalidOption},
		{name: "bad endpoint", opts: map[string]string{"aws_endpoint": "h:1"}, wantErr: ErrInvalidOption},
		{name: "bad allow_http", opts: map[string]string{"allow_http": "maybe"}, wantErr: ErrInvalidOption},
		{name: "unknown option", opts: map[string]string{"aws_nonsense": "1"}, wantErr: ErrInvalidOption},
		{name: "half credentials", env: []string{"AWS_ACCESS_KEY_ID=a"}, wantErr: ErrInvalidOption},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s3ConfigFrom(envFunc(tc.env...), tc.opts)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestS3URI(t *testing.T) {
	tests := []struct {
		uri, bucket, prefix string
		wantErr             error
	}{
		{uri: "s3://b", bucket: "b"},
		{uri: "s3://b/", bucket: "b"},
		{uri: "s3://b/p/q/", bucket: "b", prefix: "p/q/"},
		{uri: "s3://", wantErr: ErrInvalidOption},
		{uri: "s3://b/a/../c", wantErr: ErrInvalidOption},
		{uri: "gs://b/p", wantErr: ErrUnsupportedScheme},
	}
	for _, tc := range tests {
		b, p, err := parseS3URI(tc.uri)
		if tc.wantErr != nil {
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("%s: err %v, want %v", tc.uri, err, tc.wantErr)
			}
			continue
		}
		if err != nil || b != tc.bucket || p != tc.prefix {
			t.Errorf("%s = %q, %q, %v; want %q, %q", tc.uri, b, p, err, tc.bucket, tc.prefix)
		}
	}
}

// TestS3PartSizes checks that the growing part sizes let one multipart
// upload hold a data file of Lance's default maximum size, with every part
// but the last over S3's 5 MiB minimum.
func TestS3PartSizes(t *testing.T) {
	var total int64
	for n := int32(1); n <= s3MaxParts; n++ {
		sz := s3PartSizeFor(n)
		if sz < 5<<20 || (n > 1 && sz < s3PartSizeFor(n-1)) {
			t.Fatalf("part %d: %d bytes", n, sz)
		}
		total += int64(sz)
	}
	if total < 2*DefaultMaxBytesPerFile {
		t.Fatalf("%d parts hold %d bytes, want at least twice the default file limit %d", s3MaxParts, total, int64(DefaultMaxBytesPerFile))
	}
}

// statusErr is an error carrying an HTTP status, as S3 client errors do.
type statusErr int

func (e statusErr) Error() string       { return "status " + strconv.Itoa(int(e)) }
func (e statusErr) HTTPStatusCode() int { return int(e) }

// TestS3Retry checks which statuses are retried and how often.
func TestS3Retry(t *testing.T) {
	tests := []struct {
		name      string
		statuses  []int // the op's answers in turn; 0 is success
		wantCalls int
		wantErr   bool
	}{
		{"success", []int{0}, 1, false},
		{"409 then success", []int{409, 409, 0}, 3, false},
		{"503 then success", []int{503, 0}, 2, false},
		{"404 is final", []int{404, 0}, 1, true},
		{"412 is final", []int{412, 0}, 1, true},
		{"503 until the attempts run out", []int{503, 503, 503, 503, 503, 503, 0}, s3Attempts, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			err := retry(t.Context(), func() error {
				st := tc.statuses[calls]
				calls++
				if st == 0 {
					return nil
				}
				return statusErr(st)
			})
			if calls != tc.wantCalls || (err != nil) != tc.wantErr {
				t.Fatalf("%d calls, err %v; want %d calls, error %v", calls, err, tc.wantCalls, tc.wantErr)
			}
		})
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	calls := 0
	start := time.Now()
	err := retry(ctx, func() error { calls++; return statusErr(503) })
	if err == nil || calls != 1 || time.Since(start) > time.Second {
		t.Fatalf("cancelled context: %d calls, %v, %v", calls, err, time.Since(start))
	}
}
