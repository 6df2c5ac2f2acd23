package export_test

import (
	"context"
	"testing"

	"github.com/cairnlog/cairn/internal/export"
)

// A judged branch that adds no assistant message after the fork point
// was paired with chosen (or rejected) holding no answer of the model's
// (a user's message alone), or, adding no message at all (a verdict
// committed on a fork), silently left unpaired. Neither is paired, and
// both are named.
func TestPreferenceBranchWithoutAnswerNamed(t *testing.T) {
	ctx := context.Background()
	ws := emptyStore(t)
	commitRecords(t, ws, "a", `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a1"}]}`,
		`{"messages":[{"role":"user","content":"more"},{"role":"assistant","content":"a2"}],"outcome":"failure"}`)
	fork(ctx, t, ws, "a@1", "verdict-only")
	commitRecords(t, ws, "verdict-only", `{"outcome":"success"}`)
	fork(ctx, t, ws, "a@1", "user-only")
	commitRecords(t, ws, "user-only", `{"messages":[{"role":"user","content":"only asks"}],"outcome":"success"}`)
	fork(ctx, t, ws, "a@1", "answered")
	commitRecords(t, ws, "answered", `{"messages":[{"role":"user","content":"other"},{"role":"assistant","content":"b2"}],"outcome":"success"}`)
	out, sum, _ := runLong(t, ws, export.Options{Format: export.Preference})
	pairs := lines(t, out)
	if len(pairs) != 1 || asList(pairs[0]["chosen"])[1].(map[string]any)["content"] != "b2" {
		t.Fatalf("pairs %s, want answered over a only", out)
	}
	for _, s := range []string{"verdict-only", "user-only"} {
		if noted(sum.Skipped, "no assistant message after the fork point", s) == nil {
			t.Errorf("%s not named: %+v", s, sum.Skipped)
		}
	}
}
