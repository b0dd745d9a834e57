package s3test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestObjectStore checks the behaviour the dataset commit protocol relies
// on, against the real server: plain put/get/list, put-if-not-exists
// (If-None-Match: *) answering 412 on an existing key, and a race of
// conditional puts on one key with exactly one winner whose bytes stay.
func TestObjectStore(t *testing.T) {
	srv := Start(t)
	c := srv.Client()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bucket := aws.String(srv.Bucket)

	// put makes one attempt (no SDK retries), so the test sees the
	// server's own answers.
	put := func(key string, body []byte, ifNoneMatch bool) error {
		in := &s3.PutObjectInput{Bucket: bucket, Key: aws.String(key), Body: bytes.NewReader(body)}
		if ifNoneMatch {
			in.IfNoneMatch = aws.String("*")
		}
		_, err := c.PutObject(ctx, in, func(o *s3.Options) { o.RetryMaxAttempts = 1 })
		return err
	}
	get := func(key string) ([]byte, error) {
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: bucket, Key: aws.String(key)})
		if err != nil {
			return nil, err
		}
		defer out.Body.Close()
		return io.ReadAll(out.Body)
	}

	t.Run("put get list", func(t *testing.T) {
		objs := map[string][]byte{
			"ds/data/a.lance":         bytes.Repeat([]byte{0xab}, 3<<20), // over one multipart-sized chunk
			"ds/data/b.lance":         []byte("b"),
			"ds/_versions/1.manifest": {},
			"other/x":                 []byte("x"),
		}
		for k, v := range objs {
			if err := put(k, v, false); err != nil {
				t.Fatalf("put %s: %v", k, err)
			}
		}
		for k, v := range objs {
			got, err := get(k)
			if err != nil {
				t.Fatalf("get %s: %v", k, err)
			}
			if !bytes.Equal(got, v) {
				t.Fatalf("get %s: %d bytes, want %d", k, len(got), len(v))
			}
		}
		if _, err := get("ds/missing"); StatusCode(err) != http.StatusNotFound {
			t.Fatalf("get missing: %v (status %d), want 404", err, StatusCode(err))
		}
		tests := []struct {
			prefix, delim string
			keys, dirs    []string
		}{
			{"ds/", "", []string{"ds/_versions/1.manifest", "ds/data/a.lance", "ds/data/b.lance"}, nil},
			{"ds/", "/", nil, []string{"ds/_versions/", "ds/data/"}},
			{"ds/data/", "/", []string{"ds/data/a.lance", "ds/data/b.lance"}, nil},
			{"none/", "", nil, nil},
		}
		for _, tc := range tests {
			in := &s3.ListObjectsV2Input{Bucket: bucket, Prefix: aws.String(tc.prefix)}
			if tc.delim != "" {
				in.Delimiter = aws.String(tc.delim)
			}
			out, err := c.ListObjectsV2(ctx, in)
			if err != nil {
				t.Fatalf("list %q: %v", tc.prefix, err)
			}
			var keys, dirs []string
			for _, o := range out.Contents {
				keys = append(keys, aws.ToString(o.Key))
			}
			for _, p := range out.CommonPrefixes {
				dirs = append(dirs, aws.ToString(p.Prefix))
			}
			sort.Strings(keys)
			sort.Strings(dirs)
			if fmt.Sprint(keys) != fmt.Sprint(tc.keys) || fmt.Sprint(dirs) != fmt.Sprint(tc.dirs) {
				t.Errorf("list %q/%q: keys %v dirs %v, want %v %v", tc.prefix, tc.delim, keys, dirs, tc.keys, tc.dirs)
			}
		}
	})

	t.Run("put if not exists", func(t *testing.T) {
		const key = "ds/_versions/18446744073709551614.manifest"
		if err := put(key, []byte("first"), true); err != nil {
			t.Fatalf("conditional put of a new key: %v", err)
		}
		err := put(key, []byte("second"), true)
		if StatusCode(err) != http.StatusPreconditionFailed {
			t.Fatalf("conditional put of an existing key: %v (status %d), want 412", err, StatusCode(err))
		}
		if got, err := get(key); err != nil || string(got) != "first" {
			t.Fatalf("after the refused put: %q, %v; want \"first\"", got, err)
		}
		// An unconditional put still overwrites.
		if err := put(key, []byte("third"), false); err != nil {
			t.Fatalf("plain overwrite: %v", err)
		}
		if got, _ := get(key); string(got) != "third" {
			t.Fatalf("after overwrite: %q", got)
		}
	})

	t.Run("conditional put race", func(t *testing.T) {
		const writers, rounds = 8, 5
		statuses := map[int]int{}
		began := time.Now()
		defer func() {
			t.Logf("%d rounds of %d writers in %v: statuses %v", rounds, writers, time.Since(began), statuses)
		}()
		for r := 0; r < rounds; r++ {
			key := fmt.Sprintf("race/_versions/%d.manifest", r)
			var wg sync.WaitGroup
			start := make(chan struct{})
			errs := make([]error, writers)
			for w := 0; w < writers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					errs[w] = put(key, []byte(fmt.Sprintf("writer %d", w)), true)
				}()
			}
			close(start)
			wg.Wait()
			winner := -1
			for w, err := range errs {
				statuses[StatusCode(err)]++
				switch {
				case err == nil:
					if winner >= 0 {
						t.Fatalf("round %d: writers %d and %d both won", r, winner, w)
					}
					winner = w
				case StatusCode(err) == http.StatusPreconditionFailed, StatusCode(err) == http.StatusConflict:
					// Lost the race: 412, or 409 when the store saw the
					// competing write still in flight (S3 allows both).
				default:
					t.Fatalf("round %d writer %d: %v (status %d)", r, w, err, StatusCode(err))
				}
			}
			if winner < 0 {
				t.Fatalf("round %d: no writer won", r)
			}
			got, err := get(key)
			if err != nil || string(got) != fmt.Sprintf("writer %d", winner) {
				t.Fatalf("round %d: stored %q (%v), want the winner's bytes (writer %d)", r, got, err, winner)
			}
		}
	})
}

// TestLaunch starts a server outside of the test's cleanup: it serves
// requests until stop, and stop (idempotent) ends the process.
func TestLaunch(t *testing.T) {
	if WeedPath() == "" {
		Start(t) // skips loudly, or fails under CI=true
	}
	srv, stop, err := Launch(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := srv.Client()
	in := &s3.PutObjectInput{Bucket: aws.String(srv.Bucket), Key: aws.String("k"), Body: bytes.NewReader([]byte("v"))}
	if _, err := c.PutObject(ctx, in); err != nil {
		t.Fatalf("put: %v", err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatalf("second stop: %v", err)
	}
	resp, err := http.Get(srv.Endpoint)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("the server still answers after stop: %s", resp.Status)
	}
}

// TestLaunchNoWeed: without a weed binary Launch says so with ErrNoWeed.
func TestLaunchNoWeed(t *testing.T) {
	t.Setenv("PLANAR_WEED", "")
	t.Setenv("PLANAR_CACHE", t.TempDir())
	t.Setenv("PATH", t.TempDir())
	if _, _, err := Launch(t.TempDir()); !errors.Is(err, ErrNoWeed) {
		t.Fatalf("Launch without weed: %v, want ErrNoWeed", err)
	}
}

// TestLink: objects put and read back through a link are the bytes sent;
// the link's endpoint stops answering once stopped; the server's CPU time
// is read and grows with work.
func TestLink(t *testing.T) {
	srv := Start(t)
	cpu0, err := srv.CPUSeconds()
	if err != nil {
		t.Fatal(err)
	}
	through, stop, err := srv.Link(200e6, 2*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if through.Endpoint == srv.Endpoint || through.Bucket != srv.Bucket {
		t.Fatalf("link endpoint %s, bucket %s", through.Endpoint, through.Bucket)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := through.Client()
	body := make([]byte, 3<<20+17)
	for i := range body {
		body[i] = byte(i*7 + i>>11)
	}
	for _, key := range []string{"a", "b"} {
		in := &s3.PutObjectInput{Bucket: aws.String(srv.Bucket), Key: aws.String(key), Body: bytes.NewReader(body)}
		if _, err := c.PutObject(ctx, in); err != nil {
			t.Fatalf("put %s through the link: %v", key, err)
		}
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(srv.Bucket), Key: aws.String(key)})
		if err != nil {
			t.Fatalf("get %s through the link: %v", key, err)
		}
		got, err := io.ReadAll(out.Body)
		out.Body.Close()
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("get %s through the link: %d bytes, err %v; want the %d put", key, len(got), err, len(body))
		}
	}
	cpu1, err := srv.CPUSeconds()
	if err != nil || cpu1 <= cpu0 {
		t.Fatalf("server CPU %v s before, %v s after two 3 MiB puts (err %v)", cpu0, cpu1, err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(srv.Bucket)}, func(o *s3.Options) { o.RetryMaxAttempts = 1 }); err == nil {
		t.Fatal("the link still answers after stop")
	}
	if _, _, err := srv.Link(0, 0); err == nil {
		t.Fatal("a link of rate 0 started")
	}
}
