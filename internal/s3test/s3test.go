// Package s3test starts real S3 servers for tests: MinIO, and versitygw
// (a second, independent S3 implementation) on its posix backend. Each
// server listens on a random loopback port with random credentials and a
// temporary data directory, and every call hands the test a fresh bucket.
//
// The binaries come from $CAIRN_MINIO and $CAIRN_VERSITYGW, else from
// <repo root>/.cache/bin (`make servers` builds them there). A missing
// binary skips the test, except under CI=true or CAIRN_REQUIRE_SERVERS=1,
// where it fails: CI must never pass by skipping. In -short mode the
// tests are skipped without looking.
//
// A package whose TestMain calls Main shares one process per server
// across all its tests and stops it when they are done:
//
//	func TestMain(m *testing.M) { s3test.Main(m) }
//
// Without Main, every Start call runs its own process and stops it at
// the test's cleanup.
package s3test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/cairnlog/cairn/internal/pause"
)

// Region is the region every server is started with.
const Region = "us-east-1"

// Server is a running S3 server.
type Server struct {
	Name      string // "minio" or "versitygw"
	Host      string // 127.0.0.1:PORT
	Endpoint  string // http://127.0.0.1:PORT
	AccessKey string
	SecretKey string
	Region    string

	cmd  *exec.Cmd
	dir  string
	log  *lockedBuffer
	done chan struct{} // closed when the process has exited
}

// Bucket is a fresh, empty bucket on a running server.
type Bucket struct {
	*Server
	Name string
}

type kind struct {
	name   string // also the binary's name in .cache/bin
	envVar string
	args   func(addr, dataDir string, s *Server) ([]string, []string) // args, extra env
}

var minioKind = kind{
	name:   "minio",
	envVar: "CAIRN_MINIO",
	args: func(addr, dataDir string, s *Server) ([]string, []string) {
		return []string{"server", "--quiet", "--address", addr, "--console-address", freeAddr(), dataDir},
			[]string{
				"MINIO_ROOT_USER=" + s.AccessKey,
				"MINIO_ROOT_PASSWORD=" + s.SecretKey,
				"MINIO_REGION=" + Region,
				"MINIO_BROWSER=off",
				"MINIO_UPDATE=off",
			}
	},
}

var versityKind = kind{
	name:   "versitygw",
	envVar: "CAIRN_VERSITYGW",
	args: func(addr, dataDir string, s *Server) ([]string, []string) {
		return []string{"--access", s.AccessKey, "--secret", s.SecretKey, "--region", Region,
			"--port", addr, "posix", dataDir}, nil
	},
}

var (
	mu       sync.Mutex
	mainMode bool
	shared   = map[string]*Server{}
	started  []*Server
)

// Main runs the package's tests, sharing one process per server among
// them, stops the servers, and exits. Call it from TestMain.
func Main(m *testing.M) {
	mu.Lock()
	mainMode = true
	mu.Unlock()
	code := m.Run()
	mu.Lock()
	for _, s := range started {
		s.stop()
	}
	mu.Unlock()
	os.Exit(code)
}

// StartMinIO returns a fresh bucket on a running MinIO server.
func StartMinIO(t testing.TB) *Bucket { return start(t, minioKind) }

// StartVersityGW returns a fresh bucket on a running versitygw (posix
// backend) server.
func StartVersityGW(t testing.TB) *Bucket { return start(t, versityKind) }

// Servers are the S3 servers a test that must hold on every one runs
// against, by name: a test ranges over them rather than list them, so a
// server added here is tested everywhere.
var Servers = []struct {
	Name  string
	Start func(testing.TB) *Bucket
}{{"minio", StartMinIO}, {"versitygw", StartVersityGW}}

// Required reports whether missing servers fail tests instead of
// skipping them: CI=true or CAIRN_REQUIRE_SERVERS=1.
func Required() bool {
	return os.Getenv("CI") == "true" || os.Getenv("CAIRN_REQUIRE_SERVERS") == "1"
}

// StartOwnMinIO returns a fresh bucket on a MinIO server of the test's
// own, stopped when the test ends: for tests that pause the server
// (Server.Pause), which a shared one must not be.
func StartOwnMinIO(t testing.TB) *Bucket {
	t.Helper()
	bin := need(t, minioKind)
	s, err := launch(minioKind, bin)
	if err != nil {
		t.Fatalf("start %s: %v", minioKind.name, err)
	}
	t.Cleanup(s.stop)
	return bucketOn(t, s, minioKind)
}

// need returns the server binary, or skips the test (fails it when
// servers are required) if there is none or in -short mode.
func need(t testing.TB, k kind) string {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s: skipped in -short mode", k.name)
	}
	bin, err := binary(k)
	if err != nil {
		if Required() {
			t.Fatalf("%s server required (CI=true or CAIRN_REQUIRE_SERVERS=1) but not found: %v; run `make servers`", k.name, err)
		}
		t.Skipf("%s server not found (%v); run `make servers`", k.name, err)
	}
	return bin
}

// bucketOn makes a fresh bucket on s.
func bucketOn(t testing.TB, s *Server, k kind) *Bucket {
	t.Helper()
	name, err := s.makeBucket()
	if err != nil {
		t.Fatalf("%s: make bucket: %v\nserver log:\n%s", k.name, err, s.log.String())
	}
	return &Bucket{Server: s, Name: name}
}

func start(t testing.TB, k kind) *Bucket {
	t.Helper()
	bin := need(t, k)
	var err error
	mu.Lock()
	defer mu.Unlock()
	s := shared[k.name]
	if s != nil && s.exited() {
		t.Logf("%s: shared server had exited; log:\n%s", k.name, s.log.String())
		s = nil
	}
	if s == nil {
		if s, err = launch(k, bin); err != nil {
			t.Fatalf("start %s: %v", k.name, err)
		}
		if mainMode {
			shared[k.name] = s
			started = append(started, s)
		} else {
			t.Cleanup(s.stop)
		}
	}
	return bucketOn(t, s, k)
}

// binary finds the server binary: $ENVVAR, else <repo root>/.cache/bin/NAME.
func binary(k kind) (string, error) {
	if p := os.Getenv(k.envVar); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("$%s: %w", k.envVar, err)
		}
		return p, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	p := filepath.Join(root, ".cache", "bin", k.name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("$%s unset and %w", k.envVar, err)
	}
	return p, nil
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.Contains(b, []byte("module github.com/cairnlog/cairn\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repository root (go.mod of github.com/cairnlog/cairn) not found")
		}
		dir = parent
	}
}

// launch starts a server and waits until it answers S3 requests. A port
// taken between choosing and binding it makes the server exit; launch
// then tries again on another port.
func launch(k kind, bin string) (*Server, error) {
	var errs []error
	for try := 0; try < 3; try++ {
		s, err := launchOnce(k, bin)
		if err == nil {
			return s, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

func launchOnce(k kind, bin string) (*Server, error) {
	dir, err := os.MkdirTemp("", "cairn-"+k.name+"-")
	if err != nil {
		return nil, err
	}
	dataDir := filepath.Join(dir, "data")
	if err := os.Mkdir(dataDir, 0o755); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	addr := freeAddr()
	s := &Server{
		Name:      k.name,
		Host:      addr,
		Endpoint:  "http://" + addr,
		AccessKey: "cairn" + randHex(8),
		SecretKey: randHex(20),
		Region:    Region,
		dir:       dir,
		log:       &lockedBuffer{},
		done:      make(chan struct{}),
	}
	args, env := k.args(addr, dataDir, s)
	s.cmd = exec.Command(bin, args...)
	s.cmd.Env = append(cleanEnv(), env...)
	s.cmd.Dir = dir
	s.cmd.Stdout = s.log
	s.cmd.Stderr = s.log
	// If the test binary dies without cleaning up, take the server along (Linux).
	s.cmd.SysProcAttr = procAttr()
	if err := s.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	if err := s.waitReady(60 * time.Second); err != nil {
		s.stop()
		return nil, fmt.Errorf("%s on %s: %w\nserver log:\n%s", k.name, addr, err, s.log.String())
	}
	return s, nil
}

// cleanEnv is the test's environment without settings that could
// redirect or reconfigure the server.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "MINIO_") || strings.HasPrefix(kv, "AWS_") || strings.HasPrefix(kv, "VGW_") || strings.HasPrefix(kv, "ROOT_") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// Client returns a client of the server (minio-go), for a test that
// puts or reads objects behind cairn's back, as a console or another
// tool would. It retries a request that fails as minio-go does by
// default: versitygw, for one, drops about one connection in 300 that
// puts a folder marker ("KEY/"), before it answers.
func (s *Server) Client(t testing.TB) *minio.Client {
	t.Helper()
	c, err := s.client(0)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// client returns a minio-go client of the server that makes each
// request at most tries times; 0 means minio-go's default.
func (s *Server) client(tries int) (*minio.Client, error) {
	return minio.New(s.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""),
		Region:       s.Region,
		BucketLookup: minio.BucketLookupPath,
		MaxRetries:   tries,
	})
}

func (s *Server) waitReady(timeout time.Duration) error {
	c, err := s.client(1) // the loop below is the retry
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if s.exited() {
			return fmt.Errorf("exited before it was ready: %v", s.cmd.ProcessState)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, last = c.ListBuckets(ctx)
		cancel()
		if last == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("not ready after %v: %v", timeout, last)
}

func (s *Server) makeBucket() (string, error) {
	c, err := s.client(0)
	if err != nil {
		return "", err
	}
	name := "cairn-test-" + randHex(6)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.MakeBucket(ctx, name, minio.MakeBucketOptions{Region: s.Region}); err != nil {
		return "", err
	}
	return name, nil
}

func (s *Server) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Pause stops the server process (SIGSTOP): connections are still
// accepted by the kernel, but nothing answers, as with a hung server.
// Windows cannot: there the error is errors.ErrUnsupported.
func (s *Server) Pause() error { return pause.Stop(s.cmd.Process) }

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() error { return pause.Continue(s.cmd.Process) }

// Log returns what the server has written so far.
func (s *Server) Log() string { return s.log.String() }

func (s *Server) stop() {
	if !s.exited() {
		if s.cmd.Process.Signal(syscall.SIGTERM) != nil {
			s.cmd.Process.Kill() // no SIGTERM on Windows
		}
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			s.cmd.Process.Kill()
			<-s.done
		}
	}
	os.RemoveAll(s.dir)
}

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("s3test: no free port: %v", err))
	}
	defer l.Close()
	return l.Addr().String()
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 1<<20 { // keep memory bounded; the head has the startup errors
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// LaunchMinIO starts a MinIO server outside of a test, for programs such
// as the benchmark: the binary is found as for StartMinIO, and the caller
// must call Stop. Missing binaries are an error.
func LaunchMinIO() (*Server, error) {
	bin, err := binary(minioKind)
	if err != nil {
		return nil, fmt.Errorf("minio server not found (%v); run `make minio`", err)
	}
	return launch(minioKind, bin)
}

// NewBucket makes a fresh, empty bucket on the server and returns its name.
func (s *Server) NewBucket() (string, error) { return s.makeBucket() }

// Stop stops a server started by LaunchMinIO and removes its data.
func (s *Server) Stop() { s.stop() }
