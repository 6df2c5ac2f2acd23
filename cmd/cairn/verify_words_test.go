package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyLeadsWithWhatTheUserKnows: each BAD line of verify begins
// with what the user knows (the step, or the object in words: "the
// marker of session d"), says what is wrong once, what it means for them,
// and ends with the object's key as a detail for an operator restoring
// from a backup; --json gives the same in fields, with the session apart
// from the step (a marker is no step). It printed "BAD sessions/d: d:
// corrupt object: the marker of session d holds …": the key first, the
// session twice, and "step":"d" in JSON.
func TestVerifyLeadsWithWhatTheUserKnows(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	for _, c := range []struct {
		name    string
		key     string // the damaged object
		damage  func(store, path string)
		lead    string // the line's first words
		once    string // said once in the line
		session string
		step    string
	}{
		{"marker", "sessions/d", func(_, p string) { appendTo(t, p, "garbage") },
			`the marker of session d is damaged (it holds "dgarbage", not the session's name)`, "session d", "d", ""},
		{"marker missing", "sessions/e", func(_, p string) { remove(t, p) },
			"the marker of session e is missing: cairn sessions does not list the session", "session e", "e", ""},
		{"head hint", "steps/d/head", func(_, p string) { writeFile(t, p, []byte("junk")) },
			`the head hint of session d is damaged (it holds "junk", not a step number)`, "session d", "d", ""},
		{"base marker", "steps/d/base", func(_, p string) { writeFile(t, p, []byte("junk")) },
			"the base marker of session d is damaged (it is not a step number)", "session d", "d", ""},
		{"step", "steps/e/00000000000000000001", func(store, _ string) { flip(t, store, "steps/e/00000000000000000001") },
			"step e@1 is damaged (content hashes to ", "e@1", "e", "e@1"},
		{"fork pin", "pins/n/0000000000000007", func(_, p string) {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, p, []byte("junk\n"))
		}, "a fork pin of session n is damaged (", "session n", "n", ""},
		{"base marker's older form", "steps/d/base", func(store, p string) {
			if _, errs, code := cli(t, store, "", "prune", "d", "--keep-last", "5"); code != 0 {
				t.Fatalf("prune: exit %d: %s", code, errs)
			}
			remove(t, p)
		}, "the base marker of session d is damaged (it lacks the form every prune or removal writes first, while its newer form says step 36", "session d", "d", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := damageFixture(t)
			c.damage(store, filepath.Join(store, filepath.FromSlash(c.key)))
			out, errs, code := cli(t, store, "", "verify")
			line := badLine(out, c.key)
			if code != 1 || line == "" {
				t.Fatalf("verify: exit %d, %q %q; want exit 1 and a BAD line ending (object %s)", code, out, errs, c.key)
			}
			if !strings.HasPrefix(line, c.lead) || strings.Count(line, c.once) != 1 || storeWords.MatchString(line) {
				t.Errorf("verify: BAD %s; want it to begin %q, say %q once and name no store key before (object %s)", line, c.lead, c.once, c.key)
			}
			if !strings.Contains(line, "): ") && !strings.Contains(line, "missing: ") && !strings.Contains(line, "; restore") {
				t.Errorf("verify: BAD %s; want what the damage means, or what to do, after what is wrong", line)
			}
			js, _, _ := cli(t, store, "", "verify", "--json")
			var rep struct {
				Problems []map[string]string `json:"problems"`
			}
			if err := json.Unmarshal([]byte(js), &rep); err != nil {
				t.Fatalf("verify --json: %v: %s", err, js)
			}
			for _, p := range rep.Problems {
				if p["object"] != c.key {
					continue
				}
				if p["session"] != c.session || p["step"] != c.step || p["problem"] != line ||
					!strings.Contains(line, p["effect"]) || p["error"] == "" {
					t.Errorf("verify --json: %v; want session %q, step %q, problem %q, its effect and the error", p, c.session, c.step, line)
				}
				return
			}
			t.Errorf("verify --json: %s; want a problem with object %s", js, c.key)
		})
	}
}

// TestVerifyDamagedForkStartNoGap: a fork's first step is its parent's
// number (a fork of d@20 starts at f@20); when it cannot be read, verify
// named f@19, which never existed, as missing too.
func TestVerifyDamagedForkStartNoGap(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	store := damageFixture(t)
	if _, errs, code := cli(t, store, "", "fork", "d@20", "f"); code != 0 {
		t.Fatalf("fork: exit %d: %s", code, errs)
	}
	if _, errs, code := cli(t, store, `{"f":1}`, "commit", "f", "-"); code != 0 {
		t.Fatalf("commit: exit %d: %s", code, errs)
	}
	flip(t, store, "steps/f/00000000000000000020")
	out, errs, code := cli(t, store, "", "verify")
	if code != 1 || !strings.HasPrefix(badLine(out, "steps/f/00000000000000000020"), "step f@20 is damaged") ||
		strings.Count(out, "BAD ") != 1 {
		t.Errorf("verify: exit %d, %q %q; want f@20 reported, alone", code, out, errs)
	}
}

// appendTo appends s to the file at p.
func appendTo(t *testing.T, p, s string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, p, append(b, s...))
}

// remove deletes the file at p.
func remove(t *testing.T, p string) {
	t.Helper()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyStepEffectMatchesGC: what verify says a damaged step means
// for gc is what gc does. gc's mark reads an older step's manifest alone
// and runs on past damage to the data behind it, but verify said of every
// damaged step that gc deletes nothing until it is restored.
func TestVerifyStepEffectMatchesGC(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	runs := 0
	for _, c := range []struct {
		name, key string
		damage    func(store, key string)
	}{
		{"older step's data", "steps/d/00000000000000000010", func(store, key string) { flipAt(t, store, key, -40) }},
		{"older step cut to a byte", "steps/d/00000000000000000010", func(store, key string) {
			writeFile(t, filepath.Join(store, filepath.FromSlash(key)), []byte("x"))
		}},
		{"head", "steps/d/00000000000000000040", func(store, key string) { flip(t, store, key) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := damageFixture(t)
			c.damage(store, c.key)
			out, _, _ := cli(t, store, "", "verify")
			line := badLine(out, c.key)
			_, errs, code := cli(t, store, "", "gc", "--dry-run")
			refuses := strings.Contains(line, "cairn gc deletes nothing")
			runsToo := strings.Contains(line, "cairn gc, which reads only its manifest, still runs")
			if refuses == runsToo || refuses != (code == 1) {
				t.Errorf("verify: BAD %s; gc: exit %d, %s: verify must say what gc does", line, code, errs)
			}
			if runsToo {
				runs++
			}
		})
	}
	if runs == 0 {
		t.Errorf("no damage left gc running: the cases no longer show both")
	}
}

// flipAt flips the byte at off (from the end if negative) of the object at
// rel under store.
func flipAt(t *testing.T, store, rel string, off int) {
	t.Helper()
	p := filepath.Join(store, filepath.FromSlash(rel))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if off < 0 {
		off += len(b)
	}
	b[off] ^= 0x40
	writeFile(t, p, b)
}
