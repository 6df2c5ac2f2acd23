package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/export"
)

const exportUsage = "--format openai-jsonl|atif|sharegpt|parquet|preference [--out PATH] [--manifest PATH] [--session GLOB]... [--label K=V]... [--outcome O] [--min-reward X] [--max-reward X] [--status S] [--since T] [--until T] [--branches leaves|all] [--heads MANIFEST] [--metadata=false]"

var exportCmd = command{
	summary:   "export trajectories as training data (chat JSONL, ATIF, ShareGPT, Parquet, preference pairs)",
	usage:     exportUsage,
	run:       runExport,
	needStore: true,
}

// exportCacheBytes bounds the step objects an export keeps cached.
const exportCacheBytes = 4 << 20

// listFlag collects a repeatable flag.
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
	out := fs.String("out", "-", "write to `PATH` (- for stdout); written to PATH.tmp, renamed when complete")
	manifestPath := fs.String("manifest", "", "write the export manifest to `PATH` (default PATH.manifest.json with --out PATH)")
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
	branches := fs.String("branches", export.Leaves, "leaves: one trajectory per leaf of the fork tree; all: also every forked-from session's own path")
	if _, err := parse(fs, args, 0, 0); err != nil {
		return err
	}
	if *format == "" {
		return usagef("--format is required (one of %s)", strings.Join(export.Formats, ", "))
	}
	opts := export.Options{Format: *format, Sessions: globs, Branches: *branches, Labels: map[string]string{},
		Outcome: *outcome, NoMetadata: !*metadata}
	for _, l := range labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return usagef("--label %q: want KEY=VALUE", l)
		}
		opts.Labels[k] = v
	}
	if *status != "" {
		st, err := cairn.ParseStatus(*status)
		if err != nil {
			return usageError{err.Error()}
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
		if _, err := os.Stat(*heads); err != nil {
			return err
		}
		opts.FromHeads = func(ctx context.Context, yield func(cairn.StepRef) error) error {
			f, err := os.Open(*heads)
			if err != nil {
				return err
			}
			defer f.Close()
			return export.ReadManifestHeads(f, yield)
		}
	}
	if *manifestPath == "" && *out != "-" {
		*manifestPath = *out + ".manifest.json"
	}

	ws, err := e.open(ctx)
	if err != nil {
		return err
	}
	defer ws.Close()
	// An export reads each step about once (shared fork prefixes aside):
	// a small cache keeps its memory flat however many sessions there are.
	ws.SetCacheLimit(exportCacheBytes)

	var w io.Writer = e.stdout
	var commit []func() error // renames done once everything is written
	var cleanup []func()
	defer func() {
		for _, c := range cleanup {
			c()
		}
	}()
	create := func(flagName, path string) (*os.File, error) {
		f, err := os.Create(path + ".tmp")
		if err != nil {
			// Said of the path the user gave, not of its .tmp.
			return nil, usagef("%s %s: cannot write it: %v", flagName, path, pathProblem(err))
		}
		cleanup = append(cleanup, func() { f.Close(); os.Remove(path + ".tmp") })
		commit = append(commit, func() error {
			if err := f.Sync(); err != nil {
				return fmt.Errorf("write %s: %w", path, err)
			}
			if err := f.Close(); err != nil {
				return fmt.Errorf("write %s: %w", path, err)
			}
			return os.Rename(path+".tmp", path)
		})
		return f, nil
	}
	if *out != "-" {
		f, err := create("--out", *out)
		if err != nil {
			return err
		}
		w = f
	}
	var mw *export.ManifestWriter
	if *manifestPath != "" {
		f, err := create("--manifest", *manifestPath)
		if err != nil {
			return err
		}
		mw, err = export.NewManifestWriter(f, export.ManifestHeader{Format: *format, Output: *out,
			Store: ws.URL(), CreatedAt: time.Now().UTC(), Args: args})
		if err != nil {
			return err
		}
		opts.Head = mw.Add
	}
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
	for _, c := range commit {
		if err := c(); err != nil {
			return err
		}
	}
	cleanup = nil
	if *out != "-" {
		what := fmt.Sprintf("%d trajectories, %d steps", sum.Trajectories, sum.Steps)
		if *format == export.Preference {
			what = fmt.Sprintf("%d pairs", sum.Pairs)
		}
		skipped := int64(0)
		for _, n := range sum.Skipped {
			skipped += n.Sessions
		}
		sessions := "sessions"
		if skipped == 1 {
			sessions = "session"
		}
		fmt.Fprintf(e.stderr, "exported %s to %s (%d %s skipped, %d raw records)\n", what, *out, skipped, sessions, sum.RawRecords)
	}
	return nil
}

// parseReward parses a reward bound ("" is none).
func parseReward(flag, v string) (*float64, error) {
	if v == "" {
		return nil, nil
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) {
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
