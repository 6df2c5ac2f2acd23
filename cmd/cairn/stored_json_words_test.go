package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goWords matches what a message for a user must not quote: the text of
// Go's libraries (encoding/json, strconv, io, zstd) or a Go type's name.
var goWords = regexp.MustCompile(`invalid character|looking for beginning|unexpected EOF|\bEOF\b|json:|strconv\.|zstd:|cannot unmarshal|Go (struct|value)|\*[a-z]+\.[A-Z]`)

// TestGCSaysDamagedStateInWords: gc's saved state (what it found
// unreachable last run) damaged in any way is set aside with a note that
// says what is wrong with it and what gc does about it. The note quoted
// encoding/json ("ignored an unreadable gc state (corrupt object: gc's
// saved state: invalid character 'x' looking for beginning of value)").
func TestGCSaysDamagedStateInWords(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	for _, c := range []struct{ name, content, want string }{
		{"garbage", "xyz", "it is not JSON at byte 1"},
		{"cut short", `{"version":1,"time":"2026-`, "it is cut short"},
		{"empty", "", "it is empty"},
		{"trailing", `{"version":1,"time":"2026-01-01T00:00:00Z","candidates":{}}x`, "it has more after its end"},
		{"unknown field", `{"version":1,"shoe":2}`, `it has a field cairn does not write, "shoe"`},
		{"wrong type", `{"version":"1"}`, `its field "version" holds a JSON string, which is not what cairn writes there`},
		{"bad time", `{"version":1,"time":"noon"}`, `it holds "noon" where a time belongs`},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := damageFixture(t)
			if _, errs, code := cli(t, store, "", "gc"); code != 0 {
				t.Fatalf("gc: exit %d: %s", code, errs)
			}
			writeFile(t, filepath.Join(store, "gc", "state"), []byte(c.content))
			for _, args := range [][]string{{"gc", "--dry-run"}, {"gc"}} {
				_, errs, code := cli(t, store, "", args...)
				note := "cairn gc: note: gc's saved state is damaged: " + c.want + "; "
				if code != 0 || !strings.Contains(errs, note) || !strings.Contains(errs, "deleted one run later") ||
					goWords.MatchString(errs) || storeWords.MatchString(errs) {
					t.Errorf("cairn %s: exit %d, %q; want exit 0 and %q…, what gc does about it, no Go text and no store key", strings.Join(args, " "), code, errs, note)
				}
			}
			if b, err := os.ReadFile(filepath.Join(store, "gc", "state")); err != nil || string(b) == c.content {
				t.Errorf("gc left its damaged state (%v)", err)
			}
		})
	}
}

// TestForkPinDamageInWords: a fork pin that does not parse is named in
// words by gc and verify, never with encoding/json's text.
func TestForkPinDamageInWords(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	store := damageFixture(t)
	pin := filepath.Join(store, "pins", "n", "0000000000000007")
	if err := os.MkdirAll(filepath.Dir(pin), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, pin, []byte("junk\n"))
	_, errs, code := cli(t, store, "", "gc", "--grace", "0s")
	if code != 1 || !strings.Contains(errs, "a fork pin of session n: it is not JSON at byte 1") || goWords.MatchString(errs) {
		t.Errorf("gc: exit %d, %q; want exit 1 saying the pin is not JSON, in words", code, errs)
	}
	out, _, code := cli(t, store, "", "verify")
	line := badLine(out, "pins/n/0000000000000007")
	if code != 1 || line == "" || !strings.Contains(line, "(it is not JSON at byte 1)") || goWords.MatchString(line) {
		t.Errorf("verify: exit %d, %q; want the pin's line in words", code, out)
	}
}
