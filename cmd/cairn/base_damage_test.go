package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDamagedBaseMarkerCLI: a session whose base marker was overwritten
// with a number above its head that no removal writes is damage, not a
// removal: show, log, sessions, rm and a commit exit 1 (an error: the
// store is damaged) naming the session and the step numbers, not "not
// found" or "removed", and no store key; the commit writes nothing;
// verify reports the marker. Deleting the marker puts everything right.
func TestDamagedBaseMarkerCLI(t *testing.T) {
	// A commit through the head cache reads nothing from the store (see
	// docs/maintenance.md): this test is about commits that read it.
	t.Setenv("CAIRN_CACHE_DIR", "off")
	for _, marker := range []string{"99", "1000", "4611686018427387904"} {
		t.Run(marker, func(t *testing.T) {
			store := t.TempDir()
			for i := 1; i <= 5; i++ {
				if _, errs, code := cli(t, store, `{"i":`+strconv.Itoa(i)+`}`, "commit", "d", "-"); code != 0 {
					t.Fatalf("commit %d: exit %d: %s", i, code, errs)
				}
			}
			basePath := filepath.Join(store, "steps", "d", "base")
			if err := os.WriteFile(basePath, []byte(marker), 0o644); err != nil {
				t.Fatal(err)
			}
			want := "session d: its base marker says step " + marker + " but its newest step is 5, which is neither a removal nor a prune"
			check := func(stdin string, args ...string) {
				t.Helper()
				out, errs, code := cli(t, store, stdin, args...)
				if code != 1 || !strings.Contains(errs, want) || strings.Contains(errs, "removed") ||
					strings.Contains(errs, "not found") || strings.Contains(errs, "steps/") {
					t.Errorf("cairn %s: exit %d, stdout %q, stderr %q; want exit 1 and %q, no store key", strings.Join(args, " "), code, out, errs, want)
				}
			}
			check("", "show", "d")
			check("", "show", "d@3")
			check("", "log", "d")
			check("", "log", "d@5")
			check("", "sessions")
			check("", "rm", "d")
			check("", "prune", "d", "--keep-last", "2")
			check(`{"i":6}`, "commit", "d", "-")
			if _, err := os.Stat(filepath.Join(store, "steps", "d", "00000000000000000006")); !os.IsNotExist(err) {
				t.Errorf("a refused commit wrote d@6 (stat: %v)", err)
			}
			if b, err := os.ReadFile(basePath); err != nil || string(b) != marker {
				t.Errorf("base marker now %q, %v; want it left as it was", b, err)
			}
			out, _, code := cli(t, store, "", "verify", "d")
			if code != 1 || !strings.Contains(out, "(object steps/d/base)") || !strings.Contains(out, "the base marker of session d is damaged (it says step "+marker) {
				t.Errorf("verify d: exit %d, %q; want exit 1 and a BAD line for d's base marker", code, out)
			}

			if err := os.Remove(basePath); err != nil {
				t.Fatal(err)
			}
			if out, errs, code := cli(t, store, "", "show", "d@3"); code != 0 || out != `{"i":3}`+"\n" {
				t.Errorf("show d@3 after the repair: exit %d, %q, %s", code, out, errs)
			}
			if _, errs, code := cli(t, store, `{"i":6}`, "commit", "d", "-"); code != 0 {
				t.Errorf("commit after the repair: exit %d: %s", code, errs)
			}
			if out, _, code := cli(t, store, "", "log", "d"); code != 0 || strings.Count(out, "\n") != 6 {
				t.Errorf("log after the repair: exit %d, %q; want 6 steps", code, out)
			}
		})
	}
}

// TestSessionsListsPastADamagedSession: one session with a damaged base
// marker does not hide the others from `cairn sessions` (text and
// --json): they are listed, and the damaged one's error follows on
// stderr with exit 1, as `cairn inbox` does.
func TestSessionsListsPastADamagedSession(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	store := t.TempDir()
	for _, s := range []string{"a", "d", "z"} {
		if _, errs, code := cli(t, store, `{"s":"`+s+`"}`, "commit", s, "-"); code != 0 {
			t.Fatalf("commit %s: exit %d: %s", s, code, errs)
		}
	}
	if err := os.WriteFile(filepath.Join(store, "steps", "d", "base"), []byte("99"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"sessions"}, {"sessions", "--json"}} {
		out, errs, code := cli(t, store, "", args...)
		if code != 1 || !strings.Contains(out, "a") || !strings.Contains(out, "z") || strings.Contains(out, `"d"`) ||
			!strings.Contains(errs, "session d: its base marker says step 99") || strings.Contains(errs, "steps/") {
			t.Errorf("cairn %s: exit %d, stdout %q, stderr %q; want a and z listed, d's damage on stderr, exit 1", strings.Join(args, " "), code, out, errs)
		}
	}
}
