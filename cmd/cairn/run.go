package main

import (
	"context"
	"errors"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"syscall"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/runner"
)

const runUsage = "[--session] S [--restart N] [--dir D] [--wait] -- CMD [ARGS...]"

var runCmd = command{
	summary: "run an agent loop over a session, restarting it from its last step when it crashes",
	usage:   runUsage,
	run:     runRun,
}

func runRun(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "run", runUsage)
	session := fs.String("session", "", "the session `S` to resume and extend")
	restarts := fs.whole("restart", 0, 0, "restart a failed command up to `N` times in a row, each from the session's last step, after a pause that doubles each time (0.5 s up to 30 s); a new step resets both")
	dir := fs.String("dir", "", "work directory `D` for the head state (must be empty, or left by a run of the session that was killed; emptied again at the end; default a temporary one)")
	wait := fs.Bool("wait", false, "when the session awaits input, wait for a reply and go on (default: stop)")
	i := slices.Index(args, "--")
	if i < 0 {
		i = len(args)
	}
	pos, err := parse(fs, args[:i], 0, 1)
	if err != nil {
		return err // also --help: usage and flags, exit 0
	}
	// Every other command names its session first (commit S, log S), so
	// run S -- CMD is taken as run --session S -- CMD.
	if len(pos) == 1 {
		if *session != "" && *session != pos[0] {
			return usagef("two sessions given, %s and --session %s: give one", pos[0], *session)
		}
		*session = pos[0]
	}
	if i == len(args) {
		return usagef("want run %s (the command goes after --)", runUsage)
	}
	command := args[i+1:]
	switch {
	case len(command) == 0:
		return usagef("no command after --")
	case *session == "":
		return usagef("which session? want run %s", runUsage)
	}
	if *dir != "" {
		// Not empty is for the run to judge: an earlier run of the
		// session killed before it emptied the directory left it so.
		if _, err := checkDirTarget("--dir", *dir); err != nil {
			return err
		}
		if err := e.checkOutsideStore("--dir", *dir); err != nil {
			return err
		}
		// The run empties the directory between starts and at its end:
		// a store in it would go with it, and every step in it.
		if store := e.storeIn(*dir); store != "" {
			return usagef("--dir %s holds the store %s, which the run would delete when it empties the directory: keep the store outside the directory (--store or $CAIRN_STORE)", *dir, store)
		}
		if cache := cacheIn(*dir); cache != "" {
			return usagef("--dir %s holds cairn's cache directory %s, which the run would delete when it empties the directory, and which its command's commits would store in each step: %s", *dir, cache, cacheAdvice)
		}
	}
	// A command that cannot start would only fail each restart.
	if _, err := exec.LookPath(command[0]); err != nil {
		var ee *exec.Error
		switch {
		case errors.Is(err, exec.ErrNotFound):
			return usagef("cannot run %s: not found on $PATH", command[0])
		case errors.As(err, &ee):
			return usagef("cannot run %s: %v", command[0], pathProblem(ee.Err))
		}
		return usagef("cannot run %s: %v", command[0], err)
	}
	ws, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer ws.Close()
	if _, err := ws.Session(*session); err != nil {
		return usageError{err.Error()}
	}
	// Ending cairn run ends the command too (and its process group).
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	stdin := e.stdin
	if stdin == nil {
		stdin = os.Stdin
	}
	// This binary guards the command's process group (runner.GuardMain):
	// on Linux by /proc/self/exe, which is this very binary even if its
	// file was replaced or removed since the run began (an upgrade).
	guard, _ := os.Executable()
	if runtime.GOOS == "linux" {
		guard = "/proc/self/exe"
	}
	_, err = runner.Run(ctx, ws, runner.Config{
		Session: *session, Command: command, Restarts: int(min(*restarts, math.MaxInt32)), Dir: *dir, Wait: *wait,
		Stdin: stdin, Stdout: underlying(e.stdout), Stderr: e.stderr, Log: e.stderr, Guard: guard,
		CacheDir: cairn.DefaultCacheDir(),
	})
	return err
}
