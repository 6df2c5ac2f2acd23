package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A --heads re-export is exact or fails: a trajectory whose older steps
// were pruned, or whose session was removed, after the export cannot be
// read whole again, so the re-export exits 1 naming it and writes
// nothing, instead of a shorter trajectory with exit 0. A trajectory
// that was already cut by a prune when it was exported re-exports as it
// was. A removal is said as one: for g below it said "held 1 step below
// which history was pruned when exported, now 1 step", counts alike.
func TestExportHeadsAfterPruneOrRemove(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change []string // run after the first export
		gone   string   // the session the re-export must name; "" for none
		says   string   // and what it must say of it
	}{
		{"unchanged", nil, "", ""},
		{"pruned", []string{"prune", "a", "--keep-last", "1"}, "a", "(older steps pruned"},
		{"removed", []string{"rm", "a"}, "a", "session a was removed (cairn rm) since the export"},
		{"removed fork of a pruned history", []string{"rm", "g"}, "g", "session g was removed (cairn rm) since the export"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := t.TempDir()
			for _, s := range []string{"a", "a", "a", "p", "p", "p"} {
				if _, errs, code := cli(t, store, `{"n":1}`, "commit", s, "-", "--record", chatRecord); code != 0 {
					t.Fatal(errs)
				}
			}
			// p's trajectory, and that of g forked from its head, are
			// already cut when exported.
			for _, args := range [][]string{{"prune", "p", "--keep-last", "2"}, {"fork", "p@3", "g"}} {
				if _, errs, code := cli(t, store, "", args...); code != 0 {
					t.Fatal(errs)
				}
			}
			dir := t.TempDir()
			first := filepath.Join(dir, "first.jsonl")
			if _, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--out", first); code != 0 {
				t.Fatal(errs)
			}
			if tc.change != nil {
				if _, errs, code := cli(t, store, "", tc.change...); code != 0 {
					t.Fatal(errs)
				}
			}
			again := filepath.Join(dir, "again.jsonl")
			_, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--heads", first+".manifest.json", "--out", again)
			if tc.gone == "" {
				want, _ := os.ReadFile(first)
				got, _ := os.ReadFile(again)
				if code != 0 || string(got) != string(want) {
					t.Fatalf("re-export: exit %d, %q:\n%s\nwant\n%s", code, errs, got, want)
				}
				return
			}
			if code != 1 || !strings.Contains(errs, tc.gone+"@") || !strings.Contains(errs, tc.says) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
				t.Errorf("re-export after %v: exit %d, stderr %q; want exit 1, one line naming %s and saying %q", tc.change, code, errs, tc.gone, tc.says)
			}
			if _, err := os.Stat(again); !os.IsNotExist(err) {
				t.Errorf("re-export after %v left %s (%v)", tc.change, again, err)
			}
		})
	}
}
