package dataset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// s3Config is where an S3 store connects and with which credentials. It is
// filled from the usual AWS environment variables, then overridden by
// storage options with the keys pylance takes.
type s3Config struct {
	endpoint     string
	region       string
	accessKey    string
	secretKey    string
	sessionToken string
	allowHTTP    bool
}

// s3ConfigFrom resolves the configuration: getenv first (AWS_ENDPOINT_URL_S3,
// AWS_ENDPOINT_URL, AWS_REGION / AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_ALLOW_HTTP), then opts
// (aws_endpoint / endpoint, aws_region / region, aws_access_key_id,
// aws_secret_access_key, aws_session_token, allow_http), keys matched
// case-insensitively.
func s3ConfigFrom(getenv func(string) string, opts map[string]string) (s3Config, error) {
	var c s3Config
	first := func(vals ...string) string {
		for _, v := range vals {
			if v != "" {
				return v
			}
		}
		return ""
	}
	c.endpoint = first(getenv("AWS_ENDPOINT_URL_S3"), getenv("AWS_ENDPOINT_URL"))
	c.region = first(getenv("AWS_REGION"), getenv("AWS_DEFAULT_REGION"))
	c.accessKey = getenv("AWS_ACCESS_KEY_ID")
	c.secretKey = getenv("AWS_SECRET_ACCESS_KEY")
	c.sessionToken = getenv("AWS_SESSION_TOKEN")
	allow := getenv("AWS_ALLOW_HTTP")
	for k, v := range opts {
		switch strings.ToLower(k) {
		case "aws_endpoint", "aws_endpoint_url", "aws_endpoint_url_s3", "endpoint":
			c.endpoint = v
		case "aws_region", "region", "aws_default_region":
			c.region = v
		case "aws_access_key_id", "access_key_id":
			c.accessKey = v
		case "aws_secret_access_key", "secret_access_key":
			c.secretKey = v
		case "aws_session_token", "session_token", "aws_token", "token":
			c.sessionToken = v
		case "allow_http", "aws_allow_http":
			allow = v
		default:
			return c, fmt.Errorf("storage option %q: %w", k, ErrInvalidOption)
		}
	}
	if allow != "" {
		b, err := strconv.ParseBool(allow)
		if err != nil {
			return c, fmt.Errorf("allow_http %q: %w", allow, ErrInvalidOption)
		}
		c.allowHTTP = b
	}
	if c.region == "" {
		c.region = "us-east-1"
	}
	if c.endpoint != "" {
		u, err := url.Parse(c.endpoint)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return c, fmt.Errorf("S3 endpoint %q: %w", c.endpoint, ErrInvalidOption)
		}
		if u.Scheme == "http" && !c.allowHTTP {
			return c, fmt.Errorf("S3 endpoint %q is plain http; set allow_http: %w", c.endpoint, ErrInvalidOption)
		}
	}
	if (c.accessKey == "") != (c.secretKey == "") {
		return c, fmt.Errorf("S3 credentials need both an access key id and a secret key: %w", ErrInvalidOption)
	}
	return c, nil
}

// s3Attempts is how many times an S3 request is tried when the server
// answers 503 (slow down) or 409 (concurrent operation in progress).
const s3Attempts = 5

// s3Store is an objectStore on an S3 bucket under a key prefix.
type s3Store struct {
	client *s3.Client
	bucket string
	prefix string // "" or ending in '/'
}

// parseS3URI splits s3://bucket/prefix.
func parseS3URI(uri string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(uri, "s3://")
	if !ok {
		return "", "", fmt.Errorf("dataset %q: not an s3:// URI: %w", uri, ErrUnsupportedScheme)
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	prefix = strings.Trim(prefix, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("dataset %q: no bucket: %w", uri, ErrInvalidOption)
	}
	if prefix != "" {
		if err := checkKey(prefix); err != nil {
			return "", "", fmt.Errorf("dataset %q: %w", uri, err)
		}
		prefix += "/"
	}
	return bucket, prefix, nil
}

// newS3Store connects to the bucket of an s3:// URI. Credentials and the
// endpoint come from the environment and opts (see s3ConfigFrom); a custom
// endpoint uses path-style addressing.
func newS3Store(uri string, getenv func(string) string, opts map[string]string) (*s3Store, error) {
	bucket, prefix, err := parseS3URI(uri)
	if err != nil {
		return nil, err
	}
	c, err := s3ConfigFrom(getenv, opts)
	if err != nil {
		return nil, fmt.Errorf("dataset %q: %w", uri, err)
	}
	o := s3.Options{
		Region: c.region,
		// Retries are done here, for the statuses the commit protocol can
		// safely repeat.
		RetryMaxAttempts: 1,
	}
	if c.endpoint != "" {
		o.BaseEndpoint = aws.String(c.endpoint)
		o.UsePathStyle = true
	}
	if c.accessKey != "" {
		o.Credentials = credentials.NewStaticCredentialsProvider(c.accessKey, c.secretKey, c.sessionToken)
	}
	return &s3Store{client: s3.New(o), bucket: bucket, prefix: prefix}, nil
}

// newS3StoreFromEnv is newS3Store with the process environment.
func newS3StoreFromEnv(uri string, opts map[string]string) (*s3Store, error) {
	return newS3Store(uri, os.Getenv, opts)
}

// s3Status returns the HTTP status of an S3 client error, or 0.
func s3Status(err error) int {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// retry runs op until it succeeds, fails with a status other than 503 or
// 409, or the attempts run out, backing off between attempts: from 50 ms
// after a 503 (slow down), from 10 ms after a 409 (a conditional put racing
// one still in flight, which settles as soon as that one lands), doubling,
// with jitter so that racing writers spread out.
func retry(ctx context.Context, op func() error) error {
	var delay time.Duration
	var err error
	for attempt := 0; attempt < s3Attempts; attempt++ {
		if err = op(); err == nil {
			return nil
		}
		st := s3Status(err)
		if st != 503 && st != 409 {
			return err
		}
		switch {
		case delay > 0:
			delay *= 2
		case st == 409:
			delay = 10 * time.Millisecond
		default:
			delay = 50 * time.Millisecond
		}
		wait := delay/2 + time.Duration(rand.Int64N(int64(delay)))
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
	return err
}

func (s *s3Store) key(key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	return s.prefix + key, nil
}

func s3Err(op, key string, err error) error {
	if s3Status(err) == 404 {
		return fmt.Errorf("%s %s: %v: %w", op, key, err, ErrObjectNotFound)
	}
	return fmt.Errorf("%s %s: %w", op, key, err)
}

func (s *s3Store) List(ctx context.Context, prefix string) ([]objectInfo, error) {
	var out []objectInfo
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{
		Bucket: aws.String(s.bucket),
		Prefix: aws.String(s.prefix + prefix),
	})
	for p.HasMorePages() {
		var page *s3.ListObjectsV2Output
		err := retry(ctx, func() error {
			var err error
			page, err = p.NextPage(ctx)
			return err
		})
		if err != nil {
			return nil, s3Err("list", prefix, err)
		}
		for _, o := range page.Contents {
			k := aws.ToString(o.Key)
			rel, ok := strings.CutPrefix(k, s.prefix)
			if !ok || rel == "" {
				continue
			}
			out = append(out, objectInfo{Key: rel, Size: aws.ToInt64(o.Size)})
		}
	}
	return out, nil // ListObjectsV2 answers in key order
}

func (s *s3Store) Get(ctx context.Context, key string) ([]byte, error) {
	k, err := s.key(key)
	if err != nil {
		return nil, err
	}
	var b []byte
	err = retry(ctx, func() error {
		out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(k)})
		if err != nil {
			return err
		}
		defer out.Body.Close()
		var buf bytes.Buffer
		if n := aws.ToInt64(out.ContentLength); n > 0 && n <= maxManifestBytes {
			buf.Grow(int(n))
		}
		if _, err := io.Copy(&buf, io.LimitReader(out.Body, maxManifestBytes+1)); err != nil {
			return err
		}
		if buf.Len() > maxManifestBytes {
			return fmt.Errorf("object larger than %d bytes: %w", maxManifestBytes, ErrCorrupt)
		}
		b = buf.Bytes()
		return nil
	})
	if err != nil {
		return nil, s3Err("get", key, err)
	}
	return b, nil
}

func (s *s3Store) GetRange(ctx context.Context, key string, off int64, p []byte) error {
	k, err := s.key(key)
	if err != nil {
		return err
	}
	if off < 0 {
		return fmt.Errorf("%s: negative offset %d: %w", key, off, ErrInvalidOption)
	}
	if len(p) == 0 {
		return nil
	}
	rng := "bytes=" + strconv.FormatInt(off, 10) + "-" + strconv.FormatInt(off+int64(len(p))-1, 10)
	err = retry(ctx, func() error {
		out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(k), Range: aws.String(rng)})
		if err != nil {
			return err
		}
		defer out.Body.Close()
		_, err = io.ReadFull(out.Body, p)
		return err
	})
	if err != nil {
		return s3Err("get range", key, err)
	}
	return nil
}

func (s *s3Store) Size(ctx context.Context, key string) (int64, error) {
	k, err := s.key(key)
	if err != nil {
		return 0, err
	}
	var n int64
	err = retry(ctx, func() error {
		out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(k)})
		if err != nil {
			return err
		}
		n = aws.ToInt64(out.ContentLength)
		return nil
	})
	if err != nil {
		return 0, s3Err("head", key, err)
	}
	return n, nil
}

func (s *s3Store) put(ctx context.Context, key string, b []byte, ifNoneMatch bool) error {
	k, err := s.key(key)
	if err != nil {
		return err
	}
	err = retry(ctx, func() error {
		in := &s3.PutObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(k), Body: bytes.NewReader(b), ContentLength: aws.Int64(int64(len(b)))}
		if ifNoneMatch {
			in.IfNoneMatch = aws.String("*")
		}
		_, err := s.client.PutObject(ctx, in)
		return err
	})
	if err != nil {
		if ifNoneMatch && s3Status(err) == 412 {
			return fmt.Errorf("put %s: %w", key, ErrObjectExists)
		}
		return s3Err("put", key, err)
	}
	return nil
}

func (s *s3Store) Put(ctx context.Context, key string, b []byte) error {
	return s.put(ctx, key, b, false)
}

func (s *s3Store) PutIfNotExists(ctx context.Context, key string, b []byte) error {
	return s.put(ctx, key, b, true)
}

func (s *s3Store) Delete(ctx context.Context, key string) error {
	k, err := s.key(key)
	if err != nil {
		return err
	}
	err = retry(ctx, func() error {
		_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(k)})
		return err
	})
	if err != nil && s3Status(err) != 404 {
		return s3Err("delete", key, err)
	}
	return nil
}
