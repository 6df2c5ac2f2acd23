package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/internal/fixture"
)

// TestSessionsBesideLinks: on a local store, cairn sessions passed over a
// session whose marker is a symbolic link without a word (exit 0), though
// show and log read it; and a link where a session's first step belongs
// stopped the listing there (exit 1), hiding the sessions after it. Now
// the first is listed as the session it is, and the second is reported
// after the list, in the words every reader uses for it, as a corrupt
// session is (exit 1), and the others are listed.
func TestSessionsBesideLinks(t *testing.T) {
	store := t.TempDir()
	for _, s := range []string{"a", "b", "c", "d"} {
		if _, errs, code := cli(t, store, `{"n":1}`, "commit", s, "-"); code != 0 {
			t.Fatalf("commit %s: exit %d: %s", s, code, errs)
		}
	}
	fixture.LinkInPlace(t, store, "sessions/b")
	fixture.LinkInPlace(t, store, "steps/c/00000000000000000001")

	out, errs, code := cli(t, store, "", "sessions")
	var listed []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			listed = append(listed, f[0])
		}
	}
	if got, want := strings.Join(listed, " "), "a b d"; got != want {
		t.Errorf("sessions listed %q; want %q:\n%s", got, want, out)
	}
	want := "cairn sessions: 1 session could not be read: the store " + store + " holds a link where step c@1 belongs: remove it to repair\n"
	if code != 1 || errs != want {
		t.Errorf("sessions: exit %d, stderr %q; want exit 1 and %q", code, errs, want)
	}

	out, errs, code = cli(t, store, "", "sessions", "--json")
	listed = nil
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var l sessionLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("sessions --json: %q: %v", line, err)
		}
		listed = append(listed, l.Session)
	}
	if got, want := strings.Join(listed, " "), "a b d"; got != want || code != 1 || !strings.Contains(errs, "step c@1") {
		t.Errorf("sessions --json listed %q, exit %d, stderr %q; want %q, exit 1 naming step c@1", got, code, errs, want)
	}

	// An export goes past such a session too, as past a corrupt one
	// (docs/export.md), where it failed, writing nothing.
	f := filepath.Join(t.TempDir(), "out.jsonl")
	_, errs, code = cli(t, store, "", "export", "--format", "openai-jsonl", "--out", f)
	if _, err := os.Stat(f); err != nil || code != 1 || !strings.Contains(errs, "1 session could not be read: the store "+store+" holds a link where step c@1 belongs") {
		t.Errorf("export: exit %d, stderr %q, output %v; want exit 1 naming session c's link after writing the others", code, errs, err)
	}
}
