//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLinkToAnotherStoresObject: a link planted in a local store where
// step a@3 belongs, to the object of step a@3 in another workspace's
// store (valid there, and with the same key), was followed: show and
// log returned the other workspace's state as this one's (I7). Now no
// command reads through it: show and log say what stands where, verify
// names it in a BAD line, and gc deletes nothing, neither the link nor
// anything outside the store.
func TestLinkToAnotherStoresObject(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	root := t.TempDir()
	store, other := filepath.Join(root, "store"), filepath.Join(root, "other")
	for i, doc := range []string{`{"n":1}`, `{"n":2}`} {
		if _, errs, code := cli(t, store, doc, "commit", "a", "-"); code != 0 {
			t.Fatalf("commit %d: %s", i+1, errs)
		}
	}
	for i, doc := range []string{`{"n":1}`, `{"n":2}`, `{"secret":"the other workspace's"}`} {
		if _, errs, code := cli(t, other, doc, "commit", "a", "-"); code != 0 {
			t.Fatalf("commit %d to the other store: %s", i+1, errs)
		}
	}
	key := filepath.Join("steps", "a", "00000000000000000003")
	if err := os.Symlink(filepath.Join(other, key), filepath.Join(store, key)); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	before := storeFiles(t, other)
	want := "the store " + store + " holds a link where step a@3 belongs: remove it to repair"
	for _, args := range [][]string{{"show", "a@3"}, {"show", "a"}, {"log", "a"}} {
		out, errs, code := cli(t, store, "", args...)
		if strings.Contains(out+errs, "secret") {
			t.Errorf("%s returned the other store's data: %q %q", strings.Join(args, " "), out, errs)
		}
		if code == 0 || !strings.Contains(errs, want) {
			t.Errorf("%s: exit %d, stderr %q; want it to fail saying %q", strings.Join(args, " "), code, errs, want)
		}
	}
	out, errs, code := cli(t, store, "", "verify")
	line := badLine(out, "steps/a/00000000000000000003")
	if code != 1 || !strings.HasPrefix(line, "step a@3 is not a file (the store holds a link where it belongs): ") || !strings.Contains(line, "remove it to repair") {
		t.Errorf("verify: exit %d, %q %q; want exit 1 and a BAD line naming the link at step a@3", code, out, errs)
	}
	if _, errs, code := cli(t, store, "", "gc", "--grace", "0s"); code == 0 {
		t.Errorf("gc on a store whose head is a link ran: %s; want it to refuse, deleting nothing", errs)
	}
	if fi, err := os.Lstat(filepath.Join(store, key)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("gc removed the link: %v", err)
	}
	if after := storeFiles(t, other); after != before {
		t.Errorf("the other store changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
