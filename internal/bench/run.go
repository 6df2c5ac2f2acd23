package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/cairnlog/cairn/internal/s3test"
)

// Results is everything one run measured.
type Results struct {
	Config  Config        `json:"config"`
	Date    time.Time     `json:"date"`
	Machine string        `json:"machine"`
	Go      string        `json:"go"`
	Took    time.Duration `json:"took_ns"`
	// Load is /proc/loadavg at the start and the end of the run: the
	// machine may be shared, and every timing is only as good as its share.
	Load [2]string `json:"loadavg"`

	Fsync  FsyncResult  `json:"fsync"`
	Append CommitResult `json:"append_local"`
	// JSONDelta is the same delta at growing document sizes, as the
	// whole document and as a JSON Patch.
	JSONDelta []JSONDeltaResult `json:"json_delta"`
	Files     CommitResult      `json:"files_local"`
	// FilesCLI is the files workload through the CLI beside git.
	FilesCLI FilesCLIResult `json:"files_cli"`
	// CLI is `cairn commit` in a fresh process beside dd+fsync (target 7).
	CLI     CLICommitResult `json:"cli_commit"`
	MinIO   CommitResult    `json:"append_minio"`
	Resume  []ResumeResult  `json:"resume"`
	Setups  []SetupResult   `json:"resume_setups"`
	Peers   []PeerResult    `json:"peers"`
	Large   []LargeResult   `json:"large"`
	History HistoryResult   `json:"history"`
	Usage   []Usage         `json:"usage"`
	Restic  string          `json:"restic_version"`
	GitVers string          `json:"git_version"`

	// MinIOS3 is the MinIO phase again through the s3:// backend
	// (aws-sdk-go-v2) instead of minio:// (minio-go).
	MinIOS3 CommitResult `json:"append_minio_s3"`
}

// LargeResult is one large-state variant's figures.
type LargeResult struct {
	Variant string     `json:"variant"`
	Cairn   Throughput `json:"cairn"`
	Blake3  Throughput `json:"blake3"`
	Zstd    Throughput `json:"zstd"`
	Disk    Throughput `json:"disk"`
	Restic  Throughput `json:"restic"`
	// Issue 14, target 4: the chunker's speed, and reading the state back.
	CDC      Throughput `json:"cdc"`
	Checkout Throughput `json:"checkout"`
}

// Run runs every phase as a child process, then writes results.md,
// results.json and stored-bytes.svg to cfg.Out and the table to stdout.
func Run(ctx context.Context, cfg Config, stdout io.Writer) (*Results, error) {
	start := time.Now()
	for _, d := range []string{cfg.Dir, cfg.Out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	r := &Results{Config: cfg, Date: start.UTC(), Machine: machine(), Go: runtime.Version()}
	r.Load[0] = loadavg()
	r.Restic = toolVersion(cfg.Restic, "version")
	r.GitVers = toolVersion(cfg.Git, "version")
	step := func(name, arg string, out any) error {
		fmt.Fprintf(os.Stderr, "bench: %s %s\n", name, shortArg(arg))
		u, err := runChild(ctx, cfg, name, arg, out)
		if err != nil {
			return err
		}
		r.Usage = append(r.Usage, u)
		fmt.Fprintf(os.Stderr, "bench: %s %s done in %v, peak RSS %s\n", name, shortArg(arg), u.Wall.Round(time.Millisecond), mib(u.MaxRSS))
		checkpoint(r)
		return nil
	}

	if err := step("fsync", "", &r.Fsync); err != nil {
		return nil, err
	}
	if err := step("append-local", "", &r.Append); err != nil {
		return nil, err
	}
	for _, n := range jsonDeltaSizes(cfg) {
		var j JSONDeltaResult
		if err := step("json-delta", strconv.Itoa(n), &j); err != nil {
			return nil, err
		}
		r.JSONDelta = append(r.JSONDelta, j)
	}
	if err := resume(ctx, step, r, ResumeTarget{Label: "local, append workload", URL: r.Append.URL, Session: r.Append.Session, Steps: r.Append.Steps}); err != nil {
		return nil, err
	}
	for _, name := range []string{"json-file", "git", "restic"} {
		var p PeerResult
		if err := step("peer", name, &p); err != nil {
			return nil, err
		}
		r.Peers = append(r.Peers, p)
	}
	if err := step("files-local", "", &r.Files); err != nil {
		return nil, err
	}
	if err := step("files-cli", "", &r.FilesCLI); err != nil {
		return nil, err
	}
	if err := step("cli-commit", "", &r.CLI); err != nil {
		return nil, err
	}

	// MinIO, started here and stopped at the end of the phase.
	srv, err := s3test.LaunchMinIO()
	if err != nil {
		return nil, err
	}
	bucket, err := srv.NewBucket()
	if err != nil {
		srv.Stop()
		return nil, err
	}
	mcfg := cfg
	mcfg.MinIO = &MinIOServer{Host: srv.Host, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, Bucket: bucket}
	os.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	os.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	fmt.Fprintf(os.Stderr, "bench: append-minio\n")
	u, err := runChild(ctx, mcfg, "append-minio", "", &r.MinIO)
	if err == nil {
		r.Usage = append(r.Usage, u)
		fmt.Fprintf(os.Stderr, "bench: append-minio done in %v, peak RSS %s\n", u.Wall.Round(time.Millisecond), mib(u.MaxRSS))
		err = resume(ctx, step, r, ResumeTarget{Label: "MinIO, append workload", URL: r.MinIO.URL, Session: r.MinIO.Session, Steps: r.MinIO.Steps})
	}
	if err == nil {
		// The same phase through the other S3 client, for reference.
		fmt.Fprintf(os.Stderr, "bench: append-minio s3\n")
		if u, err = runChild(ctx, mcfg, "append-minio", "s3", &r.MinIOS3); err == nil {
			r.Usage = append(r.Usage, u)
		}
	}
	srv.Stop()
	if err != nil {
		return nil, err
	}

	for _, n := range cfg.ResumeSteps {
		var s SetupResult
		if err := step("resume-setup", strconv.Itoa(n), &s); err != nil {
			return nil, err
		}
		r.Setups = append(r.Setups, s)
		label := fmt.Sprintf("local, windowed append (last %d messages)", cfg.ResumeWindow)
		if err := resume(ctx, step, r, ResumeTarget{Label: label, URL: s.URL, Session: s.Session, Steps: s.Steps}); err != nil {
			return nil, err
		}
		os.RemoveAll(s.URL)
	}

	if err := runHistory(ctx, cfg, step, r); err != nil {
		return nil, err
	}

	var disk Throughput
	if err := step("large-disk", "", &disk); err != nil {
		return nil, err
	}
	for _, v := range []string{Incompressible, Compressible} {
		l := LargeResult{Variant: v, Disk: disk}
		var gen Throughput
		if err := step("large-gen", v, &gen); err != nil {
			return nil, err
		}
		for _, p := range []struct {
			name string
			out  *Throughput
		}{{"large-blake3", &l.Blake3}, {"large-zstd", &l.Zstd}, {"large-cdc", &l.CDC}, {"large-cairn", &l.Cairn}, {"large-checkout", &l.Checkout}, {"large-restic", &l.Restic}} {
			if err := step(p.name, v, p.out); err != nil {
				return nil, err
			}
		}
		r.Large = append(r.Large, l)
		os.RemoveAll(largeDir(cfg, v))
	}
	r.Took = time.Since(start)
	r.Load[1] = loadavg()
	os.Remove(filepath.Join(cfg.Out, "results.partial.json"))
	return r, Write(r, stdout)
}

// Write prints the results' markdown to stdout and writes results.md,
// results.json and the plot to r.Config.Out.
func Write(r *Results, stdout io.Writer) error {
	cfg := r.Config
	md := Markdown(r)
	fmt.Fprint(stdout, md)
	if err := os.WriteFile(filepath.Join(cfg.Out, "results.md"), []byte(md), 0o644); err != nil {
		return err
	}
	js, _ := json.MarshalIndent(r, "", "  ")
	if err := os.WriteFile(filepath.Join(cfg.Out, "results.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	return Plot(r, filepath.Join(cfg.Out, PlotFile))
}

// Load reads results.json written by an earlier run, to render it again.
func Load(path string) (*Results, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("read results %s: %w", path, err)
	}
	return &r, nil
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// checkpoint writes what the run has measured so far to
// results.partial.json, so a run that dies late leaves its figures behind.
func checkpoint(r *Results) {
	js, err := json.MarshalIndent(r, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(r.Config.Out, "results.partial.json"), js, 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: checkpoint: %v\n", err)
	}
}

func resume(ctx context.Context, step func(string, string, any) error, r *Results, t ResumeTarget) error {
	arg, _ := json.Marshal(t)
	var res ResumeResult
	if err := step("resume", string(arg), &res); err != nil {
		return err
	}
	r.Resume = append(r.Resume, res)
	return nil
}

func shortArg(a string) string {
	if len(a) > 40 {
		return a[:40] + "…"
	}
	return a
}

// machine describes the host: CPU model, cores and memory.
func machine() string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			mem = fmt.Sprintf(", %.0f GiB RAM", float64(kb)/(1<<20))
		}
	}
	return fmt.Sprintf("%s, %d cores%s, %s/%s", cpu, runtime.NumCPU(), mem, runtime.GOOS, runtime.GOARCH)
}

func toolVersion(bin string, args ...string) string {
	if bin == "" {
		return ""
	}
	out, err := execOutput(bin, args...)
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(strings.SplitN(out, "\n", 2)[0])
}
