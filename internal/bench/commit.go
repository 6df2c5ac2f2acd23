package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/workload"
)

func init() {
	phases["fsync"] = phaseFsync
	phases["append-local"] = phaseAppendLocal
	phases["files-local"] = phaseFilesLocal
	phases["resume-setup"] = phaseResumeSetup
}

// FsyncResult is the local disk's physical limit for a small durable write.
type FsyncResult struct {
	Latency Latency `json:"latency"`
}

// phaseFsync times creating a 4 KiB file, writing it and fsyncing it.
func phaseFsync(_ context.Context, cfg Config, _ string) (any, error) {
	dir := filepath.Join(cfg.Dir, "fsync")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	buf := make([]byte, 4096)
	var ds []time.Duration
	for i := range cfg.FsyncSamples {
		buf[0] = byte(i)
		start := time.Now()
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%06d", i)))
		if err != nil {
			return nil, err
		}
		if _, err := f.Write(buf); err != nil {
			return nil, err
		}
		if err := f.Sync(); err != nil {
			return nil, err
		}
		if err := f.Close(); err != nil {
			return nil, err
		}
		ds = append(ds, time.Since(start))
	}
	return FsyncResult{Latency: summarize(ds)}, os.RemoveAll(dir)
}

// CommitResult describes a run of cairn commits. Everything but Series
// and FirstStep covers steps 2..N, the steady state after the first
// commit stored the initial state.
type CommitResult struct {
	Store     string  `json:"store"`
	Workload  string  `json:"workload"`
	Steps     int     `json:"steps"`
	Latency   Latency `json:"latency"`
	Requests  PerStep `json:"requests_per_step"`
	MaxPuts   int64   `json:"max_puts_in_a_step"`
	Changed   int64   `json:"changed_bytes"`    // bytes that changed
	RawStored int64   `json:"raw_stored_bytes"` // manifests + new blobs before compression
	Stored    int64   `json:"stored_bytes"`     // bytes written to the store
	FirstStep int64   `json:"first_step_bytes"` // bytes written by step 1
	StoreSize int64   `json:"store_size_bytes"` // apparent size of the store at the end (local only)
	// Series is the store's cumulative bytes written after each step.
	Series []int64 `json:"series"`
	// StepMS is each step's commit latency in ms, steps 2..N.
	StepMS []float64 `json:"step_ms"`
	// RawPut is one plain PUT of each step object's size (MinIO only).
	RawPut *Latency `json:"raw_put,omitempty"`
	// Session and URL let the resume phase reopen the store.
	Session string `json:"session"`
	URL     string `json:"url"`
}

// PerStep is average requests per step by kind.
type PerStep struct {
	Put    float64 `json:"put"`
	Get    float64 `json:"get"`
	List   float64 `json:"list"`
	Head   float64 `json:"head"`
	Delete float64 `json:"delete"`
}

// committer drives a session and records what every commit cost.
type committer struct {
	ws      *cairn.Workspace
	s       *cairn.Session
	res     CommitResult
	latency []time.Duration
	total   cairn.Requests
	// afterCommit, if set, runs after each step outside the timing with
	// the step object's stored size.
	afterCommit func(stepObjectBytes int64) error
}

func newCommitter(ws *cairn.Workspace, store, wl, session, url string) (*committer, error) {
	s, err := ws.Session(session)
	if err != nil {
		return nil, err
	}
	return &committer{ws: ws, s: s, res: CommitResult{Store: store, Workload: wl, Session: session, URL: url}}, nil
}

func (c *committer) commit(ctx context.Context, state cairn.State, changed int64) error {
	before := c.ws.Requests()
	start := time.Now()
	st, err := c.s.Commit(ctx, state, cairn.CommitOptions{Record: []byte(`{"bench":true}`)})
	took := time.Since(start)
	if err != nil {
		return err
	}
	used := c.ws.Requests().Sub(before)
	c.res.Steps++
	written := used.BytesWritten
	prev := int64(0)
	if n := len(c.res.Series); n > 0 {
		prev = c.res.Series[n-1]
	}
	c.res.Series = append(c.res.Series, prev+written)
	if c.res.Steps == 1 {
		c.res.FirstStep = written
	} else {
		raw, man := st.NewBlobBytes, st.ManifestBytes
		c.latency = append(c.latency, took)
		c.res.StepMS = append(c.res.StepMS, float64(took)/1e6)
		c.total.Put += used.Put
		c.total.Get += used.Get
		c.total.List += used.List
		c.total.Head += used.Head
		c.total.Delete += used.Delete
		c.res.MaxPuts = max(c.res.MaxPuts, used.Put)
		c.res.Changed += changed
		c.res.RawStored += raw + man
		c.res.Stored += written
	}
	if c.afterCommit != nil {
		return c.afterCommit(st.StoredBytes)
	}
	return nil
}

func (c *committer) result() CommitResult {
	r := c.res
	r.Latency = summarize(c.latency)
	if n := float64(len(c.latency)); n > 0 {
		r.Requests = PerStep{Put: float64(c.total.Put) / n, Get: float64(c.total.Get) / n,
			List: float64(c.total.List) / n, Head: float64(c.total.Head) / n, Delete: float64(c.total.Delete) / n}
	}
	return r
}

// openLocal opens a fresh cairn workspace in dir.
func openLocal(ctx context.Context, dir string) (*cairn.Workspace, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	return cairn.Open(ctx, dir)
}

// phaseAppendLocal commits the append workload to a local store.
func phaseAppendLocal(ctx context.Context, cfg Config, _ string) (any, error) {
	dir := filepath.Join(cfg.Dir, "cairn-append")
	ws, err := openLocal(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	c, err := newCommitter(ws, "local", "append", "append", dir)
	if err != nil {
		return nil, err
	}
	gen := workload.NewAppend(workload.AppendOptions{Seed: cfg.Seed})
	for range cfg.AppendSteps {
		doc, changed := gen.Next()
		if err := c.commit(ctx, cairn.JSON(doc), int64(changed)); err != nil {
			return nil, err
		}
	}
	r := c.result()
	r.StoreSize, err = dirBytes(dir)
	return r, err
}

// phaseFilesLocal commits the files workload (a directory state) to a
// local store.
func phaseFilesLocal(ctx context.Context, cfg Config, _ string) (any, error) {
	dir := filepath.Join(cfg.Dir, "cairn-files")
	work := filepath.Join(cfg.Dir, "files-work")
	cache := filepath.Join(cfg.Dir, "files-cache")
	if err := os.RemoveAll(cache); err != nil {
		return nil, err
	}
	ws, err := openLocal(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	if err := os.RemoveAll(work); err != nil {
		return nil, err
	}
	c, err := newCommitter(ws, "local", "files", "files", dir)
	if err != nil {
		return nil, err
	}
	gen := workload.NewFiles(workload.FilesOptions{Seed: cfg.Seed, Count: cfg.FilesCount})
	for range cfg.FilesSteps {
		ch := gen.Next()
		if err := workload.Apply(work, ch); err != nil {
			return nil, err
		}
		if err := c.commit(ctx, cairn.DirWithCache(work, cache), ch.Changed); err != nil {
			return nil, err
		}
	}
	r := c.result()
	r.StoreSize, err = dirBytes(dir)
	return r, err
}

// SetupResult is a long session written for the resume phase.
type SetupResult struct {
	Steps   int           `json:"steps"`
	Took    time.Duration `json:"took_ns"`
	Session string        `json:"session"`
	URL     string        `json:"url"`
	Where   string        `json:"where"` // "the local disk" or "a tmpfs"
	// Early and Late are commit latencies around step 1,000 (or the
	// session's middle, if shorter) and over its last steps (target 5).
	Early Latency `json:"early_latency"`
	Late  Latency `json:"late_latency"`
}

// phaseResumeSetup writes a session of arg steps of the windowed append
// workload (the state keeps the last ResumeWindow messages) to a local
// store, for phaseResume to open.
func phaseResumeSetup(ctx context.Context, cfg Config, arg string) (any, error) {
	var steps int
	if _, err := fmt.Sscan(arg, &steps); err != nil {
		return nil, fmt.Errorf("steps %q: %w", arg, err)
	}
	dir := filepath.Join(cmpOr(cfg.ResumeDir, cfg.Dir), "cairn-resume-"+arg)
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	ws, err := cairn.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	s, err := ws.Session("long")
	if err != nil {
		return nil, err
	}
	gen := workload.NewAppend(workload.AppendOptions{Seed: cfg.Seed, Window: cfg.ResumeWindow})
	start := time.Now()
	took := make([]time.Duration, 0, steps)
	for n := 1; n <= steps; n++ {
		doc, _ := gen.Next()
		t0 := time.Now()
		if _, err := s.Commit(ctx, cairn.JSON(doc), cairn.CommitOptions{}); err != nil {
			return nil, err
		}
		took = append(took, time.Since(t0))
		if n%10000 == 0 {
			fmt.Fprintf(os.Stderr, "  resume setup: %d/%d steps, %v\n", n, steps, time.Since(start).Round(time.Second))
		}
	}
	where := "the local disk"
	if cfg.ResumeDir != "" {
		where = "a tmpfs"
	}
	early, late := setupWindows(took)
	return SetupResult{Steps: steps, Took: time.Since(start), Session: "long", URL: dir, Where: where,
		Early: early, Late: late}, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
