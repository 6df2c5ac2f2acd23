package bench

import (
	"github.com/cairnlog/cairn/internal/s3test"
	"strings"
	"testing"
)

// TestHistoryLocal runs the history phase on a short session and checks
// its figures are plausible and rendered.
func TestHistoryLocal(t *testing.T) {
	cfg := tiny(t)
	cfg.HistorySteps = []int{40, 80}
	h := run[HistoryResult](t, cfg, "history-local", "")
	if len(h.Points) != 2 {
		t.Fatalf("history points %+v, want 2", h.Points)
	}
	for i, p := range h.Points {
		if p.Steps != cfg.HistorySteps[i] || p.Appended <= 0 || p.Stored < p.Appended/2 || p.Puts < int64(p.Steps) || p.Raw < p.Appended {
			t.Fatalf("implausible history point %+v", p)
		}
	}
	r := &Results{Config: cfg, History: h}
	md := historyMarkdown(r)
	for _, want := range []string{"stored ÷ appended", "the same before compression, 80 steps", "PUTs a step"} {
		if !strings.Contains(md, want) {
			t.Errorf("history rows lack %q:\n%s", want, md)
		}
	}
}

func TestMain(m *testing.M) { s3test.Main(m) }

// TestHistoryMinIO runs the MinIO history phase on a short session: a
// fresh resume against one GET of the same bytes.
func TestHistoryMinIO(t *testing.T) {
	b := s3test.StartMinIO(t)
	cfg := tiny(t)
	cfg.HistoryResume = 30
	cfg.MinIO = &MinIOServer{Host: b.Host, AccessKey: b.AccessKey, SecretKey: b.SecretKey, Bucket: b.Name}
	t.Setenv("AWS_ACCESS_KEY_ID", b.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", b.SecretKey)
	h := run[HistoryResult](t, cfg, "history-minio", "")
	if h.ResumeSteps != 30 || h.StateBytes < 30*cfg.HistoryMessage || h.Resume.N != 5 || h.GET.N != 5 || h.ResumeGets < 2 {
		t.Fatalf("implausible MinIO history figures %+v", h)
	}
	if md := historyMarkdown(&Results{Config: cfg, History: h}); !strings.Contains(md, "fresh resume on MinIO") {
		t.Errorf("no resume row:\n%s", md)
	}
}
