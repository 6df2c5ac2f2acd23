package bench

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/minio"
	"github.com/cairnlog/cairn/internal/workload"
)

func init() { phases["append-minio"] = phaseAppendMinIO }

// minioURL is the workspace URL of prefix in the configured bucket.
func (m *MinIOServer) url(prefix string) string {
	return fmt.Sprintf("minio://%s/%s/%s?secure=false", m.Host, m.Bucket, prefix)
}

func (m *MinIOServer) store(ctx context.Context, prefix string) (cas.Store, error) {
	return minio.Open(ctx, m.Bucket, prefix, minio.Options{Endpoint: m.Host, AccessKey: m.AccessKey, SecretKey: m.SecretKey})
}

// phaseAppendMinIO commits the append workload to MinIO and, after each
// step, makes one plain PUT of the same size as that step's object to the
// same server, through the same client library: the physical limit.
func phaseAppendMinIO(ctx context.Context, cfg Config, _ string) (any, error) {
	m := cfg.MinIO
	if m == nil {
		return nil, errors.New("no MinIO server configured")
	}
	url := m.url("cairn")
	ws, err := cairn.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	raw, err := m.store(ctx, "raw")
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
		if err := c.commit(ctx, cairn.JSON(doc), int64(changed)); err != nil {
			return nil, err
		}
	}
	r := c.result()
	l := summarize(puts)
	r.RawPut = &l
	return r, nil
}
