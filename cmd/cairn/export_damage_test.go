package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportPastADamagedSession: a session whose head cannot be read (a
// damaged base marker, a corrupt newest step object) does not stop an
// export: every readable session is written (to stdout, or to --out with
// its manifest, which names the damaged session under
// summary.unreadable), and then the damaged one is named on stderr,
// exit 1, as cairn sessions and cairn inbox do. The export stopped at the
// damaged session, losing every session after it.
func TestExportPastADamagedSession(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, store string)
		want   string
		pairs  int // exit code of the preference export: d is no fork, so only a
		// damage that its fork origin's read meets is met there
	}{
		{"base marker", func(t *testing.T, store string) {
			writeFile(t, filepath.Join(store, "steps", "d", "base"), []byte("99"))
		}, "session d: its base marker says step 99", 1},
		{"newest step", func(t *testing.T, store string) {
			p := filepath.Join(store, "steps", "d", "00000000000000000002")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[len(b)/2] ^= 0x40
			writeFile(t, p, b)
		}, "head of d: corrupt object: session d, step 2: ", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := t.TempDir()
			commit := func(s, rec string) {
				t.Helper()
				if _, errs, code := cli(t, store, `{}`, "commit", s, "-", "--record", rec); code != 0 {
					t.Fatalf("commit %s: exit %d: %s", s, code, errs)
				}
			}
			for _, s := range []string{"a", "d", "z"} {
				commit(s, `{"messages":[{"role":"user","content":"`+s+`?"}]}`)
				commit(s, `{"messages":[{"role":"assistant","content":"`+s+`!"}]}`)
			}
			// Sibling forks of p for preference pairs.
			commit("p", `{"messages":[{"role":"user","content":"p?"}]}`)
			if _, errs, code := cli(t, store, "", "fork", "p@1", "q"); code != 0 {
				t.Fatal(errs)
			}
			commit("p", `{"messages":[{"role":"assistant","content":"good"}],"outcome":"success"}`)
			commit("q", `{"messages":[{"role":"assistant","content":"bad"}],"outcome":"failure"}`)
			c.damage(t, store)
			check := func(args []string, stdout string, wantCode, wantLines int, wantIn ...string) {
				t.Helper()
				_, errs, code := cli(t, store, "", args...)
				ok := code == wantCode && strings.Count(stdout, "\n") == wantLines
				if wantCode == 1 {
					i := strings.Index(errs, "cairn export: 1 session could not be read: ")
					ok = ok && i >= 0 && strings.Contains(errs[i:], c.want) && strings.Count(errs[i:], "\n") == 1 &&
						strings.HasSuffix(errs, "\n") && !strings.Contains(errs, "steps/")
				}
				for _, w := range wantIn {
					ok = ok && strings.Contains(stdout, w)
				}
				if !ok || strings.Contains(stdout, `"d"`) {
					t.Errorf("cairn %s: exit %d, output %q, stderr %q; want exit %d, %d lines with %q, d named on stderr (%q) if exit 1", strings.Join(args, " "), code, stdout, errs, wantCode, wantLines, wantIn, c.want)
				}
			}
			for _, format := range []string{"openai-jsonl", "sharegpt", "atif"} {
				args := []string{"export", "--format", format}
				out, _, _ := cli(t, store, "", args...)
				check(args, out, 1, 4, `a?`, `z?`, `good`, `bad`)
			}
			// A session and its forks, where one of them is damaged.
			args := []string{"export", "--format", "openai-jsonl", "--session", "[adz]"}
			out, _, _ := cli(t, store, "", args...)
			check(args, out, 1, 2, `a?`, `z?`)
			args = []string{"export", "--format", "preference"}
			out, _, _ = cli(t, store, "", args...)
			check(args, out, c.pairs, 1, `good`, `bad`)

			// To a file: it and its manifest are written, the manifest
			// naming d as unreadable.
			path := filepath.Join(t.TempDir(), "out.jsonl")
			args = []string{"export", "--format", "openai-jsonl", "--out", path}
			cli(t, store, "", args...)
			b, _ := os.ReadFile(path)
			check(args, string(b), 1, 4, `a?`, `z?`, `good`, `bad`)
			var m struct {
				Heads   []struct{ Session string }
				Summary struct {
					Unreadable []struct {
						Sessions int
						Names    []string
						Example  string
					}
				}
			}
			b, err := os.ReadFile(path + ".manifest.json")
			if err != nil || json.Unmarshal(b, &m) != nil || len(m.Heads) != 4 || len(m.Summary.Unreadable) != 1 ||
				m.Summary.Unreadable[0].Sessions != 1 || strings.Join(m.Summary.Unreadable[0].Names, ",") != "d" ||
				!strings.Contains(m.Summary.Unreadable[0].Example, c.want) {
				t.Errorf("manifest %s (%v): want 4 heads and d unreadable", b, err)
			}
		})
	}
}
