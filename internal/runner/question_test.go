package runner

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/cairnlog/cairn"
)

// The question cairn run prints when a session awaits input is cut to
// 200 runes and made safe for a terminal, as cairn inbox shows it: a cut
// never splits a multi-byte rune (which left invalid UTF-8 in the log),
// and a C1 CSI or a bidirectional override in the question is escaped,
// not written raw.
func TestQuestionPrintable(t *testing.T) {
	ask := func(q string) string {
		rec, _ := json.Marshal(map[string]string{"question": q})
		return question(&cairn.Step{Record: rec})
	}
	long := ask("a" + strings.Repeat("é", 300))
	if !utf8.ValidString(long) {
		t.Errorf("cut question is not valid UTF-8: %q", long)
	}
	if n := utf8.RuneCountInString(long); n > 200 || !strings.HasSuffix(long, "...") {
		t.Errorf("cut question has %d runes, want at most 200 ending in ...: %q", n, long)
	}
	evil := ask("x\u009b31mred\u202eevil")
	if strings.ContainsAny(evil, "\u009b\u202e") {
		t.Errorf("question written raw: %q", evil)
	}
	if want := `"x\u009b31mred\u202eevil"`; evil != want {
		t.Errorf("question %s, want %s", evil, want)
	}
	if got := ask("fine"); got != `"fine"` {
		t.Errorf("short question %s, want it as is", got)
	}
}
