package export_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/export"
	"github.com/cairnlog/cairn/internal/rusage"
)

// benchSessions is the size of the export benchmark's workload:
// $CAIRN_EXPORT_BENCH_SESSIONS, default 10,000 (a multiple of 5).
var benchSessions = func() int {
	if n, err := strconv.Atoi(os.Getenv("CAIRN_EXPORT_BENCH_SESSIONS")); err == nil && n >= 5 {
		return n / 5 * 5
	}
	return 10000
}()

// buildBenchStore fills dir with benchSessions sessions: four of five are
// 4-step agent runs, the fifth of each five a fork of the previous run's
// step 3 with two steps of its own, so every fork point yields a pair.
func buildBenchStore(b *testing.B, dir string) {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Close()
	const workers = 8
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < benchSessions/5; i += workers {
				for j := range 4 {
					outcome := "failure"
					if j%2 == 0 {
						outcome = "success"
					}
					agentRun(ctx, b, ws, fmt.Sprintf("run-%05d-%d", i, j), 4, outcome, map[string]string{"batch": fmt.Sprint(i % 10)})
				}
				fork(ctx, b, ws, fmt.Sprintf("run-%05d-3@3", i), fmt.Sprintf("run-%05d-3-alt", i))
				continueRun(ctx, b, ws, fmt.Sprintf("run-%05d-3-alt", i), 2, "success", nil)
			}
		}()
	}
	wg.Wait()
}

// cairnBin returns $CAIRN_BIN, or builds the CLI.
func cairnBin(b *testing.B) string {
	if bin := os.Getenv("CAIRN_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(b.TempDir(), "cairn")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/cairn").CombinedOutput(); err != nil {
		b.Fatalf("build cairn: %v: %s", err, out)
	}
	return bin
}

// BenchmarkExport10k exports 10,000 sessions (38,000 step objects, forks
// included; CAIRN_EXPORT_BENCH_SESSIONS changes the count) in every format with the cairn binary and reports steps/s,
// steps per CPU-second and the process's peak RSS (getrusage). Set CAIRN_EXPORT_BENCH_STORE
// to a directory to keep the workload between runs.
func BenchmarkExport10k(b *testing.B) {
	store := os.Getenv("CAIRN_EXPORT_BENCH_STORE")
	if store == "" {
		store = b.TempDir()
	}
	if _, err := os.Stat(filepath.Join(store, "steps")); err != nil {
		start := time.Now()
		buildBenchStore(b, store)
		b.Logf("built %d sessions in %s", benchSessions, time.Since(start).Round(time.Millisecond))
	}
	bin := cairnBin(b)
	outDir := b.TempDir()
	b.ResetTimer()
	for range b.N {
		for _, format := range export.Formats {
			out := filepath.Join(outDir, "out."+format)
			cmd := exec.Command(bin, "--store", store, "export", "--format", format, "--out", out)
			start := time.Now()
			if msg, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("export %s: %v: %s", format, err, msg)
			}
			elapsed := time.Since(start)
			rss := rusage.MaxRSS(cmd.ProcessState) / 1024 // KiB
			cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			var m struct {
				Summary export.Summary `json:"summary"`
			}
			mb, err := os.ReadFile(out + ".manifest.json")
			if err == nil {
				err = json.Unmarshal(mb, &m)
			}
			if err != nil {
				b.Fatal(err)
			}
			fi, _ := os.Stat(out)
			rate := float64(m.Summary.Steps) / elapsed.Seconds()
			b.ReportMetric(rate, format+"-steps/s")
			b.ReportMetric(float64(m.Summary.Steps)/cpu.Seconds(), format+"-steps/cpu-s")
			b.ReportMetric(float64(rss)/1024, format+"-peak-RSS-MiB")
			b.Logf("%-12s %6d trajectories %7d steps %5d pairs in %7s (cpu %6s): %6.0f steps/s, %6.0f steps/cpu-s, peak RSS %6.1f MiB, output %5.1f MiB",
				format, m.Summary.Trajectories, m.Summary.Steps, m.Summary.Pairs, elapsed.Round(time.Millisecond), cpu.Round(time.Millisecond),
				rate, float64(m.Summary.Steps)/cpu.Seconds(), float64(rss)/1024, float64(fi.Size())/(1<<20))
		}
	}
}
