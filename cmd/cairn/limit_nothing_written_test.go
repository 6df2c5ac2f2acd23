package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLimitWritesNothing: a state beyond a read limit made cairn show
// write the state up to where the limit stopped it (the outer levels of
// a document nested too deep, the first 50 KB of one too large), then
// fail: a user piping show into a file got a truncated document. So did
// checkout (the directories above the level too deep, a partial
// state.json, the files before the one too large) and replay (the steps
// before the one whose changes went too deep). Each now checks the
// whole state (replay: reads every step) before it writes, and writes
// nothing, exit 1, naming the step and the variable to raise.
func TestLimitWritesNothing(t *testing.T) {
	store := t.TempDir()
	deep := func(leaf string) string {
		doc := `{"x":"` + leaf + strings.Repeat("y", 2000) + `"}`
		for i := 0; i < 6; i++ {
			doc = `{"k":` + doc + `,"pad":"` + strings.Repeat("p", 1500) + `"}`
		}
		return doc
	}
	for _, doc := range []string{deep("a"), deep("a"), deep("b")} {
		if _, errs, code := cli(t, store, doc, "commit", "deep", "-"); code != 0 {
			t.Fatalf("commit: exit %d: %s", code, errs)
		}
	}
	large := `["` + strings.Repeat("a", 30000) + `","` + strings.Repeat("b", 30000) + `"]`
	if _, errs, code := cli(t, store, large, "commit", "large", "-"); code != 0 {
		t.Fatalf("commit: exit %d: %s", code, errs)
	}
	tree := t.TempDir()
	writeFile(t, filepath.Join(tree, "a.txt"), []byte(strings.Repeat("a", 30000)))
	writeFile(t, filepath.Join(tree, "b.txt"), []byte(strings.Repeat("b", 30000)))
	sub := filepath.Join(tree, "c", "d", "e", "f")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(sub, "g.txt"), []byte("g"))
	if _, errs, code := cli(t, store, "", "commit", "files", "--dir", tree); code != 0 {
		t.Fatalf("commit --dir: exit %d: %s", code, errs)
	}

	for _, c := range []struct {
		env   string
		value string
		args  []string
		step  string // the step the error names
	}{
		{"CAIRN_MAX_DEPTH", "3", []string{"show", "deep"}, "deep@3"},
		{"CAIRN_MAX_DEPTH", "3", []string{"checkout", "deep", "--dir", "OUT"}, "deep@3"},
		{"CAIRN_MAX_DEPTH", "3", []string{"checkout", "files", "--dir", "OUT"}, "files@1"},
		{"CAIRN_MAX_DEPTH", "3", []string{"replay", "deep"}, "deep@3"},
		{"CAIRN_MAX_DEPTH", "3", []string{"replay", "deep", "--json"}, "deep@3"},
		{"CAIRN_MAX_DEPTH", "3", []string{"diff", "deep@1", "deep@3"}, "deep@3"},
		{"CAIRN_MAX_TOTAL_BYTES", "50000", []string{"show", "large"}, "large@1"},
		{"CAIRN_MAX_TOTAL_BYTES", "50000", []string{"checkout", "large", "--dir", "OUT"}, "large@1"},
		{"CAIRN_MAX_TOTAL_BYTES", "50000", []string{"checkout", "files", "--dir", "OUT"}, "files@1"},
		{"CAIRN_MAX_VALUE_BYTES", "20000", []string{"checkout", "files", "--dir", "OUT"}, "files@1"},
	} {
		what := "cairn " + strings.Join(c.args, " ") + " with " + c.env + "=" + c.value
		t.Run(what, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string(nil), c.args...)
			for i, a := range args {
				if a == "OUT" {
					args[i] = out
				}
			}
			t.Setenv(c.env, c.value)
			stdout, errs, code := cli(t, store, "", args...)
			if code != 1 || !strings.Contains(errs, "raise $"+c.env+" if the store is trusted") || !strings.Contains(errs, c.step) {
				t.Errorf("exit %d, stderr %q; want exit 1 naming %s and saying to raise $%s", code, errs, c.step, c.env)
			}
			if stdout != "" {
				t.Errorf("wrote %d bytes to stdout before it failed: %.80q…", len(stdout), stdout)
			}
			if _, err := os.Lstat(out); err == nil {
				var written []string
				filepath.WalkDir(out, func(p string, _ os.DirEntry, _ error) error {
					written = append(written, strings.TrimPrefix(p, out))
					return nil
				})
				t.Errorf("left %s behind, holding %q", out, written)
			}
		})
	}
}

// TestSpoolPastMemory: replay's output past the first MiB goes to a
// temporary file and comes back whole, in order; the file is removed.
func TestSpoolPastMemory(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	var want bytes.Buffer
	sp := &spool{}
	for i := 0; want.Len() < 3*spoolMemory; i++ {
		line := fmt.Sprintf("line %d %s\n", i, strings.Repeat("x", i%4000))
		want.WriteString(line)
		if _, err := sp.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	if sp.file == nil {
		t.Fatal("3 MiB spooled with no temporary file")
	}
	var got bytes.Buffer
	if err := sp.writeTo(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("spooled %d bytes, got back %d, not the same", want.Len(), got.Len())
	}
	sp.close()
	if left, _ := os.ReadDir(os.TempDir()); len(left) != 0 {
		t.Errorf("left in the temporary directory: %v", left)
	}
}
