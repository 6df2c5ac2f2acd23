package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/cairnlog/cairn/internal/rusage"
)

// phaseFunc runs one phase in the child process and returns its result,
// which is sent to the parent as JSON.
type phaseFunc func(ctx context.Context, cfg Config, arg string) (any, error)

var phases = map[string]phaseFunc{}

// Phases lists the phase names a child can run.
func Phases() []string {
	var names []string
	for n := range phases {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// RunPhase is the child's side: it reads the Config as JSON from stdin,
// runs phase name with arg and writes the result as JSON to out.
func RunPhase(ctx context.Context, name, arg string, in io.Reader, out io.Writer) error {
	fn := phases[name]
	if fn == nil {
		return fmt.Errorf("unknown phase %q (have %s)", name, strings.Join(Phases(), ", "))
	}
	var cfg Config
	if err := json.NewDecoder(in).Decode(&cfg); err != nil {
		return fmt.Errorf("phase %s: read config: %w", name, err)
	}
	res, err := fn(ctx, cfg, arg)
	if err != nil {
		return fmt.Errorf("phase %s %s: %w", name, arg, err)
	}
	return json.NewEncoder(out).Encode(envelope(res))
}

// Usage is what a child process cost: its own peak RSS (as it says it,
// else wait4's maxrss) and the largest peak RSS among the tools it ran
// (git, restic).
type Usage struct {
	Phase    string        `json:"phase"`
	Arg      string        `json:"arg,omitempty"`
	Wall     time.Duration `json:"wall_ns"`
	CPU      time.Duration `json:"cpu_ns,omitempty"` // user + system time of the phase and the tools it waited for
	MaxRSS   int64         `json:"max_rss_bytes"`
	ToolRSS  int64         `json:"tool_rss_bytes,omitempty"`
	ToolName string        `json:"tool,omitempty"`
}

// runChild runs phase name in a child process (this same binary, with
// -phase) and decodes its JSON result into out.
func runChild(ctx context.Context, cfg Config, name, arg string, out any) (Usage, error) {
	self, err := os.Executable()
	if err != nil {
		return Usage{}, err
	}
	in, err := json.Marshal(cfg)
	if err != nil {
		return Usage{}, err
	}
	var stdout bytes.Buffer
	cmd := exec.CommandContext(ctx, self, "-phase", name, "-arg", arg)
	cmd.Stdin = bytes.NewReader(in)
	cmd.Stdout = &stdout
	cmd.Stderr = os.Stderr
	start := time.Now()
	err = cmd.Run()
	u := Usage{Phase: name, Arg: arg, Wall: time.Since(start)}
	u.MaxRSS = rusage.MaxRSS(cmd.ProcessState)
	u.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if err != nil {
		return u, fmt.Errorf("phase %s %s: %w", name, arg, err)
	}
	var env struct {
		Result  json.RawMessage `json:"result"`
		SelfRSS int64           `json:"self_rss_bytes"`
		ToolRSS int64           `json:"tool_rss_bytes"`
		ToolCPU time.Duration   `json:"tool_cpu_ns"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &env); err != nil {
		return u, fmt.Errorf("phase %s %s: decode result: %w", name, arg, err)
	}
	if env.SelfRSS > 0 {
		// The child's own peak: the ru_maxrss read of it carries this
		// process's peak into it (rusage.SelfPeakRSS).
		u.MaxRSS = env.SelfRSS
	}
	u.ToolRSS = env.ToolRSS
	u.CPU += env.ToolCPU
	if err := json.Unmarshal(env.Result, out); err != nil {
		return u, fmt.Errorf("phase %s %s: decode result: %w", name, arg, err)
	}
	return u, nil
}

// envelope wraps a phase's result with the phase's own peak RSS and the
// peak RSS of the processes the phase waited for (getrusage
// RUSAGE_CHILDREN: git, restic).
func envelope(res any) any {
	rss, cpu := rusage.Children()
	return struct {
		Result  any           `json:"result"`
		SelfRSS int64         `json:"self_rss_bytes,omitempty"`
		ToolRSS int64         `json:"tool_rss_bytes"`
		ToolCPU time.Duration `json:"tool_cpu_ns"`
	}{res, rusage.SelfPeakRSS(), rss, cpu}
}
