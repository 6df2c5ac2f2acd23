package export_test

import (
	"strings"
	"testing"

	"github.com/cairnlog/cairn/internal/export"
)

// TestPreferenceBrokenRecordNotPaired: a record that uses the
// convention's keys with the wrong shape has messages that cannot be
// read. The chat formats skip such a trajectory, but preference export
// paired it with a hole: here the prompt lost the user's second message
// without a word. The branches whose path holds it are skipped, named
// with the chat formats' reason; a raw record on the path is noted.
func TestPreferenceBrokenRecordNotPaired(t *testing.T) {
	ctx := t.Context()
	ws := emptyStore(t)
	commitRecords(t, ws, "p", `{"messages":[{"role":"user","content":"q"}]}`,
		`{"messages":[{"role":"robot","content":"also this"}]}`)
	fork(ctx, t, ws, "p@2", "p-alt")
	commitRecords(t, ws, "p", `{"messages":[{"role":"assistant","content":"bad"}],"outcome":"failure"}`)
	commitRecords(t, ws, "p-alt", `{"messages":[{"role":"assistant","content":"good"}],"outcome":"success"}`)
	out, sum, _ := runLong(t, ws, export.Options{Format: export.Preference})
	if sum.Pairs != 0 {
		t.Errorf("%d pairs with a hole in the prompt: %s", sum.Pairs, out)
	}
	if noted(sum.Skipped, "wrong shape", "p-alt") == nil {
		t.Errorf("the broken record is not named: skipped %+v", sum.Skipped)
	}

	ws = emptyStore(t)
	commitRecords(t, ws, "r", `{"messages":[{"role":"user","content":"q"}]}`, `{"progress":"half"}`)
	fork(ctx, t, ws, "r@2", "r-alt")
	commitRecords(t, ws, "r", `{"messages":[{"role":"assistant","content":"bad"}],"outcome":"failure"}`)
	commitRecords(t, ws, "r-alt", `{"messages":[{"role":"assistant","content":"good"}],"outcome":"success"}`)
	out, sum, _ = runLong(t, ws, export.Options{Format: export.Preference})
	if sum.Pairs != 1 || noted(sum.LeftOut, "raw records", "r-alt") == nil {
		t.Errorf("raw record on the path not noted: %d pairs, left out %+v: %s", sum.Pairs, sum.LeftOut, out)
	}
	if !strings.Contains(out, `"good"`) {
		t.Errorf("pair lacks the chosen branch: %s", out)
	}
}
