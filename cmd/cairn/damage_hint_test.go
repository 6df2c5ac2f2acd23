package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestDamageSaysWhatToDo: a command that fails on the store's damage
// says what the user can do about it, run cairn verify, once, after
// what is damaged; a message that says so already gets nothing more,
// and a failure that is no damage gets no such words. They said only
// what was damaged ("cairn show: corrupt object: session d, step 40:
// content hashes to …").
func TestDamageSaysWhatToDo(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	const hint = "cairn verify names every damaged object"
	store := damageFixture(t)
	flip(t, store, "steps/d/00000000000000000040")
	for _, args := range [][]string{{"show", "d"}, {"log", "d"}, {"du"}, {"gc", "--dry-run"}, {"sessions"}} {
		_, errs, code := cli(t, store, "", args...)
		if code != 1 || !strings.Contains(errs, "session d, step 40") || strings.Count(errs, hint) != 1 {
			t.Errorf("cairn %s: exit %d, %q; want exit 1 naming d@40 and what to do, once", strings.Join(args, " "), code, errs)
		}
	}
	if _, errs, _ := cli(t, store, "", "show", "nosuch"); strings.Contains(errs, "cairn verify") {
		t.Errorf("cairn show nosuch: %q; want no words about damage", errs)
	}
	// A missing object a live step needs: gc's message names cairn verify itself.
	store = damageFixture(t)
	if err := os.Remove(filepath.Join(store, "steps", "d", "00000000000000000010")); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := cli(t, store, "", "gc", "--dry-run"); code != 1 || strings.Count(errs, "cairn verify") != 1 {
		t.Errorf("gc with d@10 missing: exit %d, %q; want exit 1 naming cairn verify once", code, errs)
	}
}

// TestLostStepSaidAsDamage: a step the store lost below a later step
// that names it is damage, said as such by every command that meets it,
// with what to do; the Go API's error is ErrCorrupt. They said "parent of
// d@11: read session d, step 10: not found", as if it had never been.
func TestLostStepSaidAsDamage(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	const hint = "cairn verify names every damaged object"
	store := damageFixture(t)
	if err := os.Remove(filepath.Join(store, "steps", "d", "00000000000000000010")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"log", "d"}, "session d, step 10 is missing, though a later step names it as its parent"},
		{[]string{"replay", "d"}, "session d, step 10 is missing, though a later step names it as its parent"},
		{[]string{"gc", "--dry-run"}, "session d, step 10 is missing, though a later step names it as its parent"},
		{[]string{"du"}, "session d, step 10 is missing, though a later step names it as its parent"},
		{[]string{"show", "d@32"}, "session d, step 10 is missing, though a step's state has data in it"},
	} {
		_, errs, code := cli(t, store, "", c.args...)
		if code != 1 || !strings.Contains(errs, c.want) || strings.Count(errs, hint) != 1 || strings.Contains(errs, ": not found") {
			t.Errorf("cairn %s: exit %d, %q; want exit 1, %q and what to do", strings.Join(c.args, " "), code, errs, c.want)
		}
	}
	ws, err := cairn.Open(context.Background(), store)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	s, _ := ws.Session("d")
	head, err := s.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	err = head.Log(context.Background(), func(*cairn.Step) error { return nil })
	if !errors.Is(err, cairn.ErrCorrupt) {
		t.Errorf("Log past a lost step: %v; want ErrCorrupt", err)
	}
}
