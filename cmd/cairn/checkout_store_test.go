package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckoutNotIntoTheStore: cairn checkout (and cairn run's --dir)
// wrote a state into any absent or empty directory, also one inside the
// local store: a checkout into STORE/steps/w made cairn verify count a
// session "w" that has no steps, and one into STORE/packs/S put the
// user's files where gc sweeps what no step uses. As for export, a
// directory inside the store is refused (exit 2), and nothing is
// written there.
func TestCheckoutNotIntoTheStore(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "s", "-"); code != 0 {
		t.Fatal(errs)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(filepath.Join(store, "steps"), link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		dir  string
	}{
		{[]string{"checkout", "s", "--dir"}, filepath.Join(store, "steps", "w")},
		{[]string{"checkout", "s", "--dir"}, filepath.Join(store, "packs", "s")},
		{[]string{"checkout", "s", "--dir"}, filepath.Join(link, "w")},
		{[]string{"run", "s", "--dir"}, filepath.Join(store, "work")},
	} {
		args := append(append([]string{}, c.args...), c.dir)
		if c.args[0] == "run" {
			args = append(args, "--", "true")
		}
		out, errs, code := cli(t, store, "", args...)
		if want := "--dir " + c.dir + ": is inside the store"; code != 2 || out != "" || !strings.Contains(errs, want) {
			t.Errorf("cairn %s: exit %d, out %q, err %q; want exit 2 saying %q", strings.Join(args, " "), code, out, errs, want)
		}
	}
	for _, p := range []string{filepath.Join(store, "steps", "w"), filepath.Join(store, "packs"), filepath.Join(store, "work")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
	if out, errs, code := cli(t, store, "", "checkout", "s", "--dir", filepath.Join(t.TempDir(), "out")); code != 0 {
		t.Errorf("checkout outside the store: exit %d, %q %q", code, out, errs)
	}
}
