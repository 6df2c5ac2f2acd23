package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// deepDoc is a JSON document nested 7 levels, each level padded so that
// it is a node of its own (not inlined in its parent), whose innermost
// string begins with leaf.
func deepDoc(leaf string) string {
	doc := `{"x":"` + leaf + strings.Repeat("y", 2000) + `"}`
	for i := 0; i < 6; i++ {
		doc = `{"k":` + doc + `,"pad":"` + strings.Repeat("p", 1500) + `"}`
	}
	return doc
}

// TestLimitWritesNothing: a state beyond a read limit made cairn show
// write the state up to where the limit stopped it (the outer levels of
// a document nested too deep, the first 50 KB of one too large), then
// fail: a user piping show into a file got a truncated document. So did
// checkout (the directories above the level too deep, a partial
// state.json, the files before the one too large). Each now checks the
// whole state before it writes, and writes nothing, exit 1, naming the
// step and the variable to raise. A replay streams a history step by
// step: it writes the steps it read whole, none of the step it stopped
// at, and names that step (TestReplayStopsAtAWholeStep).
func TestLimitWritesNothing(t *testing.T) {
	store := t.TempDir()
	for _, doc := range []string{deepDoc("a"), deepDoc("a"), deepDoc("b")} {
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

// TestReplayStopsAtAWholeStep: a replay that meets a step beyond a read
// limit has printed the steps before it, each whole, and nothing of that
// step, then exits 1 naming it and the variable to raise.
func TestReplayStopsAtAWholeStep(t *testing.T) {
	store := t.TempDir()
	// Step 3 changes a value 7 levels down; steps 1 and 2 change none.
	for _, doc := range []string{deepDoc("a"), deepDoc("a"), deepDoc("b")} {
		if _, errs, code := cli(t, store, doc, "commit", "r", "-"); code != 0 {
			t.Fatalf("commit: exit %d: %s", code, errs)
		}
	}
	t.Setenv("CAIRN_MAX_DEPTH", "3")
	for _, args := range [][]string{{"replay", "r", "--json"}, {"replay", "r"}} {
		stdout, errs, code := cli(t, store, "", args...)
		if code != 1 || !strings.Contains(errs, "r@3") || !strings.Contains(errs, "raise $CAIRN_MAX_DEPTH") {
			t.Fatalf("cairn %v: exit %d, stderr %q; want exit 1 naming r@3 and the variable to raise", args, code, errs)
		}
		if strings.Contains(stdout, "r@3") || strings.Contains(stdout, `"step":3`) {
			t.Errorf("cairn %v printed some of step 3, which it could not read:\n%s", args, stdout)
		}
		if len(args) == 2 {
			if !strings.Contains(stdout, "r@2") {
				t.Errorf("cairn %v printed no step 2 before it stopped:\n%s", args, stdout)
			}
			continue
		}
		var steps []int
		for _, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
			var st struct{ Step int }
			if err := json.Unmarshal([]byte(line), &st); err != nil {
				t.Fatalf("a line of the replay is no whole step (%v): %q", err, line)
			}
			steps = append(steps, st.Step)
		}
		if fmt.Sprint(steps) != "[1 2]" {
			t.Fatalf("replayed steps %v before it stopped, want [1 2]:\n%s", steps, stdout)
		}
	}
}
