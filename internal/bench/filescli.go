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

	"github.com/cairnlog/cairn/internal/rusage"
	"github.com/cairnlog/cairn/internal/workload"
)

func init() { phases["files-cli"] = phaseFilesCLI }

// FilesCLIResult is the files workload committed through the cairn CLI,
// a fresh process each step, beside `git commit -a` on the same tree in
// the same run.
type FilesCLIResult struct {
	Steps int `json:"steps"`
	// Cairn is `cairn commit --dir` (stat cache under XDG_CACHE_HOME),
	// Git is `git commit -q -a` (after an untimed `git add -A`, so that
	// it commits the step's new file too); both wall time of the
	// process, steps 2..N.
	Cairn Latency `json:"cairn"`
	Git   Latency `json:"git"`
	// GitAdd is the untimed `git add -A` before each `git commit -a`,
	// timed apart (wall, and CPU in GitAddCPU): it is where git reads,
	// hashes and stores the step's new and edited files, work that the
	// cairn commit does itself. Not part of Git or the target's ratio.
	GitAdd    Latency `json:"git_add"`
	GitAddCPU float64 `json:"git_add_cpu_ms"`
	// CairnMS and GitMS are each step's times, steps 2..N.
	CairnMS []float64 `json:"cairn_ms"`
	GitMS   []float64 `json:"git_ms"`
	// CairnCPU and GitCPU are the processes' user + system time per step
	// (ms, mean of steps 2..N): on a shared machine, what load does not
	// inflate.
	CairnCPU float64 `json:"cairn_cpu_ms"`
	GitCPU   float64 `json:"git_cpu_ms"`
	// Changed is the bytes the workload changed, Written the bytes
	// cairn's commits wrote to the store (its --json bytes_written), and
	// FirstWritten step 1's; Changed and Written cover steps 2..N.
	Changed      int64 `json:"changed_bytes"`
	Written      int64 `json:"written_bytes"`
	FirstWritten int64 `json:"first_step_written_bytes"`
	// GitSize is the size of .git at the end (loose objects, no gc).
	GitSize int64 `json:"git_size_bytes"`
}

// WrittenRatio is bytes written ÷ bytes changed, steps 2..N.
func (f FilesCLIResult) WrittenRatio() float64 { return ratio(float64(f.Written), float64(f.Changed)) }

// phaseFilesCLI runs the files workload through `cairn commit --dir` and
// `git commit -a`, alternating on one working tree: each step the change
// is applied once, then cairn commits it, then git.
func phaseFilesCLI(ctx context.Context, cfg Config, _ string) (any, error) {
	if cfg.Cairn == "" || cfg.Git == "" {
		return nil, fmt.Errorf("files-cli: needs the cairn and git binaries")
	}
	store := filepath.Join(cfg.Dir, "cairn-files-cli")
	work := filepath.Join(cfg.Dir, "files-cli-work")
	gitDir := filepath.Join(cfg.Dir, "files-cli-git")
	cache := filepath.Join(cfg.Dir, "files-cli-cache")
	for _, d := range []string{store, work, gitDir, cache} {
		if err := os.RemoveAll(d); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	var gitCPU time.Duration
	git := func(args ...string) error {
		before := childCPU()
		err := tool(ctx, work, cfg.Git, append([]string{"--git-dir=" + gitDir, "--work-tree=" + work}, args...)...)
		gitCPU = childCPU() - before
		return err
	}
	if err := git("init", "-q"); err != nil {
		return nil, err
	}
	var res FilesCLIResult
	var cairnDs, gitDs, addDs []time.Duration
	gen := workload.NewFiles(workload.FilesOptions{Seed: cfg.Seed, Count: cfg.FilesCount})
	for n := 1; n <= cfg.FilesSteps; n++ {
		ch := gen.Next()
		if err := workload.Apply(work, ch); err != nil {
			return nil, err
		}
		start, cpu := time.Now(), childCPU()
		written, err := cairnCommitDir(ctx, cfg.Cairn, store, cache, work)
		cairnTook, cairnCPU := time.Since(start), childCPU()-cpu
		if err != nil {
			return nil, err
		}
		start = time.Now()
		if err := git("add", "-A"); err != nil {
			return nil, err
		}
		addTook, addCPU := time.Since(start), gitCPU
		start = time.Now()
		err = git("commit", "-q", "-a", "-m", fmt.Sprintf("step %d", n))
		gitTook := time.Since(start)
		if err != nil {
			return nil, err
		}
		res.Steps++
		if n == 1 {
			res.FirstWritten = written
			continue
		}
		res.Changed += ch.Changed
		res.Written += written
		cairnDs, gitDs = append(cairnDs, cairnTook), append(gitDs, gitTook)
		addDs = append(addDs, addTook)
		res.GitAddCPU += float64(addCPU) / 1e6
		res.CairnCPU += float64(cairnCPU) / 1e6
		res.GitCPU += float64(gitCPU) / 1e6
		res.CairnMS = append(res.CairnMS, float64(cairnTook)/1e6)
		res.GitMS = append(res.GitMS, float64(gitTook)/1e6)
	}
	res.Cairn, res.Git, res.GitAdd = summarize(cairnDs), summarize(gitDs), summarize(addDs)
	if n := float64(len(cairnDs)); n > 0 {
		res.CairnCPU /= n
		res.GitCPU /= n
		res.GitAddCPU /= n
	}
	var err error
	res.GitSize, err = dirBytes(gitDir)
	return res, err
}

// childCPU returns the user + system time of this process's waited-for
// children so far.
func childCPU() time.Duration {
	_, cpu := rusage.Children()
	return cpu
}

// cairnCommitDir runs one `cairn commit --dir` in a fresh process and
// returns the bytes it wrote.
func cairnCommitDir(ctx context.Context, bin, store, cache, dir string) (int64, error) {
	cmd := exec.CommandContext(ctx, bin, "--store", store, "commit", "files", "--dir", dir, "--json")
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("cairn commit --dir: %w: %s", err, strings.TrimSpace(errb.String()))
	}
	var r struct {
		BytesWritten int64 `json:"bytes_written"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return 0, fmt.Errorf("cairn commit --dir: output %q: %w", out.String(), err)
	}
	return r.BytesWritten, nil
}
