package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// storeWords matches what a message about damage must not hold: a store
// key's prefix or its zero-padded 20-digit step number.
var storeWords = regexp.MustCompile(`steps/|packs/|pins/|hints/|sessions/|gc/state|[0-9]{20}`)

// checkWords fails t unless msg says want and holds no store key.
func checkWords(t *testing.T, label, msg, want string) {
	t.Helper()
	if !strings.Contains(msg, want) || storeWords.MatchString(msg) {
		t.Errorf("%s: %q; want %q and no store key", label, msg, want)
	}
}

// damageFixture commits 40 steps to d (past manifest.HintEvery, so it
// has a head hint) and one to e, and returns the store.
func damageFixture(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	store := t.TempDir()
	ws, err := cairn.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for _, c := range []struct {
		name  string
		steps int
	}{{"d", 40}, {"e", 1}} {
		s, _ := ws.Session(c.name)
		for n := 1; n <= c.steps; n++ {
			doc := fmt.Sprintf(`{"n":%d,"pad":%q}`, n, strings.Repeat("x", 50+n))
			if _, err := s.Commit(ctx, cairn.JSON([]byte(doc)), cairn.CommitOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return store
}

// flip flips a byte in the middle of the object at rel under store.
func flip(t *testing.T, store, rel string) {
	t.Helper()
	p := filepath.Join(store, filepath.FromSlash(rel))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40
	writeFile(t, p, b)
}

// TestDamageSaidInWords: errors about a damaged object name it as a user
// knows it (the session, the step, what the object is to them), never by
// its store key: a corrupt newest step through every reading command and
// the Go API, a step object holding a compaction pack, a truncated step, a head
// hint, a base marker and a fork pin. They named the key ("corrupt object:
// steps/d/00000000000000000040: …"). verify's BAD lines, the operator's
// list of objects to restore, keep the key as a detail at the end; the
// message before it is in words too.
func TestDamageSaidInWords(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	ctx := context.Background()
	cmds := [][]string{{"sessions"}, {"log", "d"}, {"show", "d"}, {"inbox"},
		{"export", "--format", "openai-jsonl"}, {"gc", "--dry-run"}}

	t.Run("newest step", func(t *testing.T) {
		store := damageFixture(t)
		flip(t, store, "steps/d/00000000000000000040")
		for _, args := range cmds {
			_, errs, code := cli(t, store, "", args...)
			if code != 1 {
				t.Errorf("cairn %s: exit %d, want 1: %s", strings.Join(args, " "), code, errs)
			}
			checkWords(t, "cairn "+strings.Join(args, " "), errs, "session d, step 40")
		}
		ws, err := cairn.Open(ctx, store)
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		s, _ := ws.Session("d")
		_, err = s.Head(ctx)
		if !errors.Is(err, cairn.ErrCorrupt) {
			t.Errorf("Session.Head: %v, want ErrCorrupt", err)
		} else {
			checkWords(t, "Session.Head", err.Error(), "session d, step 40")
		}
		out, _, _ := cli(t, store, "", "verify", "d")
		checkWords(t, "verify's message", badLine(out, "steps/d/00000000000000000040"), "step d@40 is damaged")
	})

	t.Run("pack", func(t *testing.T) {
		store, _ := corruptFixture(t) // its session a's step objects carry packs
		key := ""
		for n := 32; n >= 1 && key == ""; n-- {
			k := fmt.Sprintf("steps/a/%020d", n)
			if objectKind(t, store, k) == "pack" {
				key = k
			}
		}
		if key == "" {
			t.Fatal("no step object of a holds a pack: the fixture no longer shows the case")
		}
		flip(t, store, key)
		_, n, _ := strings.Cut(key, "steps/a/")
		want := "session a, step " + strings.TrimLeft(n, "0")
		failed := 0
		for i := 1; i <= 33; i++ {
			ref := fmt.Sprintf("a@%d", i)
			if _, errs, code := cli(t, store, "", "show", ref); code != 0 {
				failed++
				checkWords(t, "cairn show "+ref, errs, want)
			}
		}
		if failed == 0 {
			t.Errorf("with %s damaged, no show failed", want)
		}
	})

	t.Run("head hint", func(t *testing.T) {
		store := damageFixture(t)
		writeFile(t, filepath.Join(store, "steps", "d", "head"), []byte("junk"))
		out, _, code := cli(t, store, "", "verify", "d")
		if code != 1 {
			t.Errorf("verify d: exit %d, want 1: %s", code, out)
		}
		checkWords(t, "verify's message", badLine(out, "steps/d/head"), "the head hint of session d")
	})

	t.Run("base marker", func(t *testing.T) {
		store := damageFixture(t)
		writeFile(t, filepath.Join(store, "steps", "d", "base"), []byte("junk"))
		for _, args := range cmds {
			_, errs, code := cli(t, store, "", args...)
			if code != 1 {
				t.Errorf("cairn %s: exit %d, want 1: %s", strings.Join(args, " "), code, errs)
			}
			checkWords(t, "cairn "+strings.Join(args, " "), errs, "the base marker of session d")
		}
	})

	t.Run("truncated step", func(t *testing.T) {
		store := damageFixture(t)
		writeFile(t, filepath.Join(store, "steps", "e", "00000000000000000001"), []byte("x"))
		_, errs, code := cli(t, store, "", "show", "e")
		if code != 1 {
			t.Errorf("cairn show e: exit %d, want 1: %s", code, errs)
		}
		checkWords(t, "cairn show e", errs, "session e, step 1")
	})

	t.Run("fork pin", func(t *testing.T) {
		store := damageFixture(t)
		pin := filepath.Join(store, "pins", "n", "0000000000000007")
		if err := os.MkdirAll(filepath.Dir(pin), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, pin, []byte("junk\n"))
		_, errs, code := cli(t, store, "", "gc", "--grace", "0s")
		if code != 1 {
			t.Errorf("gc: exit %d, want 1: %s", code, errs)
		}
		checkWords(t, "gc", errs, "a fork pin of session n")
	})
}

// badLine returns verify's BAD line for the object at key, less the
// "BAD " before it and the "(object key)" after it: its words; "" if no
// line names key.
func badLine(out, key string) string {
	for _, line := range strings.Split(out, "\n") {
		if msg, ok := strings.CutSuffix(line, " (object "+key+")"); ok && strings.HasPrefix(msg, "BAD ") {
			return strings.TrimPrefix(msg, "BAD ")
		}
	}
	return ""
}

// TestCommandNamedOnce: gc and du on a damaged store said "cairn gc: gc:
// mark live steps of d: …", the command twice: the Go API names its
// operation and the CLI's line already does.
func TestCommandNamedOnce(t *testing.T) {
	store := t.TempDir()
	for i := 0; i < 2; i++ {
		if _, errs, code := cli(t, store, `{"a":1}`, "commit", "d", "-"); code != 0 {
			t.Fatal(errs)
		}
	}
	p := filepath.Join(store, "steps", "d", "00000000000000000002")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x40
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"gc", "du"} {
		_, errs, code := cli(t, store, "", cmd)
		if code != 1 || !strings.HasPrefix(errs, "cairn "+cmd+": ") || strings.HasPrefix(errs, "cairn "+cmd+": "+cmd+": ") {
			t.Errorf("cairn %s on a damaged store: exit %d, %q; want exit 1, the command named once", cmd, code, errs)
		}
	}
}

// TestDuGoesPastADamagedSession: cairn du listed nothing when one
// session was damaged ("cairn du: mark live steps of d: …"). It prints
// every other session and the totals, then names the damaged one in
// words and exits 1; --json prints the same object first.
func TestDuGoesPastADamagedSession(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	store := damageFixture(t)
	flip(t, store, "steps/d/00000000000000000040")
	out, errs, code := cli(t, store, "", "du")
	if code != 1 || !regexp.MustCompile(`(?m)^e +1 `).MatchString(out) || !strings.Contains(out, "total: ") ||
		!strings.Contains(out, "once the damaged sessions are repaired") {
		t.Errorf("cairn du: exit %d, out %q; want exit 1 and session e with the totals", code, out)
	}
	checkWords(t, "cairn du", errs, "1 session could not be read: history of d: corrupt object: session d, step 40")
	out, errs, code = cli(t, store, "", "du", "--json")
	var u cairn.Usage
	if err := json.Unmarshal([]byte(out), &u); err != nil || code != 1 || len(u.Sessions) != 1 || u.Sessions[0].Session != "e" {
		t.Errorf("cairn du --json: exit %d, %v, %q; want exit 1 and session e", code, err, out)
	}
	checkWords(t, "cairn du --json", errs, "session d, step 40")
}
