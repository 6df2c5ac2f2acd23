package bench

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/metered"
	_ "github.com/cairnlog/cairn/cas/minio" // minio:// URLs
	"github.com/cairnlog/cairn/cas/retry"
	_ "github.com/cairnlog/cairn/cas/s3" // s3:// URLs
	"github.com/cairnlog/cairn/internal/workload"
)

func init() { phases["append-minio"] = phaseAppendMinIO }

// minioPause is the idle time before every timed request of the MinIO
// phase, the commit and the peer's PUT alike. A PUT sent right behind
// another one finds MinIO still busy from it and is faster than one
// after a pause: measured back to back, the peer's PUT (right after the
// commit's) was ~0.6-0.9 ms faster than the very same PUT made after the
// workload's CPU work, which is how every commit's PUT is made. With the
// same pause before each, neither borrows the other's warm server.
const minioPause = 2 * time.Millisecond

// url is the store URL of prefix in the configured bucket, through
// backend "minio" (minio-go) or "s3" (aws-sdk-go-v2).
func (m *MinIOServer) url(backend, prefix string) string {
	if backend == "s3" {
		return fmt.Sprintf("s3://%s/%s?endpoint=http://%s", m.Bucket, prefix, m.Host)
	}
	return fmt.Sprintf("minio://%s/%s/%s?secure=false", m.Host, m.Bucket, prefix)
}

// rawStore opens the store a URL names with the client stack a
// workspace puts over a remote store (the request counter under the
// retry wrapper), but none of cairn's work above it: the peer's PUT
// goes through the same client, signing, checksum and timeout settings
// as the commit's.
func rawStore(ctx context.Context, raw string) (cas.Store, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	b, ok := cas.Lookup(u.Scheme)
	if !ok {
		return nil, fmt.Errorf("no backend for %s", u.Scheme)
	}
	s, err := b.Open(ctx, u)
	if err != nil {
		return nil, err
	}
	return retry.New(metered.New(s), retry.DefaultPolicy), nil
}

// phaseAppendMinIO commits the append workload to MinIO through backend
// arg ("minio", the default, or "s3") and, after each step, makes one
// plain PUT of the same size as that step's object to the same server,
// through the same client stack: the physical limit.
func phaseAppendMinIO(ctx context.Context, cfg Config, arg string) (any, error) {
	m := cfg.MinIO
	if m == nil {
		return nil, errors.New("no MinIO server configured")
	}
	backend := cmpOr(arg, "minio")
	if backend != "minio" && backend != "s3" {
		return nil, fmt.Errorf("backend %q: want minio or s3", arg)
	}
	url := m.url(backend, "cairn-"+backend)
	ws, err := cairn.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	raw, err := rawStore(ctx, m.url(backend, "raw-"+backend))
	if err != nil {
		return nil, err
	}
	c, err := newCommitter(ws, "minio", "append", "append", url)
	if err != nil {
		return nil, err
	}
	var puts []time.Duration
	payload := make([]byte, 0)
	c.afterCommit = func(n int64) error {
		if c.res.Steps == 1 {
			return nil
		}
		if int64(cap(payload)) < n {
			payload = make([]byte, n)
			rand.Read(payload) // incompressible, like a zstd'd step object
		}
		p := payload[:n]
		p[0] = byte(c.res.Steps)
		time.Sleep(minioPause)
		start := time.Now()
		if err := raw.Put(ctx, fmt.Sprintf("put/%08d", c.res.Steps), p, cas.PutOptions{}); err != nil {
			return err
		}
		puts = append(puts, time.Since(start))
		return nil
	}
	gen := workload.NewAppend(workload.AppendOptions{Seed: cfg.Seed})
	for range cfg.MinIOSteps {
		doc, changed := gen.Next()
		time.Sleep(minioPause)
		if err := c.commit(ctx, cairn.JSON(doc), int64(changed)); err != nil {
			return nil, err
		}
	}
	r := c.result()
	l := summarize(puts)
	r.RawPut = &l
	return r, nil
}
