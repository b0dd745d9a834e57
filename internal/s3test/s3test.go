// Package s3test starts a real S3-compatible object store (SeaweedFS's `weed`
// with its S3 gateway) on loopback for tests that need object storage with
// conditional puts. Each Start gets its own process, free ports, temporary
// data dir, throwaway credentials and a fresh bucket, and the test's cleanup
// stops the process.
//
// The `weed` binary is built by interop/s3server.sh (cached). Start looks for
// it in $PLANAR_WEED, then in the script's cache path, then on $PATH. When it
// is missing, tests skip loudly, or fail under CI=true. When the server does
// not come up, its log's tail is in the failure, and $PLANAR_S3TEST_LOG, if
// set, names a file to keep the whole log in. Launch starts a server outside
// of a test (bench/planarbench) and leaves stopping it to the caller.
package s3test

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

//go:embed seaweedfs.version
var weedVersionFile string

// WeedVersion is the pinned SeaweedFS module version that
// interop/s3server.sh builds.
var WeedVersion = strings.TrimSpace(weedVersionFile)

// Region is the region name the server and clients agree on; SeaweedFS
// accepts any.
const Region = "us-east-1"

var (
	errExited    = errors.New("s3test: weed exited during startup")
	errPortTaken = errors.New("s3test: a port picked free was taken")
)

// startTimeout bounds how long the server may take to answer S3 requests.
const startTimeout = 90 * time.Second

// stopGrace is how long weed gets to exit on SIGTERM before SIGKILL.
const stopGrace = 3 * time.Second

// Server is a running S3-compatible server with one empty bucket.
type Server struct {
	Endpoint  string // http://127.0.0.1:port
	Region    string
	AccessKey string
	SecretKey string
	Bucket    string
	LogPath   string // the server's combined output
	PID       int    // the weed process (its CPU time: CPUSeconds)
}

// Env returns the usual AWS environment variables that point a client (the
// AWS SDKs, pylance's object_store) at the server.
func (s *Server) Env() []string {
	return []string{
		"AWS_ACCESS_KEY_ID=" + s.AccessKey,
		"AWS_SECRET_ACCESS_KEY=" + s.SecretKey,
		"AWS_ENDPOINT_URL=" + s.Endpoint,
		"AWS_REGION=" + s.Region,
		"AWS_DEFAULT_REGION=" + s.Region,
		"AWS_ALLOW_HTTP=true",
	}
}

// Client returns an aws-sdk-go-v2 S3 client for the server (path-style
// addressing, static credentials).
func (s *Server) Client() *s3.Client {
	return s3.New(s3.Options{
		BaseEndpoint: aws.String(s.Endpoint),
		Region:       s.Region,
		Credentials:  credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
		UsePathStyle: true,
	})
}

// WeedPath finds the weed binary: $PLANAR_WEED, the cache path that
// interop/s3server.sh installs to, then $PATH. It returns "" when none runs.
func WeedPath() string {
	var cands []string
	if p := os.Getenv("PLANAR_WEED"); p != "" {
		cands = append(cands, p)
	}
	cache := os.Getenv("PLANAR_CACHE")
	if cache == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			cache = filepath.Join(dir, "planar")
		}
	}
	if cache != "" {
		cands = append(cands, filepath.Join(cache, "seaweedfs-"+WeedVersion, "weed"))
	}
	if p, err := exec.LookPath("weed"); err == nil {
		cands = append(cands, p)
	}
	for _, p := range cands {
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// ErrNoWeed means the weed binary was not found.
var ErrNoWeed = errors.New("s3test: SeaweedFS weed binary not found ($PLANAR_WEED, cache, $PATH); run `sh interop/s3server.sh`")

// Start launches a server for t and returns it once it serves S3 requests
// and its bucket exists. Cleanup stops it.
func Start(t testing.TB) *Server {
	t.Helper()
	weed := WeedPath()
	if weed == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI: " + ErrNoWeed.Error())
		}
		t.Skip("!!!!! SKIPPING S3 TESTS: " + ErrNoWeed.Error() + " !!!!!")
	}
	s, stop, err := launch(t.TempDir(), weed, t.Logf)
	if err != nil {
		t.Fatalf("s3test: %v", err)
	}
	t.Cleanup(func() { _ = stop() })
	return s
}

// Launch starts a server outside of a test (benchmarks, tools), keeping its
// data and log under dir, and returns it once it serves S3 requests and its
// bucket exists. The caller must call stop, which ends the weed process.
// Without a weed binary the error is ErrNoWeed.
func Launch(dir string) (s *Server, stop func() error, err error) {
	weed := WeedPath()
	if weed == "" {
		return nil, nil, ErrNoWeed
	}
	return launch(dir, weed, func(string, ...any) {})
}

// launch starts weed in a fresh directory under dir, retrying when a port
// picked free was taken before weed bound it.
func launch(dir, weed string, logf func(string, ...any)) (*Server, func() error, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		sub, err := os.MkdirTemp(dir, "weed-")
		if err != nil {
			return nil, nil, err
		}
		s, stop, err := start(sub, weed, logf)
		if err == nil {
			return s, stop, nil
		}
		lastErr = err
		if !errors.Is(err, errPortTaken) {
			break
		}
		logf("s3test: start attempt %d: %v", attempt+1, err)
	}
	return nil, nil, lastErr
}

func start(dir, weed string, logf func(string, ...any)) (*Server, func() error, error) {
	access, secret := randomHex(10), randomHex(20)
	cfg := map[string]any{
		"identities": []any{map[string]any{
			"name":        "planar-test",
			"credentials": []any{map[string]string{"accessKey": access, "secretKey": secret}},
			"actions":     []string{"Admin", "Read", "List", "Tagging", "Write"},
		}},
	}
	cfgJSON, err := json.Marshal(cfg)
	if err != nil {
		return nil, nil, err
	}
	cfgPath := filepath.Join(dir, "s3.json")
	if err := os.WriteFile(cfgPath, cfgJSON, 0o600); err != nil {
		return nil, nil, err
	}
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, nil, err
	}
	ports, err := freePorts(8)
	if err != nil {
		return nil, nil, err
	}
	args := []string{
		"server",
		"-dir=" + data,
		"-ip=127.0.0.1",
		"-ip.bind=127.0.0.1",
		"-master.port=" + strconv.Itoa(ports[0]),
		"-master.port.grpc=" + strconv.Itoa(ports[1]),
		"-master.volumeSizeLimitMB=64",
		"-volume.port=" + strconv.Itoa(ports[2]),
		"-volume.port.grpc=" + strconv.Itoa(ports[3]),
		// Volumes are created as data arrives, so a high cap costs nothing
		// until used; 256 × 64 MB leaves room for benchmark datasets.
		"-volume.max=256",
		"-volume.preStopSeconds=0",
		"-filer.port=" + strconv.Itoa(ports[4]),
		"-filer.port.grpc=" + strconv.Itoa(ports[5]),
		"-s3",
		"-s3.port=" + strconv.Itoa(ports[6]),
		"-s3.port.grpc=" + strconv.Itoa(ports[7]),
		"-s3.config=" + cfgPath,
		"-s3.port.iceberg=0", // the Iceberg and Lance catalog servers are not needed
		"-s3.port.lance=0",
		"-master.telemetry=false",
	}
	logPath := filepath.Join(dir, "weed.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(weed, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The server reads no AWS variables of the calling process.
	cmd.Env = filterEnv(os.Environ(), "AWS_")
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, nil, fmt.Errorf("start %s: %w", weed, err)
	}
	exited := make(chan struct{}) // closed when weed has exited
	var waitErr error
	go func() { waitErr = cmd.Wait(); logFile.Close(); close(exited) }()
	// The data dir is thrown away, so the stop need not be graceful for
	// long: SIGTERM, then SIGKILL after a short grace.
	var once sync.Once
	stop := func() error {
		once.Do(func() {
			began := time.Now()
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(stopGrace):
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				<-exited
			}
			logf("s3test: weed stopped in %v", time.Since(began).Round(time.Millisecond))
			// weed also listens on unix sockets it names after its ports
			// in /tmp; a killed weed leaves them behind.
			for _, p := range ports {
				socks, _ := filepath.Glob(fmt.Sprintf("/tmp/seaweedfs-*-%d.sock", p))
				for _, sock := range socks {
					_ = os.Remove(sock)
				}
			}
		})
		return nil
	}
	s := &Server{
		Endpoint:  "http://127.0.0.1:" + strconv.Itoa(ports[6]),
		Region:    Region,
		AccessKey: access,
		SecretKey: secret,
		Bucket:    "planar-" + randomHex(4),
		LogPath:   logPath,
		PID:       cmd.Process.Pid,
	}
	began := time.Now()
	if err := s.waitReady(exited); err != nil {
		stop()
		if errors.Is(err, errExited) {
			err = fmt.Errorf("%w: %v", err, waitErr)
		}
		if strings.Contains(tail(logPath, 1<<20), "address already in use") {
			err = fmt.Errorf("%w: %w", errPortTaken, err)
		}
		if keep := os.Getenv("PLANAR_S3TEST_LOG"); keep != "" {
			_ = copyFile(logPath, keep)
		}
		return nil, nil, fmt.Errorf("%w\n%s", err, tail(logPath, 4000))
	}
	logf("s3test: weed serving %s, bucket %s ready in %v", s.Endpoint, s.Bucket, time.Since(began).Round(time.Millisecond))
	return s, stop, nil
}

// waitReady creates the bucket and puts a probe object, retrying until the
// gateway and the store behind it (filer, volume server) answer.
func (s *Server) waitReady(exited <-chan struct{}) error {
	client := s.Client()
	deadline := time.Now().Add(startTimeout)
	bucket := aws.String(s.Bucket)
	created := false
	var lastErr error
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errExited
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var err error
		if !created {
			_, err = client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: bucket})
			var owned *types.BucketAlreadyOwnedByYou
			if err == nil || errors.As(err, &owned) {
				created, err = true, nil
			}
		}
		if created {
			// A put proves the volume servers take data, not just the filer.
			_, err = client.PutObject(ctx, &s3.PutObjectInput{
				Bucket: bucket, Key: aws.String(".probe"), Body: strings.NewReader("probe"),
			})
			if err == nil {
				_, err = client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: bucket, Key: aws.String(".probe")})
			}
		}
		cancel()
		if err == nil {
			return nil
		}
		lastErr = err
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("weed not ready after %v: %w", startTimeout, lastErr)
}

// StatusCode returns the HTTP status of an S3 client error, or 0.
func StatusCode(err error) int {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// freePorts reserves n distinct loopback ports, releasing them on return.
func freePorts(n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func filterEnv(env []string, prefix string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, prefix) {
			out = append(out, kv)
		}
	}
	return out
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

// CPUSeconds is the user and system CPU time the server process has used so
// far, from /proc (Linux only): on one machine, the store's share of the
// cores a benchmark measures.
func (s *Server) CPUSeconds() (float64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(s.PID) + "/stat")
	if err != nil {
		return 0, err
	}
	// Fields after the command name (which may hold spaces) in parentheses;
	// utime and stime are the 14th and 15th fields, in clock ticks.
	i := strings.LastIndexByte(string(b), ')')
	var f []string
	if i >= 0 {
		f = strings.Fields(string(b[i+1:]))
	}
	if len(f) < 13 {
		return 0, fmt.Errorf("s3test: /proc/%d/stat: %q", s.PID, b)
	}
	var ticks float64
	for _, v := range f[11:13] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("s3test: /proc/%d/stat: %w", s.PID, err)
		}
		ticks += float64(n)
	}
	return ticks / clockTicks, nil
}

// clockTicks is Linux's USER_HZ, the unit of /proc's CPU times (100 on
// every architecture Go supports).
const clockTicks = 100
