package bench

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/internal/s3test"
)

// Long sessions (issue 14, targets 5 and 6).
//
// history-local writes a session of random (incompressible: base64 of
// random bytes) appends with every step kept, as JSON Patch appends so
// the workload itself costs the same at any length, and measures the
// store's bytes against the bytes appended at each of HistorySteps.
// history-minio writes HistoryResume such steps to MinIO and times a
// fresh resume against one GET of the state's bytes as a single object.
func init() {
	phases["history-local"] = phaseHistoryLocal
	phases["history-minio"] = phaseHistoryMinIO
}

// HistoryPoint is a long append session's stored bytes at one length.
type HistoryPoint struct {
	Steps    int   `json:"steps"`
	Appended int64 `json:"appended_bytes"` // bytes of the appended messages
	Stored   int64 `json:"stored_bytes"`   // apparent size of the store
	Puts     int64 `json:"puts"`           // PUTs of every commit so far
	// Raw is what the commits so far wrote before compression, merges
	// aside: each step's new blobs and its manifest.
	Raw int64 `json:"raw_bytes"`
}

// Ratio is stored ÷ appended.
func (p HistoryPoint) Ratio() float64 { return ratio(float64(p.Stored), float64(p.Appended)) }

// HistoryResult is what the history phases measured.
type HistoryResult struct {
	Where  string         `json:"where"`
	Points []HistoryPoint `json:"points"`
	// ResumeSteps is the length of the MinIO session; Resume the fresh
	// resumes' times (find the head and read the whole state), GET one
	// GET of the state's bytes stored as one object, StateBytes its size.
	ResumeSteps int     `json:"resume_steps"`
	Resume      Latency `json:"resume"`
	GET         Latency `json:"get"`
	StateBytes  int     `json:"state_bytes"`
	ResumeGets  int64   `json:"resume_gets"`
}

// historyAppender makes the history workload's steps: one message of
// HistoryMessage random bytes (base64), appended by a JSON Patch.
type historyAppender struct {
	rng  *rand.ChaCha8
	size int
	buf  []byte
}

func newHistoryAppender(cfg Config) *historyAppender {
	var seed [32]byte
	seed[0] = byte(cfg.Seed)
	return &historyAppender{rng: rand.NewChaCha8(seed), size: max(16, cfg.HistoryMessage)}
}

// next returns the step's state and the bytes it appends.
func (h *historyAppender) next(first bool) (cairn.State, int64) {
	raw := make([]byte, h.size*3/4)
	h.rng.Read(raw)
	msg := base64.RawStdEncoding.EncodeToString(raw)
	if first {
		return cairn.JSON([]byte(`{"messages":["` + msg + `"]}`)), int64(len(msg))
	}
	h.buf = append(h.buf[:0], `[{"op":"add","path":"/messages/-","value":"`...)
	h.buf = append(h.buf, msg...)
	h.buf = append(h.buf, `"}]`...)
	return cairn.Patch(slices.Clone(h.buf)), int64(len(msg))
}

func phaseHistoryLocal(ctx context.Context, cfg Config, _ string) (any, error) {
	if len(cfg.HistorySteps) == 0 {
		return HistoryResult{}, nil
	}
	dir := filepath.Join(cmpOr(cfg.ResumeDir, cfg.Dir), "cairn-history")
	ws, err := openLocal(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	defer ws.Close()
	s, err := ws.Session("history")
	if err != nil {
		return nil, err
	}
	res := HistoryResult{Where: "the local disk"}
	if cfg.ResumeDir != "" {
		res.Where = "a tmpfs"
	}
	gen := newHistoryAppender(cfg)
	var appended, raw int64
	last := slices.Max(cfg.HistorySteps)
	start := time.Now()
	for n := 1; n <= last; n++ {
		state, a := gen.next(n == 1)
		st, err := s.Commit(ctx, state, cairn.CommitOptions{})
		if err != nil {
			return nil, err
		}
		appended += a
		raw += st.NewBlobBytes + st.ManifestBytes
		if slices.Contains(cfg.HistorySteps, n) {
			stored, err := dirBytes(dir)
			if err != nil {
				return nil, err
			}
			res.Points = append(res.Points, HistoryPoint{Steps: n, Appended: appended, Stored: stored, Puts: ws.Requests().Put, Raw: raw})
			fmt.Fprintf(os.Stderr, "  history: %d steps, stored ÷ appended %.3f, %v\n", n, res.Points[len(res.Points)-1].Ratio(), time.Since(start).Round(time.Second))
		}
	}
	return res, nil
}

func phaseHistoryMinIO(ctx context.Context, cfg Config, _ string) (any, error) {
	m := cfg.MinIO
	if m == nil {
		return nil, errors.New("no MinIO server configured")
	}
	res := HistoryResult{ResumeSteps: cfg.HistoryResume}
	url := m.url("minio", "history")
	ws, err := cairn.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	s, err := ws.Session("history")
	if err != nil {
		return nil, err
	}
	gen := newHistoryAppender(cfg)
	for n := 1; n <= cfg.HistoryResume; n++ {
		state, _ := gen.next(n == 1)
		if _, err := s.Commit(ctx, state, cairn.CommitOptions{}); err != nil {
			return nil, err
		}
	}
	ws.Close()
	// Fresh resumes: a new workspace each time, so nothing is cached.
	var doc []byte
	var resumes, gets []time.Duration
	for range 5 {
		start := time.Now()
		fresh, err := cairn.Open(ctx, url)
		if err != nil {
			return nil, err
		}
		fs, err := fresh.Session("history")
		if err != nil {
			return nil, err
		}
		head, err := fs.Head(ctx)
		if err != nil {
			return nil, err
		}
		if doc, err = head.JSON(ctx); err != nil {
			return nil, err
		}
		resumes = append(resumes, time.Since(start))
		res.ResumeGets = fresh.Requests().Get
		fresh.Close()
	}
	res.StateBytes = len(doc)
	raw, err := rawStore(ctx, m.url("minio", "history-raw"))
	if err != nil {
		return nil, err
	}
	if err := raw.Put(ctx, "state", doc, cas.PutOptions{}); err != nil {
		return nil, err
	}
	for range 5 {
		start := time.Now()
		b, err := raw.Get(ctx, "state", 0, -1)
		if err != nil {
			return nil, err
		}
		if len(b) != len(doc) {
			return nil, fmt.Errorf("GET of the state returned %d bytes, want %d", len(b), len(doc))
		}
		gets = append(gets, time.Since(start))
	}
	res.Resume, res.GET = summarize(resumes), summarize(gets)
	return res, nil
}

// runHistory runs the history phases: the local one, then the MinIO one
// on a server of its own.
func runHistory(ctx context.Context, cfg Config, step func(string, string, any) error, r *Results) error {
	if err := step("history-local", "", &r.History); err != nil {
		return err
	}
	srv, err := s3test.LaunchMinIO()
	if err != nil {
		return err
	}
	defer srv.Stop()
	bucket, err := srv.NewBucket()
	if err != nil {
		return err
	}
	mcfg := cfg
	mcfg.MinIO = &MinIOServer{Host: srv.Host, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, Bucket: bucket}
	os.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	os.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	var mres HistoryResult
	u, err := runChild(ctx, mcfg, "history-minio", "", &mres)
	if err != nil {
		return err
	}
	r.Usage = append(r.Usage, u)
	r.History.ResumeSteps, r.History.Resume, r.History.GET = mres.ResumeSteps, mres.Resume, mres.GET
	r.History.StateBytes, r.History.ResumeGets = mres.StateBytes, mres.ResumeGets
	return nil
}

// setupWindows summarises a long session's commit latencies (took[i] is
// step i+1's) around step 1,000, or the session's middle if it is
// shorter, and over its last 200 steps.
func setupWindows(took []time.Duration) (early, late Latency) {
	const half = pairedSteps / 2
	n := len(took)
	if n == 0 {
		return
	}
	mid := min(pairedAround, n/2)
	early = summarize(took[max(1, mid-half):max(1, min(n, mid+half))])
	late = summarize(took[max(0, n-2*half):])
	return early, late
}

// Targets 5 and 6.
const (
	targetLongRSS     = 1.2 // writer's peak RSS, longest ÷ shortest long session
	targetLongLatency = 1.2 // commit p50 at the end of the longest ÷ around step 1,000
	targetHistory     = 1.5 // stored ÷ appended, every step kept
	targetHistoryRaw  = 1.2 // the same before compression, merges aside
	targetHistoryPuts = 1.1 // PUTs a step, amortised
	targetHistoryGet  = 3.0 // fresh resume ÷ one GET of the state's bytes
)

// historyMarkdown renders the rows of targets 5 and 6.
func historyMarkdown(r *Results) string {
	var b []byte
	w := func(f string, a ...any) { b = fmt.Appendf(b, f, a...) }
	// Target 5: the resume-setup phases are the windowed writers.
	var rss []Usage
	for _, u := range r.Usage {
		if u.Phase == "resume-setup" {
			rss = append(rss, u)
		}
	}
	if n := len(rss); n >= 2 && len(r.Setups) >= 2 {
		q := ratio(float64(rss[n-1].MaxRSS), float64(rss[0].MaxRSS))
		w("| writer's peak RSS, windowed session of %s steps ÷ %s steps | %s | %s | %.2f× | ≤ %.1f× | %s |\n",
			rss[n-1].Arg, rss[0].Arg, mib(rss[n-1].MaxRSS), mib(rss[0].MaxRSS), q, targetLongRSS, yes(q <= targetLongRSS))
		long := r.Setups[len(r.Setups)-1]
		q = ratio(long.Late.P50, long.Early.P50)
		around := fmt.Sprintf("around step %s", commas(min(pairedAround, long.Steps/2)))
		if long.Paired {
			around = fmt.Sprintf("a session around step %s, committed in turn", commas(pairedAround))
		}
		w("| commit p50, windowed session, last %d of %s steps ÷ %s | %s | %s | %.2f× | ≤ %.1f× | %s |\n",
			pairedSteps, commas(long.Steps), around, ms(long.Late.P50), ms(long.Early.P50), q, targetLongLatency, yes(q <= targetLongLatency))
	}
	h := r.History
	flat := true
	for _, p := range h.Points {
		q := p.Ratio()
		flat = flat && q <= targetHistory
		w("| stored ÷ appended, random appends, every step kept, %s steps (%s) | %s | appended: %s | %.3f | ≤ %.1f, flat | %s |\n",
			commas(p.Steps), h.Where, size(p.Stored), size(p.Appended), q, targetHistory, yes(q <= targetHistory))
	}
	for _, p := range h.Points {
		// The design's "before compression: ≤ 1.2 a step": what the
		// steps cost beside what they appended, whatever zstd makes of
		// the appended text (base64, which it stores in about 3/4).
		q := ratio(float64(p.Raw), float64(p.Appended))
		w("| the same before compression, %s steps: each step's new blobs and manifest, merges aside | %s | appended: %s | %.3f | ≤ %.1f | %s |\n",
			commas(p.Steps), size(p.Raw), size(p.Appended), q, targetHistoryRaw, yes(q <= targetHistoryRaw))
	}
	if n := len(h.Points); n > 0 {
		p := h.Points[n-1]
		q := ratio(float64(p.Puts), float64(p.Steps))
		w("| PUTs a step, the same session, amortised over %s steps | %.3f | | | ≤ %.1f | %s |\n",
			commas(p.Steps), q, targetHistoryPuts, yes(q <= targetHistoryPuts))
		if n > 1 {
			q := ratio(p.Ratio(), h.Points[0].Ratio())
			w("| the same: stored ÷ appended at %s steps over at %s | %.3f | | | flat (≤ 1.1) | %s |\n",
				commas(p.Steps), commas(h.Points[0].Steps), q, yes(q <= 1.1 && flat))
		}
	}
	if h.ResumeSteps > 0 {
		q := ratio(h.Resume.P50, h.GET.P50)
		w("| fresh resume on MinIO, %s-step random-append session (%s, %d GETs), p50 | %s | one GET of the same bytes as one object: %s | %.2f× | ≤ %.0f× | %s |\n",
			commas(h.ResumeSteps), size(int64(h.StateBytes)), h.ResumeGets, ms(h.Resume.P50), ms(h.GET.P50), q, targetHistoryGet, yes(q <= targetHistoryGet))
	}
	return string(b)
}
