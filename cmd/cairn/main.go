// Command cairn is the command-line interface to a cairn workspace: a
// durable, content-addressed log of agent steps.
//
// Exit codes: 0 ok, 1 error, 2 usage or bad input, 3 conflict (another
// writer already wrote that step, or --expect did not hold).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"

	"github.com/cairnlog/cairn"
	_ "github.com/cairnlog/cairn/cas/minio" // minio:// stores
	_ "github.com/cairnlog/cairn/cas/s3"    // s3:// stores
)

// command is one subcommand: its flags are set up by flags, and run does the work.
type command struct {
	summary string
	usage   string
	run     func(ctx context.Context, env *env, args []string) error
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
	}
}

// env is what every command gets: the store URL and the output streams.
type env struct {
	store  string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// open opens the workspace with the read limits of the environment
// ($CAIRN_MAX_OBJECT_BYTES, $CAIRN_MAX_VALUE_BYTES, $CAIRN_MAX_DEPTH).
func (e *env) open(ctx context.Context) (*cairn.Workspace, error) {
	limits, err := cairn.LimitsFromEnv()
	if err != nil {
		return nil, usageError{err.Error()}
	}
	ws, err := cairn.Open(ctx, e.store)
	if err != nil {
		return nil, err
	}
	ws.SetLimits(limits)
	return ws, nil
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes one cairn invocation and returns its exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	// A --store before the command applies to it.
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		a := args[0]
		switch {
		case a == "--store" || a == "-store":
			if len(args) < 2 {
				fmt.Fprintln(stderr, "cairn: --store needs a value")
				return 2
			}
			e.store, args = args[1], args[2:]
		case strings.HasPrefix(a, "--store=") || strings.HasPrefix(a, "-store="):
			e.store, args = a[strings.IndexByte(a, '=')+1:], args[1:]
		case a == "-h" || a == "--help" || a == "-help":
			printHelp(stdout)
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
		printHelp(stdout)
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "cairn: unknown command %q (see cairn help)\n", args[0])
		return 2
	}
	err := cmd.run(ctx, e, args[1:])
	return exitCode(stderr, args[0], err)
}

func exitCode(stderr io.Writer, name string, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var ue usageError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "cairn %s: %v\n", name, err)
		return 2
	case errors.Is(err, cairn.ErrInvalid):
		fmt.Fprintf(stderr, "cairn %s: %v\n", name, err)
		return 2
	case errors.Is(err, cairn.ErrConflict):
		fmt.Fprintf(stderr, "cairn %s: %v\n", name, err)
		return 3
	case errors.Is(err, errProblems):
		return 1 // already reported
	}
	fmt.Fprintf(stderr, "cairn %s: %v\n", name, oneLine(err))
	return 1
}

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

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
	fmt.Fprintln(w, "\nexit codes: 0 ok, 1 error, 2 usage or bad input, 3 conflict")
}

// flagSet is a command's flags and the help it prints for -h.
type flagSet struct {
	*flag.FlagSet
	help func()
}

// newFlags returns a flag set for a command that also accepts --store.
// Parse errors are returned, not printed: they become one line on
// stderr; -h prints the command's usage on stdout.
func newFlags(e *env, name, usage string) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&e.store, "store", e.store, "store `URL` (default $CAIRN_STORE or the local default directory)")
	help := func() {
		fmt.Fprintf(e.stdout, "usage: cairn %s %s\n", name, usage)
		fs.SetOutput(e.stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return &flagSet{FlagSet: fs, help: help}
}

// parse parses flags that may come before, between or after the
// positional arguments, and checks the positional count.
func parse(fs *flagSet, args []string, minPos, maxPos int) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.help()
				return nil, err
			}
			return nil, usageError{err.Error()}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if rest[0] == "-" || !strings.HasPrefix(rest[0], "-") {
			pos = append(pos, rest[0])
			args = rest[1:]
			continue
		}
		args = rest
	}
	if len(pos) < minPos || len(pos) > maxPos {
		return nil, usagef("want %s", strings.TrimSpace(fs.Name()+" "+usageOf(fs)))
	}
	return pos, nil
}

func usageOf(fs *flagSet) string {
	if c, ok := commands[fs.Name()]; ok {
		return c.usage
	}
	return ""
}
