// Command cairn is the command-line interface to a cairn workspace: a
// durable, content-addressed log of agent steps.
//
// Exit codes: 0 ok, 1 error, 2 usage or bad input, 3 conflict (another
// writer already wrote that step, or --expect did not hold). A command
// whose reader went away (cairn log S | head -n 1) stops and exits 0
// without a message, as Unix tools do. SIGINT or SIGTERM stops a
// command, which removes what it wrote of an unfinished checkout or
// export and exits 1 ("interrupted before it finished"); serve and mcp
// stop serving.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cairnlog/cairn"
	_ "github.com/cairnlog/cairn/cas/minio" // minio:// stores
	_ "github.com/cairnlog/cairn/cas/s3"    // s3:// stores
	"github.com/cairnlog/cairn/internal/runner"
	"github.com/cairnlog/cairn/internal/storeurl"
	"github.com/cairnlog/cairn/manifest"
)

// command is one subcommand: its flags are set up by flags, and run does the work.
type command struct {
	summary string
	usage   string
	run     func(ctx context.Context, env *env, args []string) error
	// needStore: the command only reads or changes what a store holds,
	// so a local store directory that does not exist is an error ("no
	// store at PATH") rather than created. Commands that commit (commit,
	// run, serve, mcp) create it with their first write.
	needStore bool
	// serves: the command keeps one process open for many requests
	// (serve, mcp), so an in-memory mem:// store lasts as long as its
	// clients use it; every other command would lose it at exit.
	serves bool
	// noStore: the command opens no store (version), so its flags have
	// no --store: a command's --help lists only flags it uses.
	noStore bool
}

var commands map[string]command

func init() {
	commands = map[string]command{
		"commit":   commitCmd,
		"show":     showCmd,
		"checkout": checkoutCmd,
		"log":      logCmd,
		"fork":     forkCmd,
		"sessions": sessionsCmd,
		"diff":     diffCmd,
		"replay":   replayCmd,
		"verify":   verifyCmd,
		"run":      runCmd,
		"serve":    serveCmd,
		"inbox":    inboxCmd,
		"reply":    replyCmd,
		"mcp":      mcpCmd,
		"export":   exportCmd,
		"rm":       rmCmd,
		"prune":    pruneCmd,
		"gc":       gcCmd,
		"du":       duCmd,
		"version":  versionCmd,
	}
}

// env is what every command gets: the store URL and the output streams.
type env struct {
	store      string
	storeGiven bool // --store came before the command
	stdin      io.Reader
	stdout     io.Writer
	stderr     io.Writer
	needStore  bool // see command.needStore
	serves     bool // see command.serves
}

// open opens the workspace with the read limits of the environment
// ($CAIRN_MAX_OBJECT_BYTES, $CAIRN_MAX_VALUE_BYTES, $CAIRN_MAX_TOTAL_BYTES,
// $CAIRN_MAX_DEPTH, $CAIRN_MAX_FORK_LEVELS).
func (e *env) open(ctx context.Context) (*cairn.Workspace, error) {
	limits, err := cairn.LimitsFromEnv()
	if err != nil {
		return nil, usageError{err.Error()}
	}
	if err := e.checkStore(); err != nil {
		return nil, err
	}
	ws, err := cairn.Open(ctx, e.store)
	if err != nil {
		return nil, err
	}
	if err := ws.SetLimits(limits); err != nil {
		ws.Close()
		return nil, usageError{err.Error()} // LimitsFromEnv gives none
	}
	return ws, nil
}

// checkStore refuses a named local store directory that does not exist
// for a command that needs one, so that a mistyped --store is an error,
// not an empty store. The default store is not refused: before the
// first commit it is simply empty. Opening a store creates nothing; the
// first write does.
//
// A local store that is a file is refused for every command, and an
// in-memory mem:// store for every command but serve and mcp (whose one
// process outlives each request), as the bad value it is (exit 2),
// naming the flag or variable that gave it.
func (e *env) checkStore() error {
	url, from := e.storeURL()
	if url == "" {
		// The default store: the same path problems, said of it.
		path := cairn.DefaultStore()
		if problem := localStoreProblem(path); problem != "" {
			return usagef("the default store %s: %s (give --store or $CAIRN_STORE, or another $XDG_DATA_HOME)", path, problem)
		}
		return nil
	}
	if strings.HasPrefix(url, "mem://") && !e.serves {
		// The Go API's store for tests lives in one process: what a
		// command committed there would be gone when it exits.
		return usagef("%s %s: an in-memory store lives only inside one process, so what a command wrote there would be lost when it exits (give a directory, s3:// or minio://)", from, url)
	}
	path, local := storeurl.Local(url)
	if !local || path == "" {
		return nil // file:// naming no directory: Open refuses it
	}
	if problem := unexpandedTilde(path); problem != "" {
		return usagef("%s %s: %s", from, url, problem)
	}
	if problem := localStoreProblem(path); problem != "" {
		return usagef("%s %s: %s (a local store is a directory; s3:// and minio:// URLs name object stores)", from, url, problem)
	}
	if err := checkStorePlace(from, url, path); err != nil {
		return err
	}
	if !e.needStore {
		return nil
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no store at %s (check --store or $CAIRN_STORE; a store is made by its first commit)", path)
	}
	return nil
}

// localStoreProblem says why the local store directory path cannot be a
// store, or "" if it can (a directory, or nothing yet, which the first
// commit makes): a file stands there or on its way, its links loop, or
// it is a link to nothing, which the first commit could not make
// either. Every read and write under such a path would fail the same
// way, naming files of the store instead of the setting that is wrong.
func localStoreProblem(path string) string {
	fi, err := os.Stat(path)
	switch {
	case err == nil && !fi.IsDir():
		return "not a directory"
	case errors.Is(err, syscall.ELOOP):
		return "a loop of symbolic links, not a directory"
	case errors.Is(err, syscall.ENOTDIR):
		return "not a directory: a file stands on its path"
	case errors.Is(err, os.ErrNotExist):
		if target, lerr := os.Readlink(path); lerr == nil {
			return "a symbolic link to " + target + ", which does not exist"
		}
	}
	return ""
}

// checkStorePlace refuses a local store directory where a store cannot
// be kept apart from other files: the root of the filesystem, which
// holds every file of the machine (and whose stray temporary files
// opening a store removes), or a directory inside another store, whose
// files would be that store's keys (--store A/steps/s, a session's
// directory of the store at A).
func checkStorePlace(from, url, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil // Open says what is wrong with it
	}
	if filepath.Dir(abs) == abs {
		return usagef("%s %s: is the root of the filesystem, which cannot be a store: give a directory of its own, such as %s", from, url, cairn.DefaultStore())
	}
	for p := filepath.Dir(abs); ; p = filepath.Dir(p) {
		if manifest.IsLocalStore(p) {
			return usagef("%s %s: is inside the store at %s; give a directory outside it", from, url, p)
		}
		if filepath.Dir(p) == p {
			return nil
		}
	}
}

// defaultStoreUnmade reports whether the command uses the default store
// (no --store, no $CAIRN_STORE) and its directory does not exist yet.
func (e *env) defaultStoreUnmade() bool {
	if url, _ := e.storeURL(); url != "" {
		return false
	}
	_, err := os.Stat(cairn.DefaultStore())
	return errors.Is(err, os.ErrNotExist)
}

// storeURL returns the store URL given by --store or else $CAIRN_STORE,
// and which of the two gave it; "" if neither did (the default store).
func (e *env) storeURL() (url, from string) {
	if e.store != "" {
		return e.store, "--store"
	}
	if url := os.Getenv("CAIRN_STORE"); url != "" {
		return url, "$CAIRN_STORE"
	}
	return "", ""
}

// openNamed opens the workspace after checking that each of names is a
// valid session name (a bad one is a usage error, exit 2); the caller
// closes the workspace.
func (e *env) openNamed(ctx context.Context, names ...string) (*cairn.Workspace, error) {
	for _, n := range names {
		if err := cairn.ValidSession(n); err != nil {
			return nil, usageError{err.Error()}
		}
	}
	return e.open(ctx)
}

// openSteps opens the workspace and resolves each of refs (S or S@N).
// On success the caller closes the workspace.
func (e *env) openSteps(ctx context.Context, refs ...string) (*cairn.Workspace, []*cairn.Step, error) {
	ws, err := e.open(ctx)
	if err != nil {
		return nil, nil, err
	}
	steps := make([]*cairn.Step, len(refs))
	for i, ref := range refs {
		if steps[i], err = resolve(ctx, ws, ref); err != nil {
			ws.Close()
			return nil, nil, err
		}
	}
	return ws, steps, nil
}

// usageError is bad command-line input: exit code 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

func main() {
	if os.Getenv(runner.GuardEnv) != "" {
		// The guard of a command under cairn run (see runner.Config.Guard).
		os.Exit(runner.GuardMain(os.Args[1:]))
	}
	stdoutClosed = startedWithStdoutClosed()
	tuneGC()
	// SIGTERM (kill, a container's stop, a supervisor) ends a command as
	// Ctrl-C does: it stops, removes what it wrote of an unfinished
	// checkout or export, and says it was interrupted, exit 1; serve and
	// mcp stop serving, exit 0. Without it, SIGTERM killed the process
	// where it stood (exit 143), leaving half-written files behind.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Without a handler, the Go runtime kills a program whose write to
	// stdout finds the pipe closed (status 141 in a shell). With one, the
	// write returns EPIPE, which run turns into a quiet exit 0. A handler,
	// unlike ignoring the signal, is not inherited by the commands that
	// cairn run starts.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes one cairn invocation and returns its exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	out := &stdoutWriter{w: stdout, closed: stdoutClosed && stdout == io.Writer(os.Stdout)}
	e := &env{stdin: stdin, stdout: out, stderr: stderr}
	code := runArgs(ctx, e, args)
	if out.readerGone() {
		return 0 // the reader went away: stop quietly, as Unix tools do
	}
	if out.err != nil && code == 0 {
		fmt.Fprintf(stderr, "cairn: output lost: %v\n", out.err)
		return 1
	}
	return code
}

func runArgs(ctx context.Context, e *env, args []string) int {
	stdout, stderr := e.stdout, e.stderr
	// A --store before the command applies to it.
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		a := args[0]
		switch {
		case a == "--store" || a == "-store" || strings.HasPrefix(a, "--store=") || strings.HasPrefix(a, "-store="):
			name, value, hasValue := strings.Cut(a, "=")
			if !hasValue && len(args) < 2 {
				fmt.Fprintf(stderr, "cairn: %s needs a value\n", name)
				return 2
			}
			if e.storeGiven {
				fmt.Fprintf(stderr, "cairn: %s given twice (it takes one value)\n", name)
				return 2
			}
			if hasValue {
				args = args[1:]
			} else {
				value, args = args[1], args[2:]
			}
			if value == "" {
				fmt.Fprintf(stderr, "cairn: %s\n", emptyStore(name))
				return 2
			}
			e.store, e.storeGiven = value, true
		case a == "-h" || a == "--help" || a == "-help":
			printHelp(stdout)
			return 0
		case a == "--version" || a == "-version":
			printVersion(stdout)
			return 0
		default:
			fmt.Fprintf(stderr, "cairn: unknown flag %s before the command\n", a)
			return 2
		}
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, "cairn: no command given (see cairn help)")
		return 2
	}
	if args[0] == "help" {
		switch len(args) {
		case 1:
			printHelp(stdout)
			return 0
		case 2:
			if args[1] == "help" || args[1] == "--help" || args[1] == "-h" {
				fmt.Fprintln(stdout, "usage: cairn help [COMMAND]\n\nprint the commands, or COMMAND's usage and flags (as cairn COMMAND --help)")
				return 0
			}
			if _, ok := commands[args[1]]; ok {
				// A command's help is its --help: usage and flags.
				return runArgs(ctx, e, []string{args[1], "--help"})
			}
			fmt.Fprintf(stderr, "cairn help: unknown command %q (%ssee cairn help)\n", args[1], didYouMean(args[1]))
			return 2
		}
		fmt.Fprintln(stderr, "cairn help: want help [COMMAND]")
		return 2
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "cairn: unknown command %q (%ssee cairn help)\n", args[0], didYouMean(args[0]))
		return 2
	}
	e.needStore, e.serves = cmd.needStore, cmd.serves
	err := cmd.run(ctx, e, args[1:])
	return exitCode(stderr, args[0], err)
}

// didYouMean returns "did you mean C? " for the command C that name is
// one or two typing slips away from ("comit", "sesions", "chekout"), or
// "" if there is none or more than one.
func didYouMean(name string) string {
	best, bestD, ties := "", 3, 0
	for c := range commands {
		switch d := editDistance(strings.ToLower(name), c); {
		case d < bestD:
			best, bestD, ties = c, d, 1
		case d == bestD:
			ties++
		}
	}
	if best == "" || ties > 1 || bestD >= len(best) {
		return ""
	}
	return "did you mean " + best + "? "
}

// editDistance is the edit distance between a and b, in bytes: the
// fewest insertions, deletions, substitutions and swaps of two adjacent
// bytes that make one the other (optimal string alignment), so that a
// swap ("lgo" for log) is one slip, not two.
func editDistance(a, b string) int {
	rows := [3][]int{make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)}
	for j := range rows[1] {
		rows[1][j] = j
	}
	for i := 1; i <= len(a); i++ {
		before, prev, cur := rows[0], rows[1], rows[2]
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], before[j-2]+1)
			}
		}
		rows[0], rows[1], rows[2] = prev, cur, before
	}
	return rows[1][len(b)]
}

func exitCode(stderr io.Writer, name string, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) || errors.Is(err, errReaderGone) {
		return 0
	}
	var ue usageError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "cairn %s: %s\n", name, unprefixed(name, err.Error()))
		return 2
	case errors.Is(err, cairn.ErrInvalid):
		fmt.Fprintf(stderr, "cairn %s: %s\n", name, unprefixed(name, err.Error()))
		return 2
	case errors.Is(err, cairn.ErrConflict):
		fmt.Fprintf(stderr, "cairn %s: %s\n", name, unprefixed(name, err.Error()))
		return 3
	case errors.Is(err, errProblems):
		return 1 // already reported
	case errors.Is(err, context.Canceled):
		// SIGINT or SIGTERM: say so, not which store request the signal cut short.
		msg := "interrupted before it finished"
		if errors.Is(err, cairn.ErrMaybeWritten) {
			msg += " (the step may have been written: cairn log shows the head)"
		}
		fmt.Fprintf(stderr, "cairn %s: %s\n", name, msg)
		return 1
	}
	hint := cairn.LimitEnvHint(err)
	if hint == "" {
		hint = cairn.DamageHint(err)
	}
	if hint != "" {
		fmt.Fprintf(stderr, "cairn %s: %s (%s)\n", name, unprefixed(name, oneLine(err)), hint)
		return 1
	}
	fmt.Fprintf(stderr, "cairn %s: %s\n", name, unprefixed(name, oneLine(err)))
	return 1
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

// unprefixed drops the command's own name from the front of msg: the Go
// API names its operation ("gc: mark live steps of d: …"), and the line
// already starts "cairn gc: ".
func unprefixed(name, msg string) string { return strings.TrimPrefix(msg, name+": ") }

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "usage: cairn [--store URL] COMMAND [ARGS]")
	fmt.Fprintln(w, "\nThe store is --store URL, else $CAIRN_STORE, else", cairn.DefaultStore())
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-9s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nA step is SESSION (its head) or SESSION@N, step N of the session's history: below a")
	fmt.Fprintln(w, "fork's first step, the step it shares with the session it was forked from (shown as that step).")
	fmt.Fprintln(w, "\nexit codes: 0 ok, 1 error, 2 usage or bad input, 3 conflict")
	fmt.Fprintln(w, "cairn help COMMAND (or cairn COMMAND --help) prints a command's flags.")
}

// flagSet is a command's flags and the help it prints for -h.
type flagSet struct {
	*flag.FlagSet
	help func()
}

// newFlags returns a flag set for a command that also accepts --store,
// unless the command opens no store (command.noStore).
// Parse errors are returned, not printed: they become one line on
// stderr; -h prints the command's usage on stdout.
func newFlags(e *env, name, usage string) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if c, ok := commands[name]; !ok || !c.noStore {
		fs.StringVar(&e.store, "store", e.store, "store `URL` (default $CAIRN_STORE or the local default directory)")
		// A --store before the command counts as the first use of this one.
		store := fs.Lookup("store")
		store.Value = &onceFlag{Value: store.Value, given: e.storeGiven}
	}
	help := func() {
		fmt.Fprintf(e.stdout, "usage: %s\n", strings.TrimSpace("cairn "+name+" "+usage))
		if c, ok := commands[name]; ok {
			fmt.Fprintf(e.stdout, "\n%s\n\n", c.summary)
		}
		fs.VisitAll(func(f *flag.Flag) {
			g := *f
			g.Value = unwrapFlag(f.Value) // UnquoteUsage names a value by its type
			arg, text := flag.UnquoteUsage(&g)
			if arg != "" {
				arg = " " + arg
			}
			def := ""
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && !strings.HasPrefix(f.DefValue, "-") && f.Name != "store" {
				def = fmt.Sprintf(" (default %s)", f.DefValue)
			}
			fmt.Fprintf(e.stdout, "  --%s%s\n        %s%s\n", f.Name, arg, text, def)
		})
	}
	return &flagSet{FlagSet: fs, help: help}
}

// wholeFlag is a flag whose value is a whole number in decimal digits:
// the flag package's own integers also read 0x10, 1_000 and 010 (as 8),
// so an --expect could hold a number the user never wrote. Each flag
// names its range (min to max) and what its numbers are (noun), so that
// every refusal says what that flag accepts.
type wholeFlag struct {
	n        uint64
	min, max uint64
	noun     string // "a whole number", "a size in bytes"
	hint     string // said after the range when the value is below min
}

func (f *wholeFlag) String() string {
	if f == nil {
		return "0"
	}
	return strconv.FormatUint(f.n, 10)
}
func (f *wholeFlag) Get() any { return f.n }

func (f *wholeFlag) Set(s string) error {
	n, err := strconv.ParseUint(s, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange) || err == nil && n > f.max:
		return errOutOfRange
	case err != nil || n < f.min:
		return errors.New("parse error")
	}
	f.n = n
	return nil
}

// accepts says what the flag accepts: "a whole number, 1 or more" or,
// with a maximum below 2^64-1 or for a value past it, "a size in bytes
// from 1 to 9223372036854775807".
func (f *wholeFlag) accepts(tooLarge bool) string {
	if f.max == math.MaxUint64 && !tooLarge {
		return fmt.Sprintf("%s, %d or more", f.noun, f.min)
	}
	return fmt.Sprintf("%s from %d to %d", f.noun, f.min, f.max)
}

// problem is the one line for value refused by Set, given as flag.
func (f *wholeFlag) problem(flag, value string) string {
	n, err := strconv.ParseUint(value, 10, 64)
	if errors.Is(err, strconv.ErrRange) || err == nil && n > f.max {
		return fmt.Sprintf("%s %q: out of range: want %s", flag, value, f.accepts(true))
	}
	msg := fmt.Sprintf("%s %q: want %s", flag, value, f.accepts(false))
	if err == nil && n < f.min && f.hint != "" {
		msg += " (" + f.hint + ")"
	}
	return msg
}

// durationText matches what time.ParseDuration reads: a sign, then
// numbers each with its unit. A value of that form that does not parse
// is too large for a duration.
var durationText = sync.OnceValue(func() *regexp.Regexp { // compiled when needed: nothing at start-up
	return regexp.MustCompile(`^[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`)
})

// errOutOfRange is the flag package's word for a number too large.
var errOutOfRange = errors.New("value out of range")

// whole defines a wholeFlag with default value that accepts any whole
// number from min up.
func (fs *flagSet) whole(name string, value, min uint64, usage string) *uint64 {
	return fs.wholeIn(name, value, min, math.MaxUint64, "a whole number", "", usage)
}

// wholeIn defines a wholeFlag accepting noun from min to max; hint is
// added to the refusal of a value below min.
func (fs *flagSet) wholeIn(name string, value, min, max uint64, noun, hint, usage string) *uint64 {
	f := &wholeFlag{n: value, min: min, max: max, noun: noun, hint: hint}
	fs.Var(f, name, usage)
	return &f.n
}

// onceFlag is a flag that takes one value. Given twice it is refused
// (a usage error), not left to the last use: a script that appends
// --store to a command that already has one would otherwise write to a
// store the user did not mean.
type onceFlag struct {
	flag.Value
	given bool   // set once
	first string // its value
	twice bool   // a second use was refused
	again string // its value
}

// Set sets the flag's value on its first use and refuses any other,
// except, for an on/off flag, one that says the same (--json --json).
func (f *onceFlag) Set(s string) error {
	if f.given {
		if f.IsBoolFlag() && sameBool(f.first, s) {
			return nil
		}
		f.twice, f.again = true, s
		return errGivenTwice
	}
	f.given, f.first = true, s
	return f.Value.Set(s)
}

// sameBool reports whether a and b are the same on/off value.
func sameBool(a, b string) bool {
	x, err1 := strconv.ParseBool(a)
	y, err2 := strconv.ParseBool(b)
	return err1 == nil && err2 == nil && x == y
}

// IsBoolFlag is the wrapped flag's: --json needs no value.
func (f *onceFlag) IsBoolFlag() bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// Get is the wrapped flag's value, for flagProblem's words.
func (f *onceFlag) Get() any {
	if g, ok := f.Value.(flag.Getter); ok {
		return g.Get()
	}
	return f.Value.String()
}

// errGivenTwice is onceFlag's refusal; flagProblem words it.
var errGivenTwice = errors.New("given twice")

// unwrapFlag returns the flag value a onceFlag wraps, or v.
func unwrapFlag(v flag.Value) flag.Value {
	if o, ok := v.(*onceFlag); ok {
		return o.Value
	}
	return v
}

// parse parses flags that may come before, between or after the
// positional arguments, and checks the positional count. Every flag but
// a repeatable one (a listFlag) may be given once.
func parse(fs *flagSet, args []string, minPos, maxPos int) ([]string, error) {
	fs.VisitAll(func(f *flag.Flag) {
		switch f.Value.(type) {
		case *onceFlag, *listFlag:
		default:
			f.Value = &onceFlag{Value: f.Value}
		}
	})
	var pos []string
	args0 := args
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.help()
				return nil, err
			}
			return nil, usageError{flagProblem(fs.FlagSet, err, args)}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if endedByDashes(fs.FlagSet, args) {
			// After --, everything is positional: a session may be
			// named -x (or --).
			pos = append(pos, rest...)
			break
		}
		if rest[0] == "-" || !strings.HasPrefix(rest[0], "-") {
			pos = append(pos, rest[0])
			args = rest[1:]
			continue
		}
		args = rest
	}
	if given(fs, "store") && fs.Lookup("store").Value.String() == "" {
		return nil, usageError{emptyStore(typedFlag(args0, "store"))}
	}
	if len(pos) < minPos || len(pos) > maxPos {
		return nil, usagef("want %s", strings.TrimSpace(fs.Name()+" "+usageOf(fs)))
	}
	return pos, nil
}

// emptyStore is the refusal of a --store given an empty value (as
// --store "$S" with S unset is): taking it as no --store would use
// $CAIRN_STORE or the default store, not the one the user meant.
func emptyStore(flag string) string {
	return flag + ": give a store URL (a directory, s3://BUCKET/PREFIX or minio://HOST:PORT/BUCKET/PREFIX), or leave --store out for $CAIRN_STORE or the default store"
}

// endedByDashes reports whether fs.Parse(args), which succeeded, stopped
// at a "--" that ends the flags (not one that is a flag's value, as in
// --dir --), by walking args as the flag package does.
func endedByDashes(fs *flag.FlagSet, args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return true
		}
		if len(a) < 2 || a[0] != '-' {
			return false
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		f := fs.Lookup(name)
		if f == nil || hasValue {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		i++ // the flag's value
	}
	return false
}

// given reports whether flag name was on the command line.
func given(fs *flagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

func usageOf(fs *flagSet) string {
	if c, ok := commands[fs.Name()]; ok {
		return c.usage
	}
	return ""
}

// flagProblem rewrites the flag package's parse errors ("invalid value
// "1.5" for flag -expect: parse error") in the words of cairn's help,
// naming the flag as the user typed it in args (-n or --n).
func flagProblem(fs *flag.FlagSet, err error, args []string) string {
	msg, name := err.Error(), ""
	var twice *onceFlag
	fs.VisitAll(func(f *flag.Flag) {
		if o, ok := f.Value.(*onceFlag); ok && o.twice {
			twice, name = o, f.Name
		}
	})
	if twice != nil {
		if twice.IsBoolFlag() {
			return fmt.Sprintf("%s given twice, on and off", typedFlag(args, name, twice.again))
		}
		return fmt.Sprintf("%s given twice (it takes one value)", typedFlag(args, name, twice.again))
	}
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return fmt.Sprintf("unknown flag %s (see cairn help %s)", typedFlag(args, name), fs.Name())
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return fmt.Sprintf("%s needs a value", typedFlag(args, name))
	}
	var value string
	if _, serr := fmt.Sscanf(msg, "invalid boolean value %q for -%s", &value, &name); serr == nil {
		return fmt.Sprintf("%s=%q: want true or false", typedFlag(args, strings.TrimSuffix(name, ":"), value), value)
	}
	if _, serr := fmt.Sscanf(msg, "invalid value %q for flag -%s", &value, &name); serr == nil {
		name = strings.TrimSuffix(name, ":")
		if f := fs.Lookup(name); f != nil {
			if w, ok := unwrapFlag(f.Value).(*wholeFlag); ok {
				return w.problem(typedFlag(args, name, value), value)
			}
		}
		if strings.HasSuffix(msg, ": "+errOutOfRange.Error()) {
			return fmt.Sprintf("%s %q: out of range", typedFlag(args, name, value), value)
		}
		want := "a valid value"
		if f := fs.Lookup(name); f != nil {
			if g, ok := f.Value.(flag.Getter); ok {
				switch g.Get().(type) {
				case int, int64:
					want = "a whole number"
				case uint, uint64:
					want = "a whole number, 0 or more"
				case time.Duration:
					if durationText().MatchString(value) {
						// Written as a duration, and past what one holds.
						return fmt.Sprintf("%s %q: out of range (at most %dh)", typedFlag(args, name, value), value, int64(math.MaxInt64/int64(time.Hour)))
					}
					want = "a duration such as 90s, 15m or 1h"
				case bool:
					want = "true or false"
				}
			}
		}
		return fmt.Sprintf("%s %q: want %s", typedFlag(args, name, value), value, want)
	}
	return msg
}

// typedFlag returns flag name as the user typed it: with the one or two
// dashes of its use in args (-name, --name, -name=V or --name=V) that
// gave value, if value is not nil (a flag may be given twice), else of
// its first use. A flag not found is said with two.
func typedFlag(args []string, name string, value ...string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		dashes := "--"
		rest, ok := strings.CutPrefix(a, dashes)
		if !ok {
			dashes = "-"
			if rest, ok = strings.CutPrefix(a, dashes); !ok {
				continue
			}
		}
		n, v, hasV := strings.Cut(rest, "=")
		if n != name {
			continue
		}
		if len(value) > 0 && !(hasV && v == value[0]) && !(!hasV && i+1 < len(args) && args[i+1] == value[0]) {
			continue
		}
		return dashes + name
	}
	if len(value) > 0 {
		return typedFlag(args, name)
	}
	return "--" + name
}
