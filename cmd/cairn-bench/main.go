// Command cairn-bench runs cairn's end-to-end benchmark (package
// internal/bench) and prints its markdown table; see docs/bench.md.
//
//	cairn-bench [-quick] [-out bench-results] [-dir DIR] [-restic PATH] [-git PATH]
//
// It finds MinIO as the tests do ($CAIRN_MINIO, else .cache/bin/minio).
// With -phase it is a child process running one phase (internal use).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cairnlog/cairn/internal/bench"
)

func main() {
	quick := flag.Bool("quick", false, "a reduced run that only checks the harness works")
	out := flag.String("out", "bench-results", "directory for results.md, results.json and the plot")
	dir := flag.String("dir", "", "scratch directory on the disk to measure (default: OUT/tmp)")
	restic := flag.String("restic", ".cache/restic/usr/bin/restic", "restic binary (`make restic` fetches Debian's)")
	git := flag.String("git", "git", "git binary")
	cairnBin := flag.String("cairn", ".cache/bin/cairn", "cairn CLI binary, for the files workload through the CLI (`make build` builds it)")
	startFloor := flag.String("start-floor", "", "the startfloor binary (internal/bench/startfloor, `make bench` builds it): the start-up floor of the fixed modules, timed beside the CLI's commits")
	resumeDir := flag.String("resume-dir", "", "where the long resume sessions are written (default: a tmpfs, /dev/shm, if there is one)")
	render := flag.String("render", "", "only render an earlier run's results.json again (to -out)")
	resumeSteps := flag.String("resume-steps", "", "comma-separated lengths of the long sessions to resume (default: the run's, 10000,100000)")
	phase := flag.String("phase", "", "run one phase as a child process (internal)")
	arg := flag.String("arg", "", "the phase's argument (internal)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: cairn-bench [-quick] [-out DIR] [-dir DIR] [-restic PATH] [-git PATH]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	if *phase != "" {
		if err := bench.RunPhase(ctx, *phase, *arg, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "cairn-bench:", err)
			os.Exit(1)
		}
		return
	}
	if *render != "" {
		r, err := bench.Load(*render)
		if err != nil {
			fail(err)
		}
		if r.Config.Out, err = filepath.Abs(*out); err != nil {
			fail(err)
		}
		if err := os.MkdirAll(r.Config.Out, 0o755); err != nil {
			fail(err)
		}
		if err := bench.Write(r, os.Stdout); err != nil {
			fail(err)
		}
		return
	}
	cfg := bench.Full()
	if *quick {
		cfg = bench.Quick()
	}
	var err error
	if *resumeSteps != "" {
		cfg.ResumeSteps = nil
		for _, f := range strings.Split(*resumeSteps, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				fmt.Fprintf(os.Stderr, "cairn-bench: -resume-steps: %q is not a step count\n", f)
				os.Exit(2)
			}
			cfg.ResumeSteps = append(cfg.ResumeSteps, n)
		}
	}
	if cfg.Out, err = filepath.Abs(*out); err != nil {
		fail(err)
	}
	cfg.Dir = *dir
	if cfg.Dir == "" {
		cfg.Dir = filepath.Join(cfg.Out, "tmp")
	}
	if cfg.Dir, err = filepath.Abs(cfg.Dir); err != nil {
		fail(err)
	}
	if *resumeDir == "" {
		if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
			*resumeDir = filepath.Join("/dev/shm", fmt.Sprintf("cairn-bench-%d", os.Getpid()))
		}
	}
	cfg.ResumeDir = *resumeDir
	if cfg.Git, err = exec.LookPath(*git); err != nil {
		fail(fmt.Errorf("git peer: %w", err))
	}
	if cfg.Cairn, err = exec.LookPath(*cairnBin); err != nil {
		fail(fmt.Errorf("cairn CLI: %w (run `make build`)", err))
	}
	if cfg.Cairn, err = filepath.Abs(cfg.Cairn); err != nil {
		fail(err)
	}
	if *startFloor != "" {
		if cfg.StartFloor, err = exec.LookPath(*startFloor); err != nil {
			fail(fmt.Errorf("start-up floor: %w (`make bench` builds it)", err))
		}
		if cfg.StartFloor, err = filepath.Abs(cfg.StartFloor); err != nil {
			fail(err)
		}
	}
	if cfg.Restic, err = exec.LookPath(*restic); err != nil {
		fail(fmt.Errorf("restic peer: %w (run `make restic`)", err))
	}
	if cfg.Restic, err = filepath.Abs(cfg.Restic); err != nil {
		fail(err)
	}
	_, err = bench.Run(ctx, cfg, os.Stdout)
	os.RemoveAll(cfg.Dir)
	if cfg.ResumeDir != "" {
		os.RemoveAll(cfg.ResumeDir)
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "cairn-bench:", err)
	os.Exit(1)
}
