package cairn_test

import (
	"context"
	"errors"
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
	for name, err := range map[string]error{"ValidSession": cairn.ValidSession(bad), "Session": errSession,
		"ReadHead": errHead, "Prune": errPrune, "Remove": errRemove, "ForkOrigin": errOrigin} {
		if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, cairn.ErrInvalid) {
			t.Errorf("%s(%q): %v; want ErrInvalid saying %q", name, bad, err, want)
		}
	}
}
