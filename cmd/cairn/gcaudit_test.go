package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A removed session's newest slot (its tombstone) replaced by another
// session's valid step object: gc, du and sessions refuse the store, so
// verify must report it too instead of calling the store clean.
func TestVerifyReportsReplacedTombstone(t *testing.T) {
	store := t.TempDir()
	for _, doc := range []string{`{"a":1}`, `{"a":2}`} {
		if _, errs, code := cli(t, store, doc, "commit", "a", "-"); code != 0 {
			t.Fatal(errs)
		}
		if _, errs, code := cli(t, store, doc, "commit", "c", "-"); code != 0 {
			t.Fatal(errs)
		}
	}
	if _, errs, code := cli(t, store, "", "rm", "c"); code != 0 {
		t.Fatal(errs)
	}
	tomb := filepath.Join(store, "steps", "c", "00000000000000000003")
	other, err := os.ReadFile(filepath.Join(store, "steps", "a", "00000000000000000002"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tomb, other, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := cli(t, store, "", "gc", "--grace", "0s"); code != 1 {
		t.Fatalf("gc exit %d, want 1: %s", code, errs)
	}
	out, errs, code := cli(t, store, "", "verify")
	if code != 1 || !strings.Contains(out+errs, "steps/c/00000000000000000003") {
		t.Fatalf("verify exit %d, want 1 naming the replaced tombstone:\n%s%s", code, out, errs)
	}
}

// A live object gone from the store (here a step object an older step's
// layout still names, outside the walked chain because of a prune) is
// damage: gc must refuse to sweep, naming it, instead of deleting other
// garbage and exiting 0 as if the store were sound (I5).
func TestGCRefusesMissingLayoutObject(t *testing.T) {
	store := t.TempDir()
	for i := 1; i <= 6; i++ {
		doc := `{"i":` + strings.Repeat("1", i) + `,"pad":"` + strings.Repeat("x", 300+i) + `"}`
		if _, errs, code := cli(t, store, doc, "commit", "a", "-"); code != 0 {
			t.Fatal(errs)
		}
	}
	if _, errs, code := cli(t, store, `{"y":1}`, "commit", "y", "-"); code != 0 {
		t.Fatal(errs)
	}
	for _, args := range [][]string{{"prune", "a", "--keep-last", "1"}, {"rm", "y"}} {
		if _, errs, code := cli(t, store, "", args...); code != 0 {
			t.Fatal(errs)
		}
	}
	// Find a step object of a below its base that gc keeps live (the
	// head's layout names it), and delete it.
	if _, errs, code := cli(t, store, "", "gc", "--grace", "0s"); code != 0 {
		t.Fatal(errs)
	}
	if _, errs, code := cli(t, store, "", "gc", "--grace", "0s"); code != 0 {
		t.Fatal(errs)
	}
	ents, err := os.ReadDir(filepath.Join(store, "steps", "a"))
	if err != nil {
		t.Fatal(err)
	}
	victim := ""
	for _, e := range ents {
		if len(e.Name()) == 20 && e.Name() != "00000000000000000006" {
			victim = e.Name()
			break
		}
	}
	if victim == "" {
		t.Fatal("no step object below the base is live: the fixture no longer shows the case")
	}
	if err := os.Remove(filepath.Join(store, "steps", "a", victim)); err != nil {
		t.Fatal(err)
	}
	// New garbage for the sweep: a removed session's step.
	if _, errs, code := cli(t, store, `{"z":1}`, "commit", "z", "-"); code != 0 {
		t.Fatal(errs)
	}
	if _, errs, code := cli(t, store, "", "rm", "z"); code != 0 {
		t.Fatal(errs)
	}
	zKey := filepath.Join(store, "steps", "z", "00000000000000000001")
	for i := 0; i < 2; i++ {
		out, errs, code := cli(t, store, "", "gc", "--grace", "0s")
		if code != 1 || !strings.Contains(errs, "session a, step "+strings.TrimLeft(victim, "0")+",") || !strings.Contains(errs, "nothing deleted") {
			t.Fatalf("gc run %d: exit %d, want 1 naming a@%s:\n%s%s", i+1, code, strings.TrimLeft(victim, "0"), out, errs)
		}
	}
	if _, err := os.Stat(zKey); err != nil {
		t.Fatalf("gc deleted garbage beside a damaged store: %v", err)
	}
	if _, _, code := cli(t, store, "", "verify"); code != 1 {
		t.Fatalf("verify exit %d, want 1", code)
	}
}

// A damaged fork pin makes gc refuse the store (it cannot tell what the
// fork will name); verify of the whole store must report it too, or the
// user has no way to find what stops gc.
func TestVerifyReportsBadForkPin(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "a", "-"); code != 0 {
		t.Fatal(errs)
	}
	pin := filepath.Join(store, "pins", "n", "0000000000000007")
	if err := os.MkdirAll(filepath.Dir(pin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pin, []byte("junk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := cli(t, store, "", "gc", "--grace", "0s"); code != 1 || !strings.Contains(errs, "a fork pin of session n") {
		t.Fatalf("gc exit %d, want 1 naming the pin: %s", code, errs)
	}
	out, errs, code := cli(t, store, "", "verify")
	if code != 1 || !strings.Contains(out+errs, "pins/n/0000000000000007") {
		t.Fatalf("verify exit %d, want 1 naming the pin:\n%s%s", code, out, errs)
	}
	// Verifying one session is about that session's steps only.
	if out, errs, code := cli(t, store, "", "verify", "a"); code != 0 {
		t.Fatalf("verify a exit %d:\n%s%s", code, out, errs)
	}
}
