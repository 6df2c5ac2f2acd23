package main

import (
	"encoding/json"
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
			if code != 1 || !strings.Contains(out, "steps/d/base") || !strings.Contains(out, "base marker says step "+marker) {
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

// TestDamagedBaseMarkerCachedCommit: a commit in a fresh process that
// starts from the head cache (the machine wrote the previous step) reads
// no step from the store, but it does check that the session's base
// marker is the one the cache saw: a marker overwritten since sends the
// commit to the store, which refuses it (exit 1) writing nothing, so no
// step is acknowledged that readers would not show. A prune between two
// commits is no damage: the commit after it goes on.
func TestDamagedBaseMarkerCachedCommit(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", t.TempDir())
	store := t.TempDir()
	for i := 1; i <= 5; i++ {
		if _, errs, code := cli(t, store, `{"i":`+strconv.Itoa(i)+`}`, "commit", "d", "-"); code != 0 {
			t.Fatalf("commit %d: exit %d: %s", i, code, errs)
		}
	}
	if _, errs, code := cli(t, store, "", "prune", "d", "--keep-last", "3"); code != 0 {
		t.Fatalf("prune: exit %d: %s", code, errs)
	}
	// After a prune the commit still starts from the cache: it reads the
	// base marker (one GET of a few bytes), no step and no listing.
	out, errs, code := cli(t, store, `{"i":6}`, "commit", "d", "-", "--json")
	var res struct {
		Step     uint64           `json:"step"`
		Requests map[string]int64 `json:"requests"`
	}
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || res.Step != 6 {
		t.Fatalf("commit after a prune: exit %d, %q, %s", code, out, errs)
	}
	if res.Requests["get"] != 1 || res.Requests["list"] != 0 || res.Requests["put"] != 1 {
		t.Errorf("commit after a prune cost %v, want 1 PUT, 1 GET (the base marker), no LIST", res.Requests)
	}
	// Without a prune: one PUT, the two stamps, nothing read.
	out, errs, code = cli(t, store, `{"i":6}`, "commit", "d", "-", "--json")
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || res.Step != 7 {
		t.Fatalf("commit: exit %d, %q, %s", code, out, errs)
	}
	if res.Requests["get"] != 0 || res.Requests["list"] != 0 || res.Requests["put"] != 1 {
		t.Errorf("commit from the cache cost %v, want 1 PUT, no GET or LIST", res.Requests)
	}
	basePath := filepath.Join(store, "steps", "d", "base")
	if err := os.WriteFile(basePath, []byte("99"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "session d: its base marker says step 99 but its newest step is 7, which is neither a removal nor a prune"
	out, errs, code = cli(t, store, `{"i":8}`, "commit", "d", "-")
	if code != 1 || !strings.Contains(errs, want) {
		t.Errorf("commit from the head cache onto a damaged base marker: exit %d, %q, %q; want exit 1 and %q", code, out, errs, want)
	}
	if _, err := os.Stat(filepath.Join(store, "steps", "d", "00000000000000000008")); !os.IsNotExist(err) {
		t.Errorf("a refused commit wrote d@8 (stat: %v)", err)
	}
	if err := os.WriteFile(basePath, []byte("4"), 0o644); err != nil { // put right
		t.Fatal(err)
	}
	if _, errs, code := cli(t, store, `{"i":8}`, "commit", "d", "-"); code != 0 {
		t.Fatalf("commit after the repair: exit %d: %s", code, errs)
	}
	if out, _, code := cli(t, store, "", "show", "d"); code != 0 || out != `{"i":8}`+"\n" {
		t.Errorf("show d after the repair: exit %d, %q", code, out)
	}
}
