package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cairnlog/cairn/internal/workload"
)

func init() { phases["cli-commit"] = phaseCLICommit }

// CLICommitResult is `cairn commit` in a fresh process each step (issue
// 14, target 7) beside a JSON file per step written by dd with fsync, on
// the windowed append workload, in the same run.
type CLICommitResult struct {
	Steps int `json:"steps"`
	// Cairn is `cairn commit --json-file` (head cache under a scratch
	// XDG_CACHE_HOME), DD is `dd conv=fsync` of the same document to a
	// file of its own; both wall time of the process, steps 2..N.
	Cairn Latency `json:"cairn"`
	DD    Latency `json:"dd"`
	// Startup is `cairn version` in a fresh process, timed in turn with
	// the commits: what the binary costs before a command does anything
	// (the runtime and every linked package's initialisers), so the
	// report can say how much of the commit's time is start-up.
	Startup Latency `json:"startup"`
	// Floor is the startfloor program (Config.StartFloor) in a fresh
	// process, timed in turn with the commits: the start-up of a binary
	// that links only the fixed modules' packages cairn imports, the
	// least any cairn binary starts in.
	Floor Latency `json:"start_floor"`
	// Requests are cairn's object-store requests, steps 2..N, from its
	// --json output; OnePut counts the steps that made exactly 1 PUT and
	// no GET or LIST, as target 7 asks (a step through the head cache
	// also reads its cached head's manifest in the store, one small GET,
	// which the target's letter counts against it: docs/bench.md).
	Requests PerStep `json:"requests"`
	OnePut   int     `json:"one_put_steps"`
	// DocBytes is the document's size at the last step.
	DocBytes int `json:"doc_bytes"`
}

// Ratio is cairn's p50 ÷ dd's.
func (c CLICommitResult) Ratio() float64 { return ratio(c.Cairn.P50, c.DD.P50) }

// phaseCLICommit commits the windowed append workload through the cairn
// CLI and, alternating step by step, writes the same document with dd.
func phaseCLICommit(ctx context.Context, cfg Config, _ string) (any, error) {
	if cfg.Cairn == "" {
		return nil, fmt.Errorf("cli-commit: needs the cairn binary")
	}
	dd, err := exec.LookPath("dd")
	if err != nil {
		return nil, fmt.Errorf("cli-commit: %w", err)
	}
	store := filepath.Join(cfg.Dir, "cairn-cli")
	cache := filepath.Join(cfg.Dir, "cli-cache")
	peer := filepath.Join(cfg.Dir, "cli-dd")
	for _, d := range []string{store, cache, peer} {
		if err := os.RemoveAll(d); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(peer, 0o755); err != nil {
		return nil, err
	}
	doc := filepath.Join(cfg.Dir, "cli-doc.json")
	gen := workload.NewAppend(workload.AppendOptions{Seed: cfg.Seed, Window: cfg.ResumeWindow})
	var res CLICommitResult
	var cairnDs, ddDs, startDs, floorDs []time.Duration
	var total PerStep
	for n := 1; n <= cfg.CLISteps; n++ {
		state, _ := gen.Next()
		if err := os.WriteFile(doc, state, 0o644); err != nil {
			return nil, err
		}
		start := time.Now()
		used, err := cairnCommitFile(ctx, cfg.Cairn, store, cache, doc)
		cairnTook := time.Since(start)
		if err != nil {
			return nil, err
		}
		start = time.Now()
		err = tool(ctx, peer, cfg.Cairn, "version")
		startTook := time.Since(start)
		if err != nil {
			return nil, err
		}
		var floorTook time.Duration
		if cfg.StartFloor != "" {
			start = time.Now()
			err = tool(ctx, peer, cfg.StartFloor)
			floorTook = time.Since(start)
			if err != nil {
				return nil, err
			}
		}
		start = time.Now()
		err = tool(ctx, peer, dd, "if="+doc, fmt.Sprintf("of=%s/%06d.json", peer, n), "bs=1M", "conv=fsync", "status=none")
		ddTook := time.Since(start)
		if err != nil {
			return nil, err
		}
		res.Steps++
		res.DocBytes = len(state)
		if n == 1 {
			continue
		}
		cairnDs, ddDs, startDs = append(cairnDs, cairnTook), append(ddDs, ddTook), append(startDs, startTook)
		if cfg.StartFloor != "" {
			floorDs = append(floorDs, floorTook)
		}
		total.Put += float64(used.Put)
		total.Get += float64(used.Get)
		total.List += float64(used.List)
		total.Head += float64(used.Head)
		if used.Put == 1 && used.Get == 0 && used.List == 0 {
			res.OnePut++
		}
	}
	res.Cairn, res.DD, res.Startup, res.Floor = summarize(cairnDs), summarize(ddDs), summarize(startDs), summarize(floorDs)
	if k := float64(len(cairnDs)); k > 0 {
		res.Requests = PerStep{Put: total.Put / k, Get: total.Get / k, List: total.List / k, Head: total.Head / k}
	}
	return res, nil
}

// cliRequests is the requests field of `cairn commit --json`.
type cliRequests struct {
	Put  int64 `json:"put"`
	Get  int64 `json:"get"`
	List int64 `json:"list"`
	Head int64 `json:"head"`
}

// cairnCommitFile runs one `cairn commit --json-file` in a fresh process
// and returns the requests it made.
func cairnCommitFile(ctx context.Context, bin, store, cache, file string) (cliRequests, error) {
	cmd := exec.CommandContext(ctx, bin, "--store", store, "commit", "cli", "--json-file", file, "--json")
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache, "CAIRN_CACHE_DIR=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return cliRequests{}, fmt.Errorf("cairn commit --json-file: %w: %s", err, strings.TrimSpace(errb.String()))
	}
	var r struct {
		Requests cliRequests `json:"requests"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return cliRequests{}, fmt.Errorf("cairn commit --json-file: output %q: %w", out.String(), err)
	}
	return r.Requests, nil
}
