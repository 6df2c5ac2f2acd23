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
	// ObjectWrite is one fsync'd write of each step object's size as a
	// new file on the store's disk, the file and its directory fsync'd
	// (local store only): target 1's limit, "one fsync'd write of that
	// step's object on the same disk".
	ObjectWrite *Latency `json:"object_write,omitempty"`
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
	limit := filepath.Join(cfg.Dir, "object-write")
	if err := os.MkdirAll(limit, 0o755); err != nil {
		return nil, err
	}
	var writes []time.Duration
	c.afterCommit = func(n int64) error {
		if c.res.Steps == 1 {
			return nil
		}
		took, err := fsyncWrite(filepath.Join(limit, fmt.Sprintf("%06d", c.res.Steps)), int(n))
		writes = append(writes, took)
		return err
	}
	gen := workload.NewAppend(workload.AppendOptions{Seed: cfg.Seed})
	for range cfg.AppendSteps {
		doc, changed := gen.Next()
		if err := c.commit(ctx, cairn.JSON(doc), int64(changed)); err != nil {
			return nil, err
		}
	}
	r := c.result()
	l := summarize(writes)
	r.ObjectWrite = &l
	if err := os.RemoveAll(limit); err != nil {
		return nil, err
	}
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
	// Early and Late are target 5's commit latencies: around step 1,000
	// and over the session's last pairedSteps steps. When Paired, Early
	// is a second session's, committed in turn with the last steps;
	// otherwise both are this session's own (setupWindows).
	Early  Latency `json:"early_latency"`
	Late   Latency `json:"late_latency"`
	Paired bool    `json:"paired"`
	// SoloEarly and SoloLate are the long session's own windows, minutes
	// apart: kept for reference, since they also measure the machine's
	// drift between the two.
	SoloEarly Latency `json:"solo_early_latency"`
	SoloLate  Latency `json:"solo_late_latency"`
}

// pairedSteps is how many commits of a long session's end are timed in
// turn with as many commits of a session around step pairedAround: the
// two windows of target 5 measured at the same moments, so that the
// ratio is the sessions' lengths, not the shared machine's speed minutes
// apart (the pairing farm-bench and benchstat's interleaving rely on).
const (
	pairedSteps  = 200
	pairedAround = 1000
)

// phaseResumeSetup writes a session of arg steps of the windowed append
// workload (the state keeps the last ResumeWindow messages) to a local
// store, for phaseResume to open. A session long enough ends in turn with
// a second one around step 1,000 (pairedSteps).
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
	long, err := newWindowed(ws, "long", cfg.Seed, cfg.ResumeWindow)
	if err != nil {
		return nil, err
	}
	paired := steps >= 2*(pairedAround+pairedSteps)
	solo := steps
	if paired {
		solo -= pairedSteps
	}
	start := time.Now()
	took := make([]time.Duration, 0, steps)
	for n := 1; n <= solo; n++ {
		d, err := long.commit(ctx)
		if err != nil {
			return nil, err
		}
		took = append(took, d)
		if n%10000 == 0 {
			fmt.Fprintf(os.Stderr, "  resume setup: %d/%d steps, %v\n", n, steps, time.Since(start).Round(time.Second))
		}
	}
	res := SetupResult{Session: "long", URL: dir, Where: "the local disk"}
	if cfg.ResumeDir != "" {
		res.Where = "a tmpfs"
	}
	if paired {
		// The second session is written up to pairedSteps/2 before step
		// 1,000, then the two commit in turn, each step timed alone.
		near, err := newWindowed(ws, "near-1000", cfg.Seed+1, cfg.ResumeWindow)
		if err != nil {
			return nil, err
		}
		for n := 1; n <= pairedAround-pairedSteps/2; n++ {
			if _, err := near.commit(ctx); err != nil {
				return nil, err
			}
		}
		early := make([]time.Duration, 0, pairedSteps)
		for range pairedSteps {
			d, err := near.commit(ctx)
			if err != nil {
				return nil, err
			}
			early = append(early, d)
			if d, err = long.commit(ctx); err != nil {
				return nil, err
			}
			took = append(took, d)
		}
		res.Early, res.Late = summarize(early), summarize(took[len(took)-pairedSteps:])
		res.Paired = true
	}
	res.Steps, res.Took = steps, time.Since(start)
	res.SoloEarly, res.SoloLate = setupWindows(took)
	if !paired {
		res.Early, res.Late = res.SoloEarly, res.SoloLate
	}
	return res, nil
}

// windowed is a session written with the windowed append workload.
type windowed struct {
	s   *cairn.Session
	gen *workload.Append
}

func newWindowed(ws *cairn.Workspace, name string, seed uint64, window int) (*windowed, error) {
	s, err := ws.Session(name)
	if err != nil {
		return nil, err
	}
	return &windowed{s: s, gen: workload.NewAppend(workload.AppendOptions{Seed: seed, Window: window})}, nil
}

// commit commits the workload's next document and returns how long the
// commit alone took.
func (w *windowed) commit(ctx context.Context) (time.Duration, error) {
	doc, _ := w.gen.Next()
	t0 := time.Now()
	_, err := w.s.Commit(ctx, cairn.JSON(doc), cairn.CommitOptions{})
	return time.Since(t0), err
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
