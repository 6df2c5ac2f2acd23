package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/export"
	"github.com/cairnlog/cairn/internal/jsontext"
	"github.com/cairnlog/cairn/internal/realpath"
)

const exportUsage = "--format openai-jsonl|atif|sharegpt|parquet|preference [--out PATH] [--manifest PATH] [--session GLOB]... [--label K=V]... [--outcome O] [--min-reward X] [--max-reward X] [--status S] [--since T] [--until T] [--branches leaves|all] [--heads MANIFEST] [--metadata=false]"

var exportCmd = command{
	summary:   "export trajectories as training data (chat JSONL, ATIF, ShareGPT, Parquet, preference pairs)",
	usage:     exportUsage,
	run:       runExport,
	needStore: true,
}

// walkCacheBytes bounds the step objects a command that walks whole
// histories, reading each object about once, keeps cached (export, log,
// replay, verify, du): more would only hold memory in the history's length.
const walkCacheBytes = 4 << 20

// listFlag collects a repeatable flag: each use adds a value (parse
// lets it be given more than once).
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// parseTime accepts RFC 3339 or a date (midnight UTC).
func parseTime(flag, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, usagef("--%s %q: want RFC 3339 (2026-01-02T15:04:05Z) or a date (2026-01-02)", flag, v)
}

func runExport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "export", exportUsage)
	format := fs.String("format", "", "output `FORMAT`: "+strings.Join(export.Formats, ", "))
	out := fs.String("out", "-", "write to `PATH` (- for stdout); a file is written beside it and renamed over it when complete; a FIFO or device is written to")
	manifestPath := fs.String("manifest", "", "write the export manifest to `PATH` (- for stdout; default PATH.manifest.json with --out PATH)")
	var globs, labels listFlag
	fs.Var(&globs, "session", "select sessions whose name matches `GLOB` (repeatable: any matches)")
	fs.Var(&labels, "label", "select trajectories labelled `K=V` (repeatable: all must hold; outcome=V is --outcome V)")
	outcome := fs.String("outcome", "", "select trajectories whose outcome is `O` (success also matches pass, passed, …; failure fail, failed, …)")
	minReward := fs.String("min-reward", "", "select trajectories whose reward is at least `X`")
	maxReward := fs.String("max-reward", "", "select trajectories whose reward is at most `X`")
	metadata := fs.Bool("metadata", true, "give openai-jsonl and sharegpt lines a metadata object (session, head, outcome, reward, labels, model, forked_from)")
	status := fs.String("status", "", "select sessions whose head has status `S` (running, awaiting_input, done)")
	since := fs.String("since", "", "select sessions whose head is at or after `T` (RFC 3339 or YYYY-MM-DD)")
	until := fs.String("until", "", "select sessions whose head is before `T`")
	heads := fs.String("heads", "", "re-export exactly the trajectories of the export manifest at `PATH` (no selectors)")
	branches := fs.String("branches", export.Leaves, "`leaves|all`: one trajectory per leaf of the fork tree, or (all) also every forked-from session's own path")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *format == "" {
		return usagef("--format is required (one of %s)", strings.Join(export.Formats, ", "))
	}
	// A selector given an empty value (--outcome "$O", O unset) is no
	// selector: taking it as absent would export what was not asked for.
	for _, c := range []struct{ name, want string }{
		{"outcome", "an outcome such as success or failure"},
		{"status", "running, awaiting_input or done"},
		{"since", "RFC 3339 (2026-01-02T15:04:05Z) or a date (2026-01-02)"},
		{"until", "RFC 3339 (2026-01-02T15:04:05Z) or a date (2026-01-02)"},
		{"min-reward", "a number"},
		{"max-reward", "a number"},
		{"heads", "the path of an export manifest"},
		{"branches", "leaves or all"},
		{"manifest", "a path, or - for stdout"},
	} {
		if given(fs, c.name) && fs.Lookup(c.name).Value.String() == "" {
			return usagef("--%s \"\": want %s (leave --%s out to not use it)", c.name, c.want, c.name)
		}
	}
	for _, g := range globs {
		if g == "" {
			return usagef("--session \"\": an empty pattern matches no session (give a name or a glob such as 'run-*')")
		}
	}
	opts := export.Options{Format: *format, Sessions: globs, Branches: *branches, Labels: map[string]string{},
		Outcome: *outcome, NoMetadata: !*metadata}
	for _, l := range labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return usagef("--label %q: want KEY=VALUE", l)
		}
		if k == "outcome" && v == "" {
			// Said as --outcome "" is: outcome=V is --outcome V.
			return usagef("--label outcome=: want an outcome such as success or failure (leave the label out to not use it)")
		}
		if prev, ok := opts.Labels[k]; ok && prev != v && !export.SameOutcome(prev, v, k) {
			return usagef("--label %s=%s and --label %s=%s contradict each other: a label has one value, so nothing can be selected", k, prev, k, v)
		}
		opts.Labels[k] = v
	}
	if *status != "" {
		st, err := parseStatusFlag(*status)
		if err != nil {
			return err
		}
		opts.Status = &st
	}
	var err error
	if opts.MinReward, err = parseReward("min-reward", *minReward); err != nil {
		return err
	}
	if opts.MaxReward, err = parseReward("max-reward", *maxReward); err != nil {
		return err
	}
	if opts.Since, err = parseTime("since", *since); err != nil {
		return err
	}
	if opts.Until, err = parseTime("until", *until); err != nil {
		return err
	}
	if !opts.Since.IsZero() && !opts.Until.IsZero() && !opts.Since.Before(opts.Until) {
		// Said with the times as given.
		return usagef("--since %s is not before --until %s: nothing can be selected (since <= head time < until)", *since, *until)
	}
	if err := opts.Validate(); err != nil {
		return usageError{err.Error()}
	}
	if *heads != "" {
		if len(globs)+len(labels) > 0 || *status != "" || *since != "" || *until != "" || *outcome != "" || *minReward != "" || *maxReward != "" {
			return usagef("--heads re-exports a manifest's trajectories: give no selectors with it")
		}
		if *format == export.Preference {
			return usagef("--heads works with the trajectory formats, not preference")
		}
		// Read through once before any work, so a path that is not an
		// export manifest is refused as bad input, not found part-way.
		var open func() (io.ReadCloser, error)
		var hdr export.ManifestHeader
		err := interruptible(ctx, func() (err error) {
			open, hdr, err = checkHeads(*heads) // a FIFO waits for its writer
			return err
		})
		if err != nil {
			return err
		}
		// Lines written as the manifest's were, so that the re-export
		// is byte for byte, unless --metadata says otherwise.
		if hdr.Metadata != nil && !given(fs, "metadata") {
			opts.NoMetadata = !*hdr.Metadata
		}
		opts.FromHeads = func(ctx context.Context, yield func(export.ManifestHead) error) error {
			r, err := open()
			if err != nil {
				return err
			}
			defer r.Close()
			return export.ReadManifestHeads(r, yield)
		}
	}
	// Every output path is checked before the store is read: a path that
	// cannot be written is bad input, said of the path as given.
	var outT, manT *outTarget
	if slices.Contains(stdoutAliases, filepath.Clean(*out)) {
		*out = "-"
	}
	if *out != "-" {
		if outT, err = checkOutput("--out", *out); err != nil {
			return err
		}
	}
	manifestFlag := "--manifest"
	if *manifestPath == "" && outT != nil && !outT.direct {
		// Beside a regular file only: not /dev/stdout.manifest.json.
		// Said as what it is: the user gave no --manifest.
		*manifestPath, manifestFlag = *out+".manifest.json", "the export manifest"
	}
	manToStdout := *manifestPath == "-"
	if manToStdout && *out == "-" {
		return usagef("--manifest -: the output already goes to stdout; give --out PATH, or the manifest another path")
	}
	if *manifestPath != "" && !manToStdout {
		if manT, err = checkOutput(manifestFlag, *manifestPath); err != nil {
			if manifestFlag != "--manifest" {
				return usagef("%v (with --manifest PATH)", err)
			}
			return err
		}
		if outT != nil && sameFile(outT, manT) {
			return usagef("--manifest %s: is the --out file too; give another path", *manifestPath)
		}
	}

	// Nothing is written into a local store: an output there could
	// take the place of the store's own objects.
	for _, t := range []*outTarget{outT, manT} {
		if t != nil && !t.direct && e.insideStore(t.file) {
			return usagef("%s %s: is inside the store; write the export elsewhere", t.flag, t.path)
		}
	}
	if *out == "-" && *format == export.Parquet && isTerminal(e.stdout) {
		return usagef("--format parquet writes a binary file: give --out PATH, or redirect stdout")
	}
	ws, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer ws.Close()
	// An export reads each step about once (shared fork prefixes aside):
	// a small cache keeps its memory flat however many sessions there are.
	ws.SetCacheLimit(walkCacheBytes)

	var w io.Writer = e.stdout
	var commit []func() error // renames done once everything is written
	var cleanup []func()
	defer func() {
		for _, c := range cleanup {
			c()
		}
	}()
	create := func(t *outTarget) (*os.File, error) {
		f, err := t.open(ctx)
		if err != nil {
			return nil, err
		}
		cleanup = append(cleanup, t.abort)
		commit = append(commit, t.finish)
		return f, nil
	}
	var mw *export.ManifestWriter
	if manT != nil || manToStdout {
		var f io.Writer = e.stdout
		if manT != nil {
			if f, err = create(manT); err != nil {
				return err
			}
		}
		h := export.ManifestHeader{Format: *format, Output: *out, Store: ws.URL(), CreatedAt: time.Now().UTC(), Args: args}
		if opts.NoMetadata {
			h.Metadata = new(bool)
		}
		mw, err = export.NewManifestWriter(f, h)
		if err != nil {
			return err
		}
		opts.Head = mw.Add
	}
	// The output is renamed into place last, after its manifest: a
	// failed export leaves no file that looks complete.
	if outT != nil {
		f, err := create(outT)
		if err != nil {
			return err
		}
		w = f
	}
	// Stdout, a FIFO or a device cannot be taken back: if the export
	// fails part-way through a line (the store changed between a long
	// trajectory's two reads), none of that line is written there.
	opts.WholeLines = outT == nil || outT.direct
	var bar *export.ProgressBar
	var last export.Progress
	if isTerminal(e.stderr) {
		bar = export.NewProgressBar(e.stderr)
		opts.Progress = func(p export.Progress) { last = p; bar.Update(p) }
	}
	sum, err := export.Export(ctx, ws, w, opts)
	if bar != nil {
		bar.Done(last)
	}
	// Sessions the store holds damaged do not cost the others: the
	// export is completed without them, and they are named last, exit 1
	// (as cairn sessions and cairn inbox do).
	var unreadable *cairn.UnreadableError
	if errors.As(err, &unreadable) {
		err = nil
	}
	if err != nil {
		return err
	}
	// What was skipped or left out is said whatever the output, so
	// nothing vanishes silently.
	for _, n := range sum.Skipped {
		fmt.Fprintf(e.stderr, "skipped %s\n", n)
	}
	for _, n := range sum.LeftOut {
		fmt.Fprintf(e.stderr, "note: %s\n", n)
	}
	if mw != nil {
		if err := mw.Close(sum); err != nil {
			return err
		}
	}
	for i, c := range commit {
		if err := c(); err != nil {
			// What was already renamed into place goes too: a
			// manifest without its output, or the reverse, is no export.
			if manT != nil && i > 0 {
				manT.remove()
			}
			return err
		}
	}
	cleanup = nil
	if sum.Trajectories == 0 && sum.Pairs == 0 {
		// A session named whole that was removed matches its name but has
		// no trajectory: said, lest the user look for a mistake elsewhere.
		for _, g := range globs {
			if strings.ContainsAny(g, `*?[\`) {
				continue
			}
			if _, err := ws.ReadHead(ctx, g); errors.Is(err, cairn.ErrRemoved) {
				fmt.Fprintf(e.stderr, "note: session %s was removed (cairn rm), so it has no trajectory to export\n", g)
			}
		}
	}
	if *out == "-" && sum.Trajectories == 0 && sum.Pairs == 0 && len(sum.Skipped) == 0 {
		// An empty stdout is otherwise indistinguishable from a failure.
		looked := fmt.Sprintf("%d sessions", sum.Sessions)
		if sum.Sessions == 1 {
			looked = "1 session"
		}
		fmt.Fprintf(e.stderr, "exported nothing: no trajectory was selected (%s looked at)\n", looked)
	}
	if *out != "-" {
		what := counted(sum.Trajectories, "trajectory", "trajectories") + ", " + counted(sum.Steps, "step", "steps")
		if *format == export.Preference {
			what = counted(sum.Pairs, "pair", "pairs")
		}
		skipped := int64(0)
		for _, n := range sum.Skipped {
			skipped += n.Sessions
		}
		sessions := "sessions"
		if skipped == 1 {
			sessions = "session"
		}
		fmt.Fprintf(e.stderr, "exported %s to %s (%d %s skipped, %s)\n", what, *out, skipped, sessions, counted(sum.RawRecords, "raw record", "raw records"))
	}
	if unreadable != nil {
		return unreadable
	}
	if len(sum.Unmatched) > 0 {
		// A mistyped name would otherwise pass as a session with
		// nothing to export: the export is complete, and this is said
		// last, exit 1.
		var q []string
		for _, g := range sum.Unmatched {
			q = append(q, strconv.Quote(g))
		}
		return fmt.Errorf("--session %s: no session of the store matches it", strings.Join(q, ", --session "))
	}
	return nil
}

// counted says "1 trajectory", "2 trajectories": n and the noun's form for n.
func counted(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// outTarget is a path an export writes: a regular file (new or not),
// written to a temporary file beside it and renamed over it once
// complete; or a FIFO, device or socket (/dev/stdout, /dev/null, a named
// pipe), which is written to directly and never replaced.
type outTarget struct {
	flag, path string
	file       string // the file replaced: path, or what the link path names
	direct     bool
	info       os.FileInfo // the existing file, if any
	f          *os.File
	tmp        string
}

// checkOutput checks, before any work, that path can take an export's
// output: its directory exists and it is no directory itself.
func checkOutput(flagName, path string) (*outTarget, error) {
	t := &outTarget{flag: flagName, path: path, file: path}
	if path == "" {
		return nil, usagef("%s: give a file name", flagName)
	}
	if problem := notMeantAsPath(path); problem != "" {
		return nil, usagef("%s %s: %s", flagName, path, problem)
	}
	if li, err := os.Lstat(path); err == nil && li.Mode()&os.ModeSymlink != 0 {
		// A link is never replaced: what it names is. A link into /dev
		// or /proc (/dev/stderr, /dev/fd/3) is written through.
		real, err := filepath.EvalSymlinks(path)
		fi, serr := os.Stat(path)
		switch {
		case serr != nil && errors.Is(serr, fs.ErrNotExist):
			return nil, usagef("%s %s: is a symbolic link to a missing file", flagName, path)
		case serr != nil:
			return nil, usagef("%s %s: cannot write it: %v", flagName, path, pathProblem(serr))
		case fi.IsDir():
			return nil, usagef("%s %s: is a directory; give a file name", flagName, path)
		case err != nil || !fi.Mode().IsRegular() || systemPath(real):
			t.direct, t.info = true, fi
			return t, nil
		}
		t.file = real
	} else if real, err := realpath.Resolve(path); err == nil {
		// The file the system opens for path, which the checks below
		// and the store check look at, and beside which the temporary
		// file goes: a ".." after a link goes up from its target.
		t.file = real
	}
	fi, err := os.Stat(t.file)
	switch {
	case err == nil && fi.IsDir():
		return nil, usagef("%s %s: is a directory; give a file name", flagName, path)
	case err == nil && !fi.Mode().IsRegular():
		t.direct, t.info = true, fi
		return t, nil
	case err == nil:
		t.info = fi
	case !errors.Is(err, fs.ErrNotExist):
		return nil, usagef("%s %s: cannot write it: %v", flagName, path, pathProblem(err))
	}
	if strings.HasSuffix(path, "/") {
		return nil, usagef("%s %s: names a directory; give a file name", flagName, path)
	}
	dir := filepath.Dir(t.file)
	di, err := os.Stat(dir)
	if err != nil {
		return nil, usagef("%s %s: cannot write it: directory %s: %v", flagName, path, dir, pathProblem(err))
	}
	if !di.IsDir() {
		return nil, usagef("%s %s: cannot write it: %s is not a directory", flagName, path, dir)
	}
	// Try the directory now, so a read-only one is refused before the
	// export runs rather than after.
	f, err := t.createTemp()
	if err != nil {
		return nil, err
	}
	f.Close()
	os.Remove(f.Name())
	return t, nil
}

// createTemp creates the temporary file the output is written to, beside
// it (so the rename stays in one directory) and never a file of the
// user's such as PATH.tmp.
func (t *outTarget) createTemp() (*os.File, error) {
	dir, base := filepath.Dir(t.file), filepath.Base(t.file)
	// Not os.CreateTemp: its files are 0600, and an export is as
	// readable as any file the user makes (0666 less the umask), or
	// keeps the mode of the file it replaces.
	perm := os.FileMode(0o666)
	if t.info != nil {
		perm = t.info.Mode().Perm()
	}
	for try := 0; ; try++ {
		name := filepath.Join(dir, fmt.Sprintf(".%s.%d.%d.tmp", base, os.Getpid(), rand.Uint32()))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		if err != nil {
			return nil, usagef("%s %s: cannot write it: %v", t.flag, t.path, pathProblem(err))
		}
		if t.info != nil {
			f.Chmod(perm) // the umask applied at creation: keep the old file's mode
		}
		return f, nil
	}
}

// maxPipedHeads bounds an export manifest read from a pipe (--heads
// <(...)), which is held in memory to be read twice.
const maxPipedHeads = 256 << 20

// checkHeads reads the export manifest --heads names through once, so
// a path that is no export manifest is refused before any work, and
// returns how to read it again and what its header says. A pipe or
// other non-regular file (such as <(cat m.json)) can be read only once:
// it is read into memory, up to maxPipedHeads, and refused at its first
// byte that cannot be one.
func checkHeads(path string) (func() (io.ReadCloser, error), export.ManifestHeader, error) {
	var hdr export.ManifestHeader
	fi, err := os.Stat(path)
	if err != nil {
		return nil, hdr, usagef("--heads %s: %v", path, pathProblem(err))
	}
	if fi.IsDir() {
		return nil, hdr, usagef("--heads %s: is a directory, not an export manifest", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, hdr, usagef("--heads %s: %v", path, pathProblem(err))
	}
	defer f.Close()
	open := func() (io.ReadCloser, error) { return os.Open(path) }
	check := func(h export.ManifestHead) error {
		if err := cairn.ValidSession(h.Session); err != nil {
			return fmt.Errorf("head %s: %v", h, err)
		}
		return nil
	}
	if fi.Mode().IsRegular() {
		hdr, err = export.ReadManifest(f, check)
	} else {
		// Kept as it is read, and checked as it comes: input that is no
		// export manifest (a binary stream, a wrong file, one that
		// never ends) is refused at its first bad byte, not read up to
		// the limit first; only a manifest that checks out is read to
		// its end, to be read again.
		var b bytes.Buffer
		in := &readErr{r: &io.LimitedReader{R: &jsontext.StopReader{R: f}, N: maxPipedHeads + 1}}
		hdr, err = export.ReadManifest(io.TeeReader(in, &b), check)
		if err == nil {
			_, _ = io.Copy(&b, in)
		}
		switch {
		case b.Len() > maxPipedHeads:
			return nil, hdr, usagef("--heads %s: over %d MiB from a pipe; give the manifest as a file", path, maxPipedHeads>>20)
		case in.err != nil:
			return nil, hdr, usagef("--heads %s: %v", path, pathProblem(in.err))
		}
		piped := b.Bytes()
		open = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(piped)), nil }
	}
	if err != nil {
		return nil, hdr, usagef("--heads %s: not an export manifest (%s)", path, strings.TrimPrefix(err.Error(), "read export manifest: "))
	}
	return open, hdr, nil
}

// readErr is r, remembering the first error of a read other than io.EOF:
// a reader that wraps it (a JSON decoder) may report it as its own.
type readErr struct {
	r   io.Reader
	err error
}

func (e *readErr) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// stdoutAliases are the paths that name this process's stdout: written
// as --out - is, through the stdout the process has (a shell's >> keeps
// appending), never reopened or replaced.
var stdoutAliases = []string{"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"}

// systemPath reports whether p lies in /dev or /proc, whose files are
// written to, never replaced.
func systemPath(p string) bool {
	return strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "/proc/")
}

// sameFile reports whether two targets name one file.
func sameFile(a, b *outTarget) bool {
	if a.info != nil && b.info != nil {
		return os.SameFile(a.info, b.info)
	}
	pa, erra := filepath.Abs(a.file)
	pb, errb := filepath.Abs(b.file)
	return erra == nil && errb == nil && pa == pb
}

// open returns the file to write: the temporary file, or the FIFO or
// device itself (a FIFO waits for its reader, or ctx: Ctrl-C).
func (t *outTarget) open(ctx context.Context) (*os.File, error) {
	if !t.direct {
		f, err := t.createTemp()
		if err != nil {
			return nil, err
		}
		t.f, t.tmp = f, f.Name()
		return f, nil
	}
	var f *os.File
	err := interruptible(ctx, func() (err error) {
		f, err = os.OpenFile(t.path, os.O_WRONLY, 0)
		return err
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		return nil, usagef("%s %s: cannot write it: %v", t.flag, t.path, pathProblem(err))
	}
	t.f = f
	return f, nil
}

// finish makes the written output visible: the temporary file synced and
// renamed over the path; a FIFO or device only closed.
func (t *outTarget) finish() error {
	if t.direct {
		if err := t.f.Close(); err != nil {
			return fmt.Errorf("write %s: %w", t.path, pathProblem(err))
		}
		return nil
	}
	if err := t.f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", t.path, pathProblem(err))
	}
	if err := t.f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", t.path, pathProblem(err))
	}
	// Never rename over what is no longer a regular file (it may have
	// been replaced by a FIFO or device while the export ran).
	if fi, err := os.Lstat(t.file); err == nil && !fi.Mode().IsRegular() {
		os.Remove(t.tmp)
		return fmt.Errorf("write %s: it is no longer a regular file; the export was not put in its place", t.path)
	}
	if err := os.Rename(t.tmp, t.file); err != nil {
		os.Remove(t.tmp)
		return fmt.Errorf("write %s: %w", t.path, pathProblem(err))
	}
	t.tmp = ""
	return nil
}

// abort drops what a failed export wrote.
func (t *outTarget) abort() {
	if t.f != nil {
		t.f.Close()
	}
	if t.tmp != "" {
		os.Remove(t.tmp)
	}
}

// remove deletes an output already renamed into place.
func (t *outTarget) remove() {
	if !t.direct && t.tmp == "" {
		os.Remove(t.file)
	}
}

// parseReward parses a reward bound ("" is none).
func parseReward(flag, v string) (*float64, error) {
	if v == "" {
		return nil, nil
	}
	// Written as a record writes its reward, a sign allowed: not Go's
	// literals, which ParseFloat also takes (1_0 as 10, 0x1p-2, inf),
	// so a bound reads as it looks.
	unsigned := v
	if v[0] == '+' || v[0] == '-' {
		unsigned = v[1:]
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || !jsontext.Decimal(unsigned) || math.IsNaN(x) || math.IsInf(x, 0) {
		return nil, usagef("--%s %q: want a number", flag, v)
	}
	return &x, nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
