// Package doctest runs every command that README.md and docs/*.md show,
// exactly as written, in a fresh copy of the repository with the cairn
// under test first on PATH.
//
// # Conventions for writers of docs
//
//   - A fenced block tagged sh, bash or shell is commands: every line is
//     run (lines ending in \ continue), in the document's order, each
//     with bash -euo pipefail in the repository's root, and must exit 0.
//     Comments after a command are fine. Blocks of one document share a
//     fresh store (the default store under a fresh $XDG_DATA_HOME), so a
//     later block may use what an earlier one made.
//   - A synopsis with placeholders ([--flag N], A|B) goes in a block
//     tagged text. Output goes in a block tagged text or untagged.
//     Blocks tagged go, python, json, js or ts are not run here (their
//     own packages test their code). A line of a block that is not run
//     may not look like a runnable cairn, make or go command (see
//     TestNoHiddenCommands).
//   - A command that serves until stopped (cairn serve) is started in
//     the background, waited for until it prints its address, and
//     stopped with SIGTERM at the end of its block: see background.
//   - A block that only makes sense run whole, as one script (shell
//     variables shared between lines, a here-document), is run by the
//     test of the package it shows, which reads it from the document and
//     runs it as written. Mark it with a comment on the line before the
//     fence, <!-- run whole by PATH -->, naming that test's file; this
//     test checks that the file exists and reads the document.
//   - A command that cannot run here is listed in skipped with the
//     reason. Keep that list short: prefer examples that run locally.
//
// The test needs the cairn binary ($CAIRN_BIN, as make test sets, or one
// built for it), bash, git, make and python3.
package doctest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// skipped: commands shown in the docs that this test does not run, and why.
var skipped = map[string]string{
	"make test   # the whole test suite (builds the pinned MinIO and versitygw servers it starts; about 10 min with a warm Go build cache, about 6 more to compile MinIO cold)": "it is the suite this test is part of",
	"make bench        # Go microbenchmarks, then the full cairn-bench run (about 10 minutes on the 2-core VM)":                                                                 "10 minutes of benchmarks; run by hand (CAIRN_DOCTEST_ALL=1 runs it here)",
	"make bench-quick  # every phase on small sizes, well under 2 minutes; part of `make test`":                                                                                 "make test runs it itself (CAIRN_DOCTEST_ALL=1 runs it here too)",
	"make bench-go     # only the Go microbenchmarks (go test -bench)":                                                                                                          "minutes of microbenchmarks (CAIRN_DOCTEST_ALL=1 runs it here)",
}

// background: commands that serve until stopped, and the line each
// prints on stdout once it is ready.
var background = []struct {
	prefix string
	ready  *regexp.Regexp
}{
	{"cairn serve", regexp.MustCompile(`^cairn serve: http://`)},
}

// runTags are the fence tags whose blocks are commands.
var runTags = map[string]bool{"sh": true, "bash": true, "shell": true}

// otherTags are the fence tags of blocks that are not run.
var otherTags = map[string]bool{"": true, "text": true, "go": true, "python": true, "json": true, "js": true, "ts": true}

// block is one fenced block of a document.
type block struct {
	doc   string // path relative to the repository root
	line  int    // the line of its opening fence
	tag   string
	lines []string
	// runBy names the test file that runs the block whole (see the
	// package doc), if any.
	runBy string
}

// runWhole is the comment that hands a block to another package's test.
var runWhole = regexp.MustCompile(`^<!-- run whole by (\S+) -->$`)

// docs returns the documents whose commands must run.
func docs(t *testing.T, root string) []string {
	t.Helper()
	names := []string{"README.md"}
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range more {
		rel, _ := filepath.Rel(root, m)
		names = append(names, rel)
	}
	return names
}

var fence = regexp.MustCompile("^(```+|~~~+)\\s*([A-Za-z0-9_-]*)")

// blocks returns the fenced blocks of the document at path.
func blocks(t *testing.T, root, doc string) []block {
	t.Helper()
	f, err := os.Open(filepath.Join(root, doc))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []block
	var cur *block
	var marker, prev string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if cur == nil {
			if m := fence.FindStringSubmatch(line); m != nil {
				cur, marker = &block{doc: doc, line: n, tag: m[2]}, m[1]
				if r := runWhole.FindStringSubmatch(strings.TrimSpace(prev)); r != nil {
					cur.runBy = r[1]
				}
			}
			prev = line
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(line), marker) && strings.Trim(strings.TrimSpace(line), marker[:1]) == "" {
			out = append(out, *cur)
			cur = nil
			continue
		}
		cur.lines = append(cur.lines, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("%s:%d: fenced block never closed", doc, cur.line)
	}
	return out
}

// commands joins a block's lines into commands: continuation lines (\)
// are joined, blank lines and whole-line comments dropped.
func commands(b block) []string {
	var cmds []string
	var cur strings.Builder
	for _, l := range b.lines {
		if cur.Len() == 0 && (strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#")) {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cur.WriteString(l + "\n")
			continue
		}
		cur.WriteString(l)
		cmds = append(cmds, cur.String())
		cur.Reset()
	}
	if cur.Len() > 0 {
		cmds = append(cmds, cur.String())
	}
	return cmds
}

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// TestNoHiddenCommands: every fence has a known tag, and no block that is
// not run holds a line that reads as a runnable command (a cairn, make
// or go command without synopsis placeholders), so that a command cannot
// escape this test by its tag.
func TestNoHiddenCommands(t *testing.T) {
	root := repoRoot(t)
	cmdLike := regexp.MustCompile(`^\s*(\$ )?(cairn|make|go) [a-z]`)
	placeholder := regexp.MustCompile(`\[|\||\.\.\.|…|<`)
	for _, doc := range docs(t, root) {
		for _, b := range blocks(t, root, doc) {
			switch {
			case runTags[b.tag]:
			case otherTags[b.tag]:
				if b.tag == "go" || b.tag == "python" || b.tag == "js" || b.tag == "ts" {
					continue
				}
				for i, l := range b.lines {
					if cmdLike.MatchString(l) && !placeholder.MatchString(l) {
						t.Errorf("%s:%d: %q reads as a command in a block tagged %q that is not run; tag the block sh", doc, b.line+1+i, l, b.tag)
					}
				}
			default:
				t.Errorf("%s:%d: fence tag %q: use sh for commands, text for synopses and output (see the package doc)", doc, b.line, b.tag)
			}
		}
	}
}

// cairnBinary returns $CAIRN_BIN or a cairn built for this test.
func cairnBinary(t *testing.T, root string) string {
	t.Helper()
	if b := os.Getenv("CAIRN_BIN"); b != "" {
		return b
	}
	bin := filepath.Join(t.TempDir(), "cairn")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/cairn")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build cairn: %v\n%s", err, out)
	}
	return bin
}

// clone copies the repository's files (tracked, and untracked ones git
// does not ignore) into a fresh directory: make demo and make install
// run there, as in a fresh clone, without touching this checkout.
func clone(t *testing.T, root string) string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	dst := t.TempDir()
	for _, rel := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join(root, rel)
		fi, err := os.Lstat(src)
		if err != nil {
			continue // deleted in the work tree
		}
		target := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			t.Fatal(err)
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			link, _ := os.Readlink(src)
			os.Symlink(link, target)
			continue
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(target, b, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// TestDocCommands runs every command of every sh block, as written.
func TestDocCommands(t *testing.T) {
	for _, tool := range []string{"bash", "git", "make", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the doc commands need %s", tool)
		}
	}
	root := repoRoot(t)
	bin := cairnBinary(t, root)
	repo := clone(t, root)
	all := os.Getenv("CAIRN_DOCTEST_ALL") == "1"
	// Before anything runs: an edit to a skipped command's line (its
	// comment included) would otherwise run it here, and `make test`
	// would run this suite inside itself.
	shown := map[string][]string{} // command -> the docs showing it
	for _, doc := range docs(t, root) {
		for _, b := range blocks(t, repo, doc) {
			for _, c := range commands(b) {
				shown[c] = append(shown[c], doc)
			}
		}
	}
	for c := range skipped {
		if len(shown[c]) == 0 {
			t.Fatalf("skipped lists %q, which no doc shows any more: a doc's line changed; update skipped", c)
		}
	}
	ran := map[string]bool{}
	docsRun := map[string]bool{} // the documents whose subtest ran (go test -run may select some)
	for _, doc := range docs(t, root) {
		t.Run(doc, func(t *testing.T) {
			docsRun[doc] = true
			env := docEnv(t, bin)
			for _, b := range blocks(t, repo, doc) {
				if !runTags[b.tag] {
					continue
				}
				if b.runBy != "" {
					checkRunBy(t, root, b)
					continue
				}
				var bg []*exec.Cmd
				for _, c := range commands(b) {
					if reason, ok := skipped[c]; ok && (!all || strings.HasPrefix(c, "make test ")) {
						t.Logf("%s:%d: not run: %s: %s", doc, b.line, c, reason)
						ran[c] = true
						continue
					}
					ran[c] = true
					if p := backgroundOf(c); p != nil {
						bg = append(bg, startBackground(t, repo, env, doc, b.line, c, p))
						continue
					}
					runCommand(t, repo, env, doc, b.line, c)
				}
				for _, cmd := range bg {
					stopBackground(t, cmd)
				}
			}
		})
	}
	for _, c := range notRun(skipped, shown, docsRun, ran) {
		t.Errorf("skipped lists %q, which no doc's commands show any more: remove it", c)
	}
}

// notRun returns the commands of skipped that none of the documents
// whose subtest ran (docsRun) met among its commands (ran), though one
// of them shows it: each is shown only where commands are not run. A
// document whose subtest did not run (go test -run selecting another)
// says nothing.
func notRun(skipped map[string]string, shown map[string][]string, docsRun, ran map[string]bool) []string {
	var out []string
	for c := range skipped {
		if ran[c] {
			continue
		}
		for _, doc := range shown[c] {
			if docsRun[doc] {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// docEnv is a fresh environment for one document: a fresh default store,
// home and GOBIN, and cairn first on PATH.
func docEnv(t *testing.T, bin string) []string {
	t.Helper()
	dir := t.TempDir()
	binDir := filepath.Join(dir, "bin")
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(binDir, "cairn")); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "CAIRN_STORE", "CAIRN_TOKEN", "CAIRN_URL", "CAIRN_SESSION", "XDG_DATA_HOME", "HOME", "GOBIN", "PATH", "PREFIX":
			continue
		}
		env = append(env, kv)
	}
	home := filepath.Join(dir, "home")
	os.MkdirAll(home, 0o755)
	// The Go caches stay where they are (HOME moves): no rebuild from cold.
	for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		if os.Getenv(k) == "" {
			out, _ := exec.Command("go", "env", k).Output()
			env = append(env, k+"="+strings.TrimSpace(string(out)))
		}
	}
	return append(env,
		"HOME="+home,
		"XDG_DATA_HOME="+filepath.Join(dir, "data"),
		"GOBIN="+filepath.Join(dir, "gobin"),
		"PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"),
	)
}

func shell(repo string, env []string, c string) *exec.Cmd {
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", c)
	cmd.Dir, cmd.Env = repo, env
	cmd.Stdin = nil // /dev/null: a command that reads stdin gets EOF
	return cmd
}

func runCommand(t *testing.T, repo string, env []string, doc string, line int, c string) {
	t.Helper()
	cmd := shell(repo, env, c)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		t.Errorf("%s:%d: %s\n  failed: %v\n%s", doc, line, c, err, indent(out.String()))
		return
	}
	t.Logf("%s:%d: %s: ok", doc, line, c)
}

func backgroundOf(c string) *regexp.Regexp {
	for _, b := range background {
		if strings.HasPrefix(c, b.prefix+" ") || c == b.prefix {
			return b.ready
		}
	}
	return nil
}

// portWait is how long startBackground waits for a documented command's
// fixed port (cairn serve's 127.0.0.1:7474) that another process holds:
// the port is the machine's, and another checkout's run of this test, or
// a cairn serve someone started by hand, may have it for a while.
const portWait = 2 * time.Minute

// startBackground starts a serving command and waits until it prints its
// ready line (or exits, which is a failure, unless its address was in
// use: then it is started again, for up to portWait).
func startBackground(t *testing.T, repo string, env []string, doc string, line int, c string, ready *regexp.Regexp) *exec.Cmd {
	t.Helper()
	deadline := time.Now().Add(portWait)
	for {
		cmd := shell(repo, env, "exec "+c) // exec: the signal reaches the command itself
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if ready.MatchString(sc.Text()) {
				go io.Copy(io.Discard, stdout)
				t.Logf("%s:%d: %s: serving (%s)", doc, line, c, sc.Text())
				return cmd
			}
		}
		err = cmd.Wait()
		if strings.Contains(errb.String(), "address already in use") && time.Now().Before(deadline) {
			t.Logf("%s:%d: %s: its address is in use by another process; trying again", doc, line, c)
			time.Sleep(2 * time.Second)
			continue
		}
		t.Fatalf("%s:%d: %s\n  ended before it served: %v\n%s", doc, line, c, err, indent(errb.String()))
		return nil
	}
}

// stopBackground stops a serving command with SIGTERM; it must exit 0.
func stopBackground(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s: after SIGTERM: %v", strings.Join(cmd.Args, " "), err)
		}
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Errorf("%s: still running a minute after SIGTERM", strings.Join(cmd.Args, " "))
	}
}

func indent(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		fmt.Fprintf(&b, "    %s\n", l)
	}
	return b.String()
}

// checkRunBy checks that the test a block is handed to exists and reads
// the block's document.
func checkRunBy(t *testing.T, root string, b block) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, b.runBy))
	if err != nil {
		t.Errorf("%s:%d: the block is run whole by %s, which cannot be read: %v", b.doc, b.line, b.runBy, err)
		return
	}
	if !bytes.Contains(src, []byte(filepath.Base(b.doc))) {
		t.Errorf("%s:%d: %s is said to run this block, but it never names %s", b.doc, b.line, b.runBy, filepath.Base(b.doc))
		return
	}
	t.Logf("%s:%d: run whole by %s", b.doc, b.line, b.runBy)
}

// Running one document's commands (go test -run 'TestDocCommands/docs/export.md')
// failed TestDocCommands: the skipped commands README.md shows were
// never met, as its subtest did not run, and were reported as shown
// nowhere. Only the documents that ran are asked.
func TestSkippedCheckedOnlyWhereDocsRan(t *testing.T) {
	skipped := map[string]string{"make test": "the suite"}
	shown := map[string][]string{"make test": {"README.md"}}
	if got := notRun(skipped, shown, map[string]bool{"docs/export.md": true}, map[string]bool{}); len(got) != 0 {
		t.Errorf("README.md did not run, yet %q reported", got)
	}
	if got := notRun(skipped, shown, map[string]bool{"README.md": true}, map[string]bool{}); len(got) != 1 {
		t.Errorf("README.md ran without meeting make test among its commands, yet %q reported", got)
	}
	if got := notRun(skipped, shown, map[string]bool{"README.md": true}, map[string]bool{"make test": true}); len(got) != 0 {
		t.Errorf("README.md ran and met make test, yet %q reported", got)
	}
}
