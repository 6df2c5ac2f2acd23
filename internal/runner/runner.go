// Package runner wraps an agent loop in a process supervisor: it resumes
// a session, hands the command its state and an HTTP endpoint of the
// workspace, and restarts the command from the session's last step when
// it crashes: after a pause that doubles with each failure in a row (up
// to a cap), giving up after Config.Restarts failures in a row without a
// new step. A step that lands resets both. The command does not outlive
// the run: it is stopped when the run's context ends, and on Linux it is
// killed if the supervising process dies.
package runner

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/hitl"
	"github.com/cairnlog/cairn/internal/httpapi"
	"github.com/cairnlog/cairn/internal/realpath"
	"github.com/cairnlog/cairn/internal/targetdir"
	"github.com/cairnlog/cairn/internal/termtext"
)

// Config describes one run.
type Config struct {
	Session string
	Command []string // the program and its arguments
	// Restarts is how many times in a row a failed command is restarted
	// without a new step landing in between; a new step resets the count.
	Restarts int
	// Backoff is the pause before the first restart after a failure
	// (default 500 ms); each further failure in a row doubles it, up to
	// MaxBackoff (default 30 s). A new step resets it.
	Backoff, MaxBackoff time.Duration
	// Dir is the work directory the head state is written to before each
	// start. The run owns it (locks it), empties it between starts and at
	// the end (every step is in the store). Empty: a temporary directory,
	// removed at the end. It must be empty or absent, unless an earlier
	// run of the session left it (killed before it emptied it): then the
	// run takes it over without losing what it holds (see workdir.go), or
	// refuses with a *DirError. The run works in it by its real path
	// (realpath.Resolve: links followed), which the command is given.
	Dir string
	// CacheDir is where the run keeps the record of what Dir holds, which
	// lets a later run take over a directory this one leaves behind (the
	// CLI's local cache directory). Empty: no record is kept, and a later
	// run takes over only a directory that holds a stored step.
	CacheDir string
	// Wait makes the run wait for a reply when the session awaits input
	// (at the start, or after the command paused it) and then start the
	// command again. Without it the run ends when the session pauses.
	Wait bool
	// Guard, if set, is a program that runs the command as its guard when
	// started with GuardEnv set (the cairn binary: its main calls
	// GuardMain), so that on Linux the command's whole process group ends
	// when the run dies, even by SIGKILL. Empty: the kernel kills only the
	// command itself then.
	Guard string
	// PollInterval is how often a waiting run re-reads the head (default 250 ms).
	PollInterval time.Duration

	Stdin          io.Reader
	Stdout, Stderr io.Writer // the command's output
	Log            io.Writer // the run's own messages (one line each)

	// sleep waits d or until ctx ends; tests replace it to see the pauses.
	sleep func(ctx context.Context, d time.Duration) error
}

// Defaults of Config.Backoff and Config.MaxBackoff.
const (
	DefaultBackoff    = 500 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
)

// Result says how a run ended.
type Result struct {
	Head     uint64       // the session's head at the end (0: no steps)
	Status   cairn.Status // its status
	Starts   int          // how many times the command was started
	Restarts int          // how many of those starts followed a failure (in all)
}

// GuardEnv is set in the environment of the guard program (Config.Guard),
// which then runs GuardMain instead of its own main; the command does not
// get it.
const GuardEnv = "CAIRN_RUN_GUARD"

// Environment variables the command gets.
const (
	EnvSession  = "CAIRN_SESSION"   // the session name
	EnvStep     = "CAIRN_STEP"      // the head step when the command started (0: new session)
	EnvStateDir = "CAIRN_STATE_DIR" // the head state: state.json for a JSON state, else the files
	EnvStore    = "CAIRN_STORE"     // the store URL, for the cairn CLI
	EnvURL      = "CAIRN_URL"       // the HTTP API of the workspace, on loopback
	EnvToken    = "CAIRN_TOKEN"     // the bearer token for CAIRN_URL, fresh for each run
	EnvAttempt  = "CAIRN_ATTEMPT"   // 0 for the first start, n for the n-th restart
)

// Run supervises cfg.Command over session cfg.Session of ws until it
// exits 0, pauses the session for a human (unless cfg.Wait), or fails
// more than cfg.Restarts times in a row without a new step. A session
// whose head is done is not run. Errors are not prefixed with "run":
// the caller says what ran.
func Run(ctx context.Context, ws *cairn.Workspace, cfg Config) (Result, error) {
	var res Result
	if len(cfg.Command) == 0 {
		return res, errors.New("no command")
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 250 * time.Millisecond
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = DefaultBackoff
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if cfg.sleep == nil {
		cfg.sleep = sleep
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	sess, err := ws.Session(cfg.Session)
	if err != nil {
		return res, err
	}
	dir := cfg.Dir
	var wd *workDir // the run record of cfg.Dir
	// Runs killed before they removed their temporary directories left
	// them behind, each with a session's state in it: remove them.
	sweepTempDirs()
	if dir == "" {
		var unlock func()
		if dir, unlock, err = makeTempDir(); err != nil {
			return res, fmt.Errorf("make work directory: %w", err)
		}
		defer func() { removeTree(dir); unlock() }()
	} else {
		// Where the system takes the path (realpath.Resolve), which is
		// where cairn run's own checks look: a ".." after a link goes up
		// from the link's target, not from the link.
		if dir, err = realpath.Resolve(dir); err != nil {
			return res, fmt.Errorf("work directory: %w", err)
		}
		if wd, err = openWorkDir(dir, cfg.CacheDir, ws.URL(), cfg.Session, cfg.Log); err != nil {
			return res, err
		}
		if err := wd.takeOver(ctx, sess, cfg.Log); err != nil {
			wd.unlock() // what it holds stays, for the user to see to
			return res, err
		}
		// The state is in the store; the directory is scratch, left empty for the next run.
		defer wd.close()
	}

	// The HTTP API for the command, on a loopback port of its own, with a
	// fresh token so that other local users cannot reach the workspace.
	token := rand.Text()
	ln, err := httpapi.Listen("127.0.0.1:0", token)
	if err != nil {
		return res, fmt.Errorf("serve the HTTP API: %w", err)
	}
	srvCtx, stopSrv := context.WithCancel(context.Background())
	srvDone := make(chan error, 1)
	go func() { srvDone <- httpapi.New(ws, httpapi.Options{Token: token}).Serve(srvCtx, ln) }()
	defer func() { stopSrv(); <-srvDone }()
	url := "http://" + ln.Addr().String()

	failures := 0 // failed starts in a row without a new step
	// A removed session may be run again as a new one (fresh until this
	// run sees a head), but one removed under the run ends it: it is not
	// restarted from nothing.
	fresh := true
	// unreachable counts a head that could not be read because the store
	// is out of reach (a server restarted or failing over) as a failed
	// start, and says whether to try again after the pause: a worker
	// that stopped supervising its loop at the first outage would leave
	// the session to no one. It returns the error to end the run with
	// once the restarts are used up, or if the error is not the store's
	// being out of reach.
	unreachable := func(err, runErr error) (retry bool, _ error) {
		if !outOfReach(ctx, err) {
			return false, err
		}
		failures++
		why := fmt.Sprintf("cannot read the head of %s: %s", cfg.Session, oneLine(err))
		if runErr != nil {
			// The command failed, most likely for the same outage.
			why = fmt.Sprintf("%s %s; %s", cfg.Command[0], ended(runErr), why)
		}
		if failures > cfg.Restarts {
			return false, fmt.Errorf("%s: gave up after %d failed %s in a row without a new step",
				why, failures, plural(failures, "start"))
		}
		pause := backoff(cfg.Backoff, cfg.MaxBackoff, failures)
		again := "trying again"
		if runErr != nil {
			res.Restarts++
			again = fmt.Sprintf("restart %d", res.Restarts)
		}
		fmt.Fprintf(cfg.Log, "cairn run: %s; %s in %v (%d of %d without a new step)\n",
			why, again, pause, failures, cfg.Restarts)
		if err := cfg.sleep(ctx, pause); err != nil {
			return false, err
		}
		return true, nil
	}
	for {
		head, err := headOf(ctx, sess, fresh)
		if err != nil {
			if retry, err := unreachable(err, nil); !retry {
				return res, err
			}
			continue
		}
		fresh = fresh && head == nil
		res.Head, res.Status = number(head), statusOf(head)
		if head != nil && head.Status == cairn.Done {
			fmt.Fprintf(cfg.Log, "cairn run: %s is done\n", head)
			return res, nil
		}
		if head != nil && head.Status == cairn.AwaitingInput {
			if !cfg.Wait {
				fmt.Fprintf(cfg.Log, "cairn run: %s awaits input: %s; answer with: cairn reply %s --input JSON\n", head, question(head), cfg.Session)
				return res, nil
			}
			fmt.Fprintf(cfg.Log, "cairn run: %s awaits input: %s; waiting for a reply\n", head, question(head))
			if head, err = waitPast(ctx, sess, head.Number, cfg.PollInterval, cfg.Log); err != nil {
				return res, fmt.Errorf("wait for a reply: %w", err)
			}
			res.Head, res.Status = number(head), statusOf(head)
			// Steps landed (the question, and the step past it): a
			// failure from here is the first in a row.
			failures = 0
			continue
		}
		wd.note(head, false, cfg.Log)
		if err := materialise(ctx, head, dir); err != nil {
			return res, fmt.Errorf("write the head state to %s: %w", dir, err)
		}
		if err := wd.note(head, true, cfg.Log); err != nil {
			return res, err
		}
		cmd := exec.Command(cfg.Command[0], cfg.Command[1:]...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = cfg.Stdin, cfg.Stdout, cfg.Stderr
		cmd.Env = append(os.Environ(),
			EnvSession+"="+cfg.Session,
			EnvStep+"="+strconv.FormatUint(number(head), 10),
			EnvStateDir+"="+dir,
			EnvStore+"="+ws.URL(),
			EnvURL+"="+url,
			EnvToken+"="+token,
			EnvAttempt+"="+strconv.Itoa(res.Restarts),
		)
		res.Starts++
		runErr := runCommand(ctx, cmd, cfg.Guard)
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		after, err := headOf(ctx, sess, fresh)
		if err == nil {
			// What the command left uncommitted is the step in flight,
			// redone from the head after a restart, as when the run
			// goes on: not work to take over if the run dies now.
			wd.note(after, false, cfg.Log)
		}
		if err != nil && runErr != nil {
			if retry, err := unreachable(err, runErr); !retry {
				return res, err
			}
			continue
		}
		if err != nil {
			return res, err
		}
		fresh = fresh && after == nil
		res.Head, res.Status = number(after), statusOf(after)
		if runErr == nil {
			if after != nil && after.Status == cairn.AwaitingInput && cfg.Wait {
				continue // wait for the reply at the top of the loop
			}
			if after != nil && after.Status == cairn.AwaitingInput {
				fmt.Fprintf(cfg.Log, "cairn run: %s awaits input: %s; answer with: cairn reply %s --input JSON, then run again\n", after, question(after), cfg.Session)
			}
			return res, nil
		}
		if after != nil && (after.Status == cairn.Done || after.Status == cairn.AwaitingInput) {
			// The command ended or paused the session before it failed:
			// there is nothing to restart (the top of the loop says so,
			// or waits for the reply), so no restart is announced,
			// paused for or counted against the budget.
			fmt.Fprintf(cfg.Log, "cairn run: %s %s %s\n", cfg.Command[0], ended(runErr), where(cfg.Session, after))
			continue
		}
		if number(after) > number(head) {
			failures = 0 // it made progress: a fresh budget and backoff
		}
		failures++
		if failures > cfg.Restarts {
			return res, fmt.Errorf("%s %s %s: gave up after %d failed %s in a row without a new step",
				cfg.Command[0], ended(runErr), where(cfg.Session, after), failures, plural(failures, "start"))
		}
		pause := backoff(cfg.Backoff, cfg.MaxBackoff, failures)
		res.Restarts++
		fmt.Fprintf(cfg.Log, "cairn run: %s %s %s; restart %d in %v (%d of %d without a new step)\n",
			cfg.Command[0], ended(runErr), where(cfg.Session, after), res.Restarts, pause, failures, cfg.Restarts)
		if err := cfg.sleep(ctx, pause); err != nil {
			return res, err
		}
	}
}

// where says where in its session a command ended: "at S@N", or, with
// no step yet, "before S's first step" (there is no step S@0).
func where(session string, head *cairn.Step) string {
	if head == nil {
		return fmt.Sprintf("before %s's first step", session)
	}
	return fmt.Sprintf("at %s@%d", session, head.Number)
}

// ended says how a command that did not succeed ended, in words:
// "exited with status 3", "was killed by a signal (killed)", or why it
// could not run.
func ended(err error) string {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return "failed: " + err.Error()
	}
	if ee.Exited() {
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	if sig, ok := strings.CutPrefix(ee.String(), "signal: "); ok {
		return "was killed by a signal (" + sig + ")"
	}
	return "ended: " + ee.String()
}

// backoff is the pause before a restart after failures failed starts in
// a row: initial, doubled for each further failure, at most max.
func backoff(initial, max time.Duration, failures int) time.Duration {
	d := initial
	for i := 1; i < failures && d < max; i++ {
		d *= 2
	}
	return min(d, max)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}

// runCommand runs cmd; when ctx ends it asks the command to end
// (interrupt: SIGTERM to the command's process group on Unix) and,
// after 10 seconds, kills it (the group on Unix). The command gets a
// process group of its own (when stdin is not a terminal; see
// stayInGroup), so that helpers it started go too, and on Linux it is
// killed if this process dies first. Windows differs; see
// procattr_windows.go.
func runCommand(ctx context.Context, cmd *exec.Cmd, guardProgram string) error {
	newGroup := !stayInGroup(cmd.Stdin)
	cmd.SysProcAttr = procAttr(newGroup)
	guard(cmd, guardProgram, newGroup)
	if err := cmd.Start(); err != nil {
		return err
	}
	// What the command started in its group and left running when it
	// exited (a process sent to the background, a helper it forgot) goes
	// with it: left, it would run on beside the command restarted from the
	// head, or after the run, both working on the session.
	defer endGroup(cmd)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		interrupt(cmd)
		select {
		case err := <-done:
			return err
		case <-time.After(10 * time.Second):
			kill(cmd)
			return <-done
		}
	}
}

// stayInGroup: a command reading a terminal stays in the terminal's
// foreground process group, or its first read would stop it (SIGTTIN);
// Ctrl-C then reaches it directly, as in a shell.
func stayInGroup(stdin io.Reader) bool {
	f, ok := stdin.(*os.File)
	return ok && isTerminal(f)
}

// outOfReach reports whether err, from reading a head, is the store's
// being out of reach (a server down, restarting or not answering), which
// may pass, rather than an answer: a session removed or damaged, a store
// that refuses the request, bad input, or the run's own end.
func outOfReach(ctx context.Context, err error) bool {
	switch {
	case ctx.Err() != nil, errors.Is(err, cairn.ErrRefused),
		errors.Is(err, cairn.ErrNotFound), errors.Is(err, cairn.ErrCorrupt),
		errors.Is(err, cairn.ErrInvalid), errors.Is(err, cairn.ErrLimit):
		return false
	}
	return true
}

// oneLine puts err on one line, for the run's log.
func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

// headOf returns the session's head, nil if it has none: never
// committed, or removed if removedIsNew.
func headOf(ctx context.Context, s *cairn.Session, removedIsNew bool) (*cairn.Step, error) {
	h, err := s.Head(ctx)
	if errors.Is(err, cairn.ErrNotFound) && (removedIsNew || !errors.Is(err, cairn.ErrRemoved)) {
		return nil, nil
	}
	return h, err
}

func number(st *cairn.Step) uint64 {
	if st == nil {
		return 0
	}
	return st.Number
}

func statusOf(st *cairn.Step) cairn.Status {
	if st == nil {
		return cairn.Running
	}
	return st.Status
}

func question(st *cairn.Step) string {
	q := hitl.Question(st.Record)
	if q == nil {
		return "(no question in the record)"
	}
	// As cairn inbox shows it, safe for a terminal; the question is JSON
	// text, so its escapes are JSON's (the value reads the same).
	return termtext.Clip(termtext.PrintableJSON(string(q)), 200)
}

// waitPast polls until the head is past step n. A session that no
// longer has a head (removed, or swept after that) gets no reply: its
// error ends the wait. A store out of reach does not: a human may take
// hours to answer, and the store may restart meanwhile; the wait says so
// on log once and polls on.
func waitPast(ctx context.Context, s *cairn.Session, n uint64, every time.Duration, log io.Writer) (*cairn.Step, error) {
	t := time.NewTicker(every)
	defer t.Stop()
	said := false
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
		}
		h, err := s.Head(ctx)
		if err != nil && outOfReach(ctx, err) {
			if !said {
				fmt.Fprintf(log, "cairn run: cannot read the head of %s: %s; waiting on\n", s.Name(), oneLine(err))
				said = true
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		said = false
		if h.Number > n {
			return h, nil
		}
	}
}

// materialise empties dir and writes the head state into it.
func materialise(ctx context.Context, head *cairn.Step, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := emptyDir(dir); err != nil {
		return err
	}
	if head == nil {
		return nil
	}
	// The run holds dir's lock (lockWorkDir, tempDir).
	return head.Checkout(targetdir.Held(ctx, dir), dir)
}

// emptyDir removes everything in dir.
func emptyDir(dir string) error {
	des, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, de := range des {
		if err := os.RemoveAll(filepath.Join(dir, de.Name())); err != nil {
			return fmt.Errorf("empty work directory: %w", err)
		}
	}
	return nil
}

// String describes a result in one line.
func (r Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "head %d (%s), %d start(s), %d restart(s)", r.Head, r.Status, r.Starts, r.Restarts)
	return b.String()
}
