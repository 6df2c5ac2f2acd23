package bench

import (
	"strings"
	"testing"

	"github.com/cairnlog/cairn/internal/s3test"
)

// TestAppendMinIOBackends runs the MinIO phase through both S3 clients:
// cairn's commits and the peer's PUTs go to the same server through the
// same backend.
func TestAppendMinIOBackends(t *testing.T) {
	b := s3test.StartMinIO(t)
	t.Setenv("AWS_ACCESS_KEY_ID", b.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", b.SecretKey)
	for _, backend := range []string{"minio", "s3"} {
		t.Run(backend, func(t *testing.T) {
			cfg := tiny(t)
			cfg.MinIOSteps = 5
			cfg.MinIO = &MinIOServer{Host: b.Host, AccessKey: b.AccessKey, SecretKey: b.SecretKey, Bucket: b.Name}
			r := run[CommitResult](t, cfg, "append-minio", backend)
			checkCommits(t, r, cfg.MinIOSteps)
			if !strings.HasPrefix(r.URL, backend+"://") {
				t.Errorf("committed to %s, want a %s:// store", r.URL, backend)
			}
			if r.RawPut == nil || r.RawPut.N != cfg.MinIOSteps-1 || r.RawPut.P50 <= 0 {
				t.Errorf("peer PUTs %+v, want one a step after the first", r.RawPut)
			}
			res := &Results{Config: cfg}
			want := "commit latency p50, MinIO, append"
			if backend == "s3" {
				res.MinIOS3, want = r, "commit latency p50, MinIO through s3:// (aws-sdk-go-v2), append"
			} else {
				res.MinIO = r
			}
			if md := Markdown(res); !strings.Contains(md, want) {
				t.Errorf("the report lacks %q:\n%s", want, md)
			}
		})
	}
	cfg := tiny(t)
	cfg.MinIO = &MinIOServer{Host: b.Host, AccessKey: b.AccessKey, SecretKey: b.SecretKey, Bucket: b.Name}
	if _, err := phases["append-minio"](t.Context(), cfg, "gcs"); err == nil || !strings.Contains(err.Error(), "want minio or s3") {
		t.Errorf("unknown backend: %v", err)
	}
}
