package cairn_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestSessionNameRuleIsTheOneText: every refusal of a bad session name
// by the Go API says SessionNameRule, the text the CLI, the HTTP API and
// the MCP server also say, and is ErrInvalid.
func TestSessionNameRuleIsTheOneText(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	bad := ".x"
	want := `invalid session name ".x": want ` + cairn.SessionNameRule
	_, errSession := ws.Session(bad)
	_, errHead := ws.ReadHead(ctx, bad)
	_, errPrune := ws.Prune(ctx, bad, 1)
	_, errRemove := ws.Remove(ctx, bad)
	_, errOrigin := ws.ForkOrigin(ctx, bad)
	_, errFirst := ws.FirstStep(ctx, bad)
	for name, err := range map[string]error{"ValidSession": cairn.ValidSession(bad), "Session": errSession,
		"ReadHead": errHead, "Prune": errPrune, "Remove": errRemove, "ForkOrigin": errOrigin, "FirstStep": errFirst} {
		if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, cairn.ErrInvalid) {
			t.Errorf("%s(%q): %v; want ErrInvalid saying %q", name, bad, err, want)
		}
	}
}

// TestDocsSayTheWholeSessionNameRule: wherever README.md or docs/*.md
// give the pattern of a session name, they also say what
// SessionNameRule says beyond it: a name does not start with '.'.
func TestDocsSayTheWholeSessionNameRule(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	const pattern = "`[A-Za-z0-9._-]{1,128}`"
	found := 0
	for _, doc := range append([]string{"README.md"}, docs...) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(b)), " ")
		for rest := text; ; {
			i := strings.Index(rest, pattern)
			if i < 0 {
				break
			}
			found++
			rest = rest[i+len(pattern):]
			if after := rest[:min(len(rest), 40)]; !strings.Contains(after, "not starting with `.`") {
				t.Errorf("%s: %s%s...: want the rule's \"not starting with `.`\" after the pattern", doc, pattern, after)
			}
		}
	}
	if found == 0 {
		t.Fatalf("no doc gives the pattern %s", pattern)
	}
}
