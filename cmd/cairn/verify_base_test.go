package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyGoesOnPastADamagedBaseMarker: a damaged base marker (not a
// number, or a number above the head that no removal writes) is reported
// and the rest of the session is still checked in the same run: a bad
// head hint and a corrupt step object are reported beside it. Verify
// stopped at the marker: one form skipped the hint, the other every step.
// It changes nothing in the store.
func TestVerifyGoesOnPastADamagedBaseMarker(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	for _, marker := range []string{"xyz", "99"} {
		for _, other := range []struct{ name, key, want string }{
			{"hint", "steps/d/head", "the head hint of session d is damaged (it names step 77, but the newest step is 40"},
			{"step", "steps/d/00000000000000000020", "step d@20 is damaged (content hashes to "},
		} {
			t.Run(marker+"+"+other.name, func(t *testing.T) {
				store := damageFixture(t)
				writeFile(t, filepath.Join(store, "steps", "d", "base"), []byte(marker))
				if other.name == "hint" {
					writeFile(t, filepath.Join(store, "steps", "d", "head"), []byte("77"))
				} else {
					flip(t, store, other.key)
				}
				before := snapshot(t, store)
				out, errs, code := cli(t, store, "", "verify")
				if code != 1 || !strings.Contains(out, "BAD the base marker of session d is damaged (") ||
					!strings.Contains(out, "(object "+other.key+")") || !strings.Contains(out, other.want) {
					t.Errorf("verify: exit %d, %q %q; want the marker and %s reported", code, out, errs, other.key)
				}
				if after := snapshot(t, store); after != before {
					t.Errorf("verify changed the store")
				}
			})
		}
	}
}

// TestVerifyDamagedBaseMarkerPrunedHistory: with the base marker damaged
// verify walks the steps down as far as the store holds them; the steps
// a prune dropped and gc swept are not reported as lost.
func TestVerifyDamagedBaseMarkerPrunedHistory(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	store := t.TempDir()
	for range 40 {
		cli(t, store, `{}`, "commit", "d", "-")
	}
	cli(t, store, "", "prune", "d", "--keep-last", "10")
	ageStore(t, store)
	for range 2 {
		cli(t, store, "", "gc", "--grace", "0")
	}
	if _, err := os.Stat(filepath.Join(store, "steps", "d", "00000000000000000030")); !os.IsNotExist(err) {
		t.Fatalf("gc left d@30 (stat: %v)", err)
	}
	for _, marker := range []string{"xyz", "99"} {
		writeFile(t, filepath.Join(store, "steps", "d", "base"), []byte(marker))
		out, _, code := cli(t, store, "", "verify", "d")
		if code != 1 || strings.Count(out, "BAD ") != 1 || !strings.Contains(out, "BAD the base marker of session d is damaged (") ||
			!strings.Contains(out, " 10 steps,") {
			t.Errorf("marker %q: verify: exit %d, %q; want only the marker reported and 10 steps checked", marker, code, out)
		}
	}
}

// snapshot returns every file under dir with its contents, as one string.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		b.WriteString(p + "\x00" + string(data) + "\x00")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
