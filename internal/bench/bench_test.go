package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func tiny(t *testing.T) Config {
	cfg := Quick()
	cfg.Dir = t.TempDir()
	cfg.Out = t.TempDir()
	cfg.FsyncSamples = 3
	cfg.AppendSteps = 6
	cfg.FilesSteps = 3
	cfg.FilesCount = 40
	cfg.LargeSize = 1 << 20
	return cfg
}

// run runs a phase in-process and round-trips its result through JSON,
// as the child protocol does.
func run[T any](t *testing.T, cfg Config, name, arg string) T {
	t.Helper()
	res, err := phases[name](context.Background(), cfg, arg)
	if err != nil {
		t.Fatalf("phase %s %s: %v", name, arg, err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func checkCommits(t *testing.T, c CommitResult, steps int) {
	t.Helper()
	if c.Steps != steps || len(c.Series) != steps || len(c.StepMS) != steps-1 || c.Latency.N != steps-1 {
		t.Fatalf("%s/%s: %d steps, %d series, %d latencies; want %d", c.Workload, c.Store, c.Steps, len(c.Series), len(c.StepMS), steps)
	}
	for i := 1; i < len(c.Series); i++ {
		if c.Series[i] <= c.Series[i-1] {
			t.Fatalf("%s: stored bytes did not grow at step %d: %v", c.Workload, i+1, c.Series)
		}
	}
	if c.Requests.Put < 1 || c.Changed <= 0 || c.RawStored <= 0 || c.Stored <= 0 || c.FirstStep <= 0 {
		t.Fatalf("%s: implausible figures %+v", c.Workload, c)
	}
	if c.Latency.P50 <= 0 || c.Latency.P99 < c.Latency.P50 {
		t.Fatalf("%s: latency %+v", c.Workload, c.Latency)
	}
}

func TestPhasesAndReport(t *testing.T) {
	cfg := tiny(t)
	r := &Results{Config: cfg, Machine: machine(), Go: "test"}
	r.Fsync = run[FsyncResult](t, cfg, "fsync", "")
	if r.Fsync.Latency.N != cfg.FsyncSamples || r.Fsync.Latency.P50 <= 0 {
		t.Fatalf("fsync: %+v", r.Fsync)
	}
	r.Append = run[CommitResult](t, cfg, "append-local", "")
	checkCommits(t, r.Append, cfg.AppendSteps)
	// Only one PUT a step on this short session (the head hint comes every 32).
	if r.Append.Requests != (PerStep{Put: 1}) {
		t.Errorf("append requests per step %+v, want exactly 1 PUT", r.Append.Requests)
	}
	if o := r.Append.ObjectWrite; o == nil || o.N != cfg.AppendSteps-1 || o.P50 <= 0 {
		t.Fatalf("append: the step objects' fsync'd writes %+v, want one for each of steps 2..%d", o, cfg.AppendSteps)
	}
	r.Files = run[CommitResult](t, cfg, "files-local", "")
	checkCommits(t, r.Files, cfg.FilesSteps)
	for _, size := range []string{"10240", "65536"} {
		j := run[JSONDeltaResult](t, cfg, "json-delta", size)
		if j.Steps != jsonDeltaSteps(cfg) || j.Whole.N != j.Steps || j.Fsync.N != j.Steps || j.Patch.N != j.Steps || j.PatchCPUms <= 0 || j.DocBytes < 10240 {
			t.Fatalf("json-delta %s: %+v", size, j)
		}
		r.JSONDelta = append(r.JSONDelta, j)
	}

	cfg.Cairn = cairnBin(t)
	var err error
	if cfg.Git, err = exec.LookPath("git"); err != nil {
		t.Fatalf("the files-cli phase needs git: %v", err)
	}
	r.FilesCLI = run[FilesCLIResult](t, cfg, "files-cli", "")
	if fc := r.FilesCLI; fc.Steps != cfg.FilesSteps || fc.Cairn.N != cfg.FilesSteps-1 || fc.Git.N != cfg.FilesSteps-1 ||
		fc.Changed <= 0 || fc.Written <= 0 || fc.FirstWritten <= fc.Written || fc.GitSize <= 0 || fc.Cairn.P50 <= 0 || fc.Git.P50 <= 0 {
		t.Fatalf("files-cli: implausible figures %+v", fc)
	}
	cfg.StartFloor = filepath.Join(t.TempDir(), "startfloor")
	if out, err := exec.Command("go", "build", "-o", cfg.StartFloor, "./startfloor").CombinedOutput(); err != nil {
		t.Fatalf("build startfloor: %v: %s", err, out)
	}
	r.CLI = run[CLICommitResult](t, cfg, "cli-commit", "")
	if c := r.CLI; c.Steps != cfg.CLISteps || c.Cairn.N != c.Steps-1 || c.DD.N != c.Steps-1 || c.Startup.N != c.Steps-1 || c.Startup.P50 <= 0 ||
		c.Floor.N != c.Steps-1 || c.Floor.P50 <= 0 || c.DocBytes <= 0 {
		t.Fatalf("cli-commit: implausible figures %+v", c)
	}
	// Below the first compaction every step after the first is one PUT
	// and the one small GET that checks the cached head, so none counts
	// as target 7's "1 PUT, no GET or LIST".
	if c := r.CLI; c.OnePut != 0 || c.Requests.Put != 1 || c.Requests.Get != 1 || c.Requests.List != 0 {
		t.Errorf("cli-commit: %d of %d steps made 1 PUT and no GET or LIST, %+v a step; want 1 PUT and 1 GET each", c.OnePut, c.Steps-1, c.Requests)
	}

	res := run[ResumeResult](t, cfg, "resume", mustJSON(t, ResumeTarget{Label: "local, append workload", URL: r.Append.URL, Session: "append", Steps: cfg.AppendSteps}))
	if res.Steps != cfg.AppendSteps || res.StateBytes == 0 || res.Find.Get+res.Find.List == 0 || res.Load.Get == 0 {
		t.Fatalf("resume: %+v", res)
	}
	r.Resume = append(r.Resume, res)
	cfg.ResumeDir = t.TempDir()
	setup := run[SetupResult](t, cfg, "resume-setup", "40")
	if setup.Steps != 40 || !strings.HasPrefix(setup.URL, cfg.ResumeDir) {
		t.Fatalf("setup: %+v", setup)
	}
	r.Setups = append(r.Setups, setup)
	res = run[ResumeResult](t, cfg, "resume", mustJSON(t, ResumeTarget{Label: "windowed", URL: setup.URL, Session: setup.Session, Steps: 40}))
	if res.Steps != 40 {
		t.Fatalf("resume of the long session found step %d, want 40", res.Steps)
	}
	r.Resume = append(r.Resume, res)

	json := run[PeerResult](t, cfg, "peer", "json-file")
	if len(json.Series) != cfg.AppendSteps || json.Series[cfg.AppendSteps-1] <= r.Append.Series[cfg.AppendSteps-1] {
		t.Fatalf("json-file peer: %+v (cairn %v)", json.Series, r.Append.Series)
	}
	r.Peers = append(r.Peers, json)

	l := LargeResult{Variant: Compressible}
	if g := run[Throughput](t, cfg, "large-gen", Compressible); g.Bytes != cfg.LargeSize {
		t.Fatalf("large-gen wrote %d bytes", g.Bytes)
	}
	l.Blake3 = run[Throughput](t, cfg, "large-blake3", Compressible)
	l.Zstd = run[Throughput](t, cfg, "large-zstd", Compressible)
	l.CDC = run[Throughput](t, cfg, "large-cdc", Compressible)
	l.Cairn = run[Throughput](t, cfg, "large-cairn", Compressible)
	l.Checkout = run[Throughput](t, cfg, "large-checkout", Compressible)
	l.Disk = run[Throughput](t, cfg, "large-disk", "")
	for name, tp := range map[string]Throughput{"blake3": l.Blake3, "zstd": l.Zstd, "cdc": l.CDC, "cairn": l.Cairn, "checkout": l.Checkout, "disk": l.Disk} {
		if tp.Bytes != cfg.LargeSize || tp.MBps() <= 0 {
			t.Fatalf("large %s: %+v", name, tp)
		}
	}
	if l.Zstd.Stored <= 0 || l.Zstd.Stored >= l.Zstd.Bytes || l.Cairn.Stored >= l.Cairn.Bytes {
		t.Fatalf("compressible state did not shrink: zstd %d, cairn %d of %d", l.Zstd.Stored, l.Cairn.Stored, cfg.LargeSize)
	}
	r.Large = append(r.Large, l)
	r.Usage = []Usage{{Phase: "fsync", MaxRSS: 20 << 20}, {Phase: "large-cairn", Arg: Compressible, MaxRSS: 100 << 20}}

	var stdout bytes.Buffer
	if err := Write(r, &stdout); err != nil {
		t.Fatal(err)
	}
	md := stdout.String()
	for _, want := range []string{
		"commit latency p50, local store, append | ", "commit latency p99, local store, append | ", "one fsync'd write of each step's object as a new file", "beside a smaller write: one fsync'd 4 KiB file",
		"requests per step, local, append", "bytes stored per step ÷ bytes changed",
		"resume 6 steps (local, append workload): requests to find the head",
		"resume 6 steps (local, append workload): objects read in all",
		"large state (compressible", "against json-file", "commit peak RSS | 100.0 MiB",
		"JSON commit p50, whole document of", "JSON commit p50 at 64.", "JSON Patch commit CPU per step, document of 12.", "| files | local | 3 |", "| fsync | 20.0 MiB |  | 0s |",
		"files workload through the CLI (fresh process each step): commit p50", "`git commit -a` on the same tree",
		"`cairn commit` in a fresh process, windowed append workload", "0 of 7 steps 1 PUT, 0 GET, 0 LIST",
		"start-up of the binary alone (`cairn version`", "start-up of a program linking only the fixed modules' packages", "the CPU stages sharing the cores:",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	disk, err := os.ReadFile(filepath.Join(cfg.Out, "results.md"))
	if err != nil || string(disk) != md {
		t.Fatalf("results.md differs from stdout (%v)", err)
	}
	svg, err := os.ReadFile(filepath.Join(cfg.Out, PlotFile))
	if err != nil || !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("json-file")) {
		t.Fatalf("plot: %v, %d bytes", err, len(svg))
	}
	// results.json renders the same table again.
	again, err := Load(filepath.Join(cfg.Out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := Markdown(again); got != md {
		t.Errorf("re-rendered results differ")
	}
}

// cairnBin returns $CAIRN_BIN, or builds the CLI.
func cairnBin(t *testing.T) string {
	if bin := os.Getenv("CAIRN_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "cairn")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/cairn").CombinedOutput(); err != nil {
		t.Fatalf("build cairn: %v: %s", err, out)
	}
	return bin
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRank(t *testing.T) {
	var ds []float64
	for i := 1; i <= 100; i++ {
		ds = append(ds, float64(i))
	}
	if got := p50Of(ds, 100); got != 50 {
		t.Errorf("p50Of = %v, want 50", got)
	}
	if got := p50Of(ds, 3); got != 2 {
		t.Errorf("p50Of first 3 = %v, want 2", got)
	}
	var durs []time.Duration
	for i := 100; i >= 1; i-- {
		durs = append(durs, time.Duration(i)*time.Millisecond)
	}
	if l := summarize(durs); l.N != 100 || l.P50 != 50 || l.P99 != 99 || l.Avg != 50.5 {
		t.Errorf("summarize(1..100 ms) = %+v, want p50 50, p99 99, avg 50.5", l)
	}
}
