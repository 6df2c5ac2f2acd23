package main

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn/internal/s3test"
)

// s3Proxy sits between cairn processes and a real S3 server. It forwards
// every request unchanged (SigV4 signs the Host header, which the proxy
// passes through, so the server accepts the signatures) and counts the
// requests that reach the server by kind: the ground truth for the
// counts cairn reports. It can also hold the PUTs of step objects until a
// given number of writers have sent theirs, then release them all at
// once, so that racing writers hit the server's conditional create at the
// same moment. The fencing itself is decided by the server. And it can
// lose the answer to a step PUT that reached the server.
type s3Proxy struct {
	Host string // 127.0.0.1:PORT
	srv  *httptest.Server

	mu      sync.Mutex
	counts  httpCounts
	barrier *barrier
	late    bool // a barrier timed out before all its writers arrived
	lose    int  // step PUTs still to forward whose answer becomes a 500
}

// httpCounts are S3 requests as the server sees them.
type httpCounts struct {
	Put, Get, List, Head, Delete, Other int64
}

func (c httpCounts) sub(o httpCounts) httpCounts {
	return httpCounts{c.Put - o.Put, c.Get - o.Get, c.List - o.List, c.Head - o.Head, c.Delete - o.Delete, c.Other - o.Other}
}

type barrier struct {
	want, arrived int
	release       chan struct{}
}

// barrierTimeout bounds how long a held PUT waits for the others.
const barrierTimeout = 2 * time.Minute

// stepPut matches the path of a step object: /BUCKET/PREFIX/steps/S/<20 digits>.
var stepPut = regexp.MustCompile(`/steps/[A-Za-z0-9._-]+/[0-9]{20}$`)

func newS3Proxy(t *testing.T, endpoint string) *s3Proxy {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = &http.Transport{MaxIdleConnsPerHost: 64}
	p := &s3Proxy{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.count(r)
		if r.Method == http.MethodPut && stepPut.MatchString(r.URL.Path) {
			p.hold()
			if p.takeLoss() {
				rp.ServeHTTP(httptest.NewRecorder(), r)
				http.Error(w, "the answer was lost", http.StatusInternalServerError)
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	p.Host = strings.TrimPrefix(p.srv.URL, "http://")
	return p
}

func (p *s3Proxy) count(r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case r.Method == http.MethodPut:
		p.counts.Put++
	case r.Method == http.MethodGet && r.URL.Query().Has("list-type"):
		p.counts.List++
	case r.Method == http.MethodGet:
		p.counts.Get++
	case r.Method == http.MethodHead:
		p.counts.Head++
	case r.Method == http.MethodDelete:
		p.counts.Delete++
	default:
		p.counts.Other++
	}
}

// Counts returns the requests forwarded so far.
func (p *s3Proxy) Counts() httpCounts {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts
}

// holdSteps makes the next n step-object PUTs wait until all n have
// arrived.
func (p *s3Proxy) holdSteps(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.barrier = &barrier{want: n, release: make(chan struct{})}
}

func (p *s3Proxy) hold() {
	p.mu.Lock()
	b := p.barrier
	if b != nil {
		b.arrived++
		if b.arrived == b.want {
			close(b.release)
			p.barrier = nil
		}
	}
	p.mu.Unlock()
	if b == nil {
		return
	}
	select {
	case <-b.release:
	case <-time.After(barrierTimeout):
		p.mu.Lock()
		p.late = true
		if p.barrier == b {
			p.barrier = nil
		}
		p.mu.Unlock()
	}
}

// loseSteps makes the next n step-object PUTs reach the server and
// answers each with a 500, as a connection lost after the write would.
func (p *s3Proxy) loseSteps(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lose = n
}

// takeLoss reports whether this step PUT's answer is to be lost.
func (p *s3Proxy) takeLoss() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lose == 0 {
		return false
	}
	p.lose--
	return true
}

// timedOut reports whether a barrier ever gave up waiting.
func (p *s3Proxy) timedOut() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.late
}

// processEnv returns the environment of a cairn process on another
// machine: the test's environment without cairn, AWS or XDG settings, a
// fresh home directory, and the server's credentials.
func processEnv(t *testing.T, b *s3test.Bucket, home string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "CAIRN_") || strings.HasPrefix(name, "AWS_") || strings.HasPrefix(name, "XDG_") ||
			strings.HasPrefix(name, "MINIO_") || name == "HOME" {
			continue
		}
		env = append(env, kv)
	}
	for _, d := range []string{"data", "cache", "config", "state"} {
		if err := os.MkdirAll(home+"/"+d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return append(env,
		"HOME="+home,
		"XDG_DATA_HOME="+home+"/data",
		"XDG_CACHE_HOME="+home+"/cache",
		"XDG_CONFIG_HOME="+home+"/config",
		"XDG_STATE_HOME="+home+"/state",
		"AWS_ACCESS_KEY_ID="+b.AccessKey,
		"AWS_SECRET_ACCESS_KEY="+b.SecretKey,
		"AWS_REGION="+b.Region,
		"AWS_EC2_METADATA_DISABLED=true",
	)
}
