package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const chatRecord = `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]}`

// chatStore is a store with one conversational session "a" of two steps.
func chatStore(t *testing.T) string {
	t.Helper()
	store := t.TempDir()
	for i := 0; i < 2; i++ {
		if _, errs, code := cli(t, store, `{"n":1}`, "commit", "a", "-", "--record", chatRecord); code != 0 {
			t.Fatalf("commit: %s", errs)
		}
	}
	return store
}

// Paths that cannot serve are refused before any work, as bad input
// naming the path as given, and nothing is left behind.
func TestExportBadPathsRefusedUpFront(t *testing.T) {
	store := chatStore(t)
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(dir, "junk.json")
	if err := os.WriteFile(junk, []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		path string // the path the message must name
	}{
		{"out is a directory", []string{"--out", sub}, sub},
		{"manifest is a directory", []string{"--out", filepath.Join(dir, "x.jsonl"), "--manifest", sub}, sub},
		{"out in a missing directory", []string{"--out", filepath.Join(dir, "nope", "x.jsonl")}, filepath.Join(dir, "nope", "x.jsonl")},
		{"heads missing", []string{"--heads", filepath.Join(dir, "nope.json")}, filepath.Join(dir, "nope.json")},
		{"heads a directory", []string{"--heads", sub}, sub},
		{"heads not a manifest", []string{"--heads", junk}, junk},
		{"out and manifest the same file", []string{"--out", filepath.Join(dir, "same"), "--manifest", filepath.Join(dir, "same")}, filepath.Join(dir, "same")},
	}
	for _, c := range cases {
		out, errs, code := cli(t, store, "", append([]string{"export", "--format", "openai-jsonl"}, c.args...)...)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2 (stderr %q)", c.name, code, errs)
		}
		if !strings.Contains(errs, c.path) || strings.Contains(errs, ".tmp") {
			t.Errorf("%s: stderr %q does not name %s as given", c.name, errs, c.path)
		}
		if out != "" {
			t.Errorf("%s: wrote %q to stdout", c.name, out)
		}
		if strings.Contains(errs, "exported") || strings.Contains(errs, "skipped") {
			t.Errorf("%s: the export ran before the refusal: %q", c.name, errs)
		}
	}
	des, _ := os.ReadDir(dir)
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	if len(names) != 2 { // sub, junk.json
		t.Errorf("left behind in the output directory: %v", names)
	}
}

// A file named PATH.tmp beside --out PATH is the user's: an export does
// not overwrite or remove it.
func TestExportKeepsUsersTmpFile(t *testing.T) {
	store := chatStore(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "x.jsonl")
	if err := os.WriteFile(out+".tmp", []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--out", out); code != 0 {
		t.Fatalf("export: %d %s", code, errs)
	}
	if b, err := os.ReadFile(out + ".tmp"); err != nil || string(b) != "mine" {
		t.Fatalf("the user's %s.tmp is now %q, %v", out, b, err)
	}
}

// --out naming a FIFO or a device is written to, never replaced by a
// regular file. The device is a null device made in a temporary
// directory, so a failing test cannot replace the system's.
func TestExportOutToFIFOAndDevice(t *testing.T) {
	store := chatStore(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := mkfifo(t, fifo); err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- b
	}()
	if _, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--out", fifo); code != 0 {
		t.Fatalf("export to a FIFO: %d %s", code, errs)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced by a %v (%v)", fi.Mode(), err)
	}
	select {
	case b := <-got:
		if !strings.Contains(string(b), `"messages"`) {
			t.Fatalf("the FIFO's reader got %q", b)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("nothing was written to the FIFO")
	}
	if _, err := os.Stat(fifo + ".manifest.json"); err == nil {
		t.Errorf("a manifest was written beside the FIFO")
	}

	null := filepath.Join(dir, "null")
	if err := mknodNull(t, null); err != nil {
		t.Skip("cannot make a device node here:", err)
	}
	if _, errs, code := cli(t, store, "", "export", "--format", "parquet", "--out", null); code != 0 {
		t.Fatalf("export to a device: %d %s", code, errs)
	}
	if fi, err := os.Lstat(null); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("the device was replaced by a %v (%v)", fi.Mode(), err)
	}
}

// hostileText is text from a store that would drive a terminal or forge
// a line if printed as is: ESC sequences, a newline, a carriage return,
// a C1 CSI (U+009B), a bidi override and a bell.
const hostileText = "x\x1b[2J\nforged@9  done\r\u009b31m\u202e\a"

// checkInert fails if out holds a byte that drives a terminal, or more
// lines than want.
func checkInert(t *testing.T, what, out string, wantLines int) {
	t.Helper()
	for _, bad := range []string{"\x1b", "\r", "\u009b", "\u202e", "\a"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s prints %q raw: %q", what, bad, out)
		}
	}
	if n := strings.Count(out, "\n"); n != wantLines {
		t.Errorf("%s prints %d lines, want %d: %q", what, n, wantLines, out)
	}
}

// Names and text from the store are escaped in human output, so they can
// neither drive the terminal nor forge a line; JSON output is unchanged.
func TestHumanOutputEscapesStoreText(t *testing.T) {
	store := t.TempDir()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "evil\n\x1b[31mred\u009b"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := cli(t, store, "", "commit", "d", "--dir", dir); code != 0 {
		t.Fatalf("commit --dir: %s", errs)
	}
	out, _, _ := cli(t, store, "", "show", "d")
	checkInert(t, "show", out, 1)

	key, _ := json.Marshal(hostileText)
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "j", "-"); code != 0 {
		t.Fatal(errs)
	}
	if _, errs, code := cli(t, store, `{"a":1,`+string(key)+`:2}`, "commit", "j", "-", "--record",
		`{"question":`+string(key)+`,"note":"`+"\u009b\u202e"+`"}`, "--status", "awaiting_input"); code != 0 {
		t.Fatal(errs)
	}
	out, _, _ = cli(t, store, "", "diff", "j@1", "j@2")
	checkInert(t, "diff", out, 1)
	out, _, _ = cli(t, store, "", "inbox")
	checkInert(t, "inbox", out, 1)
	out, _, _ = cli(t, store, "", "log", "j")
	checkInert(t, "log", out, 2)
	// JSON output carries the text exactly.
	out, _, _ = cli(t, store, "", "inbox", "--json")
	var p struct{ Question string }
	if err := json.Unmarshal([]byte(out), &p); err != nil || p.Question != hostileText {
		t.Errorf("inbox --json question %q, %v", p.Question, err)
	}
}

// Selectors that can never all hold are refused, not run to an empty
// export.
func TestExportContradictorySelectors(t *testing.T) {
	store := chatStore(t)
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"--since", "2026-02-01", "--until", "2026-01-01"}, "--since"},
		{[]string{"--since", "2026-01-01", "--until", "2026-01-01"}, "--until"},
		{[]string{"--label", "task=a", "--label", "task=b"}, "task"},
		{[]string{"--label", "outcome=success", "--label", "outcome=failure"}, "outcome"},
	} {
		out, errs, code := cli(t, store, "", append([]string{"export", "--format", "openai-jsonl"}, c.args...)...)
		if code != 2 || out != "" || !strings.Contains(errs, c.says) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line naming %s", c.args, code, out, errs, c.says)
		}
	}
	// The same label twice is no contradiction.
	if _, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--label", "k=v", "--label", "k=v"); code != 0 {
		t.Errorf("--label k=v twice: exit %d: %s", code, errs)
	}
}

// An empty reply read from stdin is said to be empty, not a missing flag.
func TestReplyEmptyStdin(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{}`, "commit", "h", "-", "--status", "awaiting_input", "--record", `{"question":"ok?"}`); code != 0 {
		t.Fatal(errs)
	}
	for _, in := range []string{"", " \n\t"} {
		_, errs, code := cli(t, store, in, "reply", "h", "--input", "-")
		if code != 2 || !strings.Contains(errs, "empty") || strings.Contains(errs, "required") {
			t.Errorf("reply with stdin %q: exit %d, %q; want exit 2 saying the reply was empty", in, code, errs)
		}
	}
	// Nothing was written: the question still waits.
	if out, _, _ := cli(t, store, "", "inbox"); !strings.Contains(out, "h@1") {
		t.Errorf("inbox after refused replies: %q", out)
	}
}

// A directory state and a JSON state cannot be compared: bad input.
func TestDiffDirAgainstJSON(t *testing.T) {
	store := t.TempDir()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644)
	if _, errs, code := cli(t, store, "", "commit", "d", "--dir", dir); code != 0 {
		t.Fatal(errs)
	}
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "j", "-"); code != 0 {
		t.Fatal(errs)
	}
	for _, args := range [][]string{{"d", "j"}, {"j@1", "d@1"}} {
		out, errs, code := cli(t, store, "", append([]string{"diff"}, args...)...)
		if code != 2 || out != "" || !strings.Contains(errs, "directory") || !strings.Contains(errs, "JSON") {
			t.Errorf("diff %v: exit %d, %q %q; want exit 2 saying one is a directory and one JSON", args, code, out, errs)
		}
	}
}

// An export file is as readable as any file the user makes (not 0600),
// and one that replaces a file keeps that file's mode.
func TestExportFileMode(t *testing.T) {
	store := chatStore(t)
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref")
	f, err := os.Create(ref)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	want, _ := os.Stat(ref)
	out := filepath.Join(dir, "x.jsonl")
	if _, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--out", out); code != 0 {
		t.Fatal(errs)
	}
	for _, p := range []string{out, out + ".manifest.json"} {
		if got, _ := os.Stat(p); got == nil || got.Mode() != want.Mode() {
			t.Errorf("%s: mode %v, want %v as os.Create makes", p, got.Mode(), want.Mode())
		}
	}
	if err := os.Chmod(out, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--out", out); code != 0 {
		t.Fatal(errs)
	}
	if got, _ := os.Stat(out); got.Mode().Perm() != 0o640 {
		t.Errorf("re-export changed the mode to %v", got.Mode())
	}
}

// An unknown --format is answered with the formats as a list a person
// reads, not a Go slice.
func TestExportUnknownFormat(t *testing.T) {
	store := chatStore(t)
	_, errs, code := cli(t, store, "", "export", "--format", "jsonl")
	if code != 2 || strings.ContainsAny(errs, "[]") || !strings.Contains(errs, "openai-jsonl, atif, sharegpt, parquet, preference") {
		t.Errorf("exit %d, %q", code, errs)
	}
}

// --manifest - is stdout, as --out - is, not a file named "-".
func TestExportManifestToStdout(t *testing.T) {
	store := chatStore(t)
	dir := t.TempDir()
	t.Chdir(dir)
	out, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--out", "x.jsonl", "--manifest", "-")
	if code != 0 || !strings.HasPrefix(out, `{"version":1`) {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error(`a file named "-" was written`)
	}
	_, errs, code = cli(t, store, "", "export", "--format", "openai-jsonl", "--manifest", "-")
	if code != 2 || !strings.Contains(errs, "stdout") {
		t.Errorf("both to stdout: exit %d, %q", code, errs)
	}
}

// --heads may be a pipe (a shell's <(...)): it is read once, not found
// empty on a second read.
func TestExportHeadsFromPipe(t *testing.T) {
	store := chatStore(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "x.jsonl")
	if _, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--out", out); code != 0 {
		t.Fatal(errs)
	}
	manifest, err := os.ReadFile(out + ".manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(out)
	fifo := filepath.Join(dir, "heads")
	if err := mkfifo(t, fifo); err != nil {
		t.Fatal(err)
	}
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err == nil {
			f.Write(manifest)
			f.Close()
		}
	}()
	got, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--heads", fifo)
	if code != 0 || got != string(want) {
		t.Fatalf("re-export from a pipe: exit %d, %q, stdout %q, want %q", code, errs, got, want)
	}
}

// --out naming a symbolic link writes the file it names and keeps the
// link.
func TestExportOutThroughSymlink(t *testing.T) {
	store := chatStore(t)
	dir := t.TempDir()
	real := filepath.Join(dir, "real.jsonl")
	os.WriteFile(real, []byte("old\n"), 0o644)
	link := filepath.Join(dir, "link")
	if err := os.Symlink("real.jsonl", link); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--out", link); code != 0 {
		t.Fatal(errs)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced by a %v", fi.Mode())
	}
	if b, _ := os.ReadFile(real); !strings.Contains(string(b), `"messages"`) {
		t.Fatalf("the linked file holds %q", b)
	}
	dangling := filepath.Join(dir, "dangling")
	os.Symlink("nowhere/x", dangling)
	if _, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--out", dangling); code != 2 || !strings.Contains(errs, dangling) {
		t.Fatalf("a dangling link: exit %d, %q", code, errs)
	}
}

// TestExportOutDotDotAfterLink: export --out LINK/../sub/x.jsonl, LINK
// naming a directory elsewhere, is the file the system opens for that
// path: sub beside LINK's target. Export took the text cleaned (sub
// beside LINK) for the directory to check and write its temporary file
// in, and refused the path for a directory that does not exist there.
func TestExportOutDotDotAfterLink(t *testing.T) {
	store := chatStore(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"elsewhere/deep", "elsewhere/sub", "work"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "elsewhere", "deep"), filepath.Join(root, "work", "link")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	t.Chdir(filepath.Join(root, "work"))
	out := strings.Join([]string{"link", "..", "sub", "x.jsonl"}, string(filepath.Separator))
	if _, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--out", out); code != 0 {
		t.Fatalf("export --out %s: exit %d: %s", out, code, errs)
	}
	for _, f := range []string{"x.jsonl", "x.jsonl.manifest.json"} {
		if b, err := os.ReadFile(filepath.Join(root, "elsewhere", "sub", f)); err != nil || len(b) == 0 {
			t.Errorf("export --out %s: %s beside the link's target: %q, %v", out, f, b, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "work", "sub")); err == nil {
		t.Errorf("export --out %s wrote beside the link", out)
	}
}

// --out /dev/stdout is stdout, as --out - is: the stdout the process has
// (never reopened, so a shell's >> keeps appending), with no manifest.
// Not to be run against a cairn that renames over its --out: as root,
// that would replace the system's /dev/stdout.
func TestExportOutDevStdout(t *testing.T) {
	store := chatStore(t)
	for _, p := range []string{"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"} {
		out, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--out", p)
		if code != 0 || !strings.Contains(out, `"messages"`) {
			t.Errorf("--out %s: exit %d, stdout %q, stderr %q", p, code, out, errs)
		}
		if _, err := os.Stat(p + ".manifest.json"); err == nil {
			t.Errorf("a manifest was written at %s.manifest.json", p)
		}
	}
}

// An empty --session pattern matches nothing: refused. An export to
// stdout that selects nothing says so on stderr.
func TestExportEmptySelections(t *testing.T) {
	store := chatStore(t)
	out, errs, code := cli(t, store, "", "export", "--format", "atif", "--session", "")
	if code != 2 || out != "" || !strings.Contains(errs, "--session") {
		t.Errorf("--session '': exit %d, %q %q", code, out, errs)
	}
	out, errs, code = cli(t, store, "", "export", "--format", "atif", "--since", "2099-01-01")
	if code != 0 || out != "" || !strings.Contains(errs, "exported nothing") || !strings.Contains(errs, "1 session") {
		t.Errorf("nothing selected: exit %d, %q %q", code, out, errs)
	}
}

// A step below a fork's first step is the origin's, read in the fork's
// history, not a missing store object; a step number too large for one
// is said so.
func TestStepRefsOfForksAndHugeNumbers(t *testing.T) {
	store := chatStore(t)
	if _, errs, code := cli(t, store, "", "fork", "a@2", "f"); code != 0 {
		t.Fatal(errs)
	}
	want, _, _ := cli(t, store, "", "show", "a@1")
	if out, errs, code := cli(t, store, "", "show", "f@1"); code != 0 || out != want {
		t.Errorf("show f@1: exit %d, %q %q; want a@1's state", code, out, errs)
	}
	if out, errs, code := cli(t, store, "", "log", "f@1"); code != 0 || !strings.Contains(out, "a@1") {
		t.Errorf("log f@1: exit %d, %q %q; want a@1", code, out, errs)
	}
	_, errs, code := cli(t, store, "", "show", "a@99999999999999999999999")
	if code != 2 || !strings.Contains(errs, "too large") {
		t.Errorf("show a@99999999999999999999999: exit %d, %q", code, errs)
	}
}

// An export is never written into a local store's directory.
func TestExportNotIntoTheStore(t *testing.T) {
	store := chatStore(t)
	before := listTree(t, store)
	for _, args := range [][]string{
		{"--out", filepath.Join(store, "x.jsonl")},
		{"--out", filepath.Join(t.TempDir(), "x.jsonl"), "--manifest", filepath.Join(store, "m.json")},
	} {
		_, errs, code := cli(t, store, "", append([]string{"export", "--format", "openai-jsonl"}, args...)...)
		if code != 2 || !strings.Contains(errs, "inside the store") {
			t.Errorf("%v: exit %d, %q", args, code, errs)
		}
	}
	if after := listTree(t, store); after != before {
		t.Errorf("the store changed:\n%s\nnow\n%s", before, after)
	}
}

func listTree(t *testing.T, dir string) string {
	var b strings.Builder
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			b.WriteString(p + "\n")
		}
		return nil
	})
	return b.String()
}

// An export that fails part-way (a damaged step of a trajectory that
// --heads must re-export exactly) leaves neither its output nor its
// manifest, nor a temporary file, and exits 1. (A damaged session met by
// an export of the store's sessions does not fail it: see
// TestExportPastADamagedSession.)
func TestFailedExportLeavesNothing(t *testing.T) {
	store := chatStore(t)
	for i := 0; i < 2; i++ {
		if _, errs, code := cli(t, store, `{"n":2}`, "commit", "b", "-", "--record", chatRecord); code != 0 {
			t.Fatal(errs)
		}
	}
	manifest := filepath.Join(t.TempDir(), "m.json")
	if _, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--manifest", manifest, "--out", "/dev/null"); code != 0 {
		t.Fatal(errs)
	}
	// b's first step is damaged: read last, after a's trajectory is written.
	if err := os.WriteFile(filepath.Join(store, "steps", "b", "00000000000000000001"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"openai-jsonl", "parquet"} {
		dir := t.TempDir()
		_, errs, code := cli(t, store, "", "export", "--format", format, "--heads", manifest, "--out", filepath.Join(dir, "x"))
		if code != 1 {
			t.Errorf("%s: exit %d, %q", format, code, errs)
		}
		if left := listTree(t, dir); left != "" {
			t.Errorf("%s: a failed export left %s", format, left)
		}
	}
}

// A damaged session does not hide the other sessions' questions from the
// inbox: they are listed, and the damage is named (exit 1).
func TestInboxListsPastADamagedSession(t *testing.T) {
	store := chatStore(t)
	if _, errs, code := cli(t, store, `{}`, "commit", "q", "-", "--status", "awaiting_input", "--record", `{"question":"ok?"}`); code != 0 {
		t.Fatal(errs)
	}
	if err := os.WriteFile(filepath.Join(store, "steps", "a", "00000000000000000002"), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"inbox"}, {"inbox", "--json"}} {
		out, errs, code := cli(t, store, "", args...)
		if code != 1 || !strings.Contains(out, "ok?") || !strings.Contains(errs, "a") || !strings.Contains(errs, "corrupt") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}
