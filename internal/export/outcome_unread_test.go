package export_test

import (
	"strings"
	"testing"

	"github.com/cairnlog/cairn/internal/export"
)

// noted returns the note of notes whose reason contains word and that
// names session, or nil.
func noted(notes []export.Note, word, session string) *export.Note {
	for i, n := range notes {
		if strings.Contains(n.Reason, word) {
			for _, s := range n.Names {
				if s == session {
					return &notes[i]
				}
			}
		}
	}
	return nil
}

// TestPreferenceNewestOutcomeUnrecognised: p-alt's branch said success,
// then, newest, "timeout" — an outcome preference export cannot rank.
// The older success was used silently, pairing p-alt as chosen over p.
// The branch's judgement is its newest one: it is not paired, and the
// summary says why.
func TestPreferenceNewestOutcomeUnrecognised(t *testing.T) {
	ctx := t.Context()
	ws := emptyStore(t)
	commitRecords(t, ws, "p", `{"messages":[{"role":"user","content":"q"}]}`)
	fork(ctx, t, ws, "p@1", "p-alt")
	commitRecords(t, ws, "p", `{"messages":[{"role":"assistant","content":"bad"}],"outcome":"failure"}`)
	commitRecords(t, ws, "p-alt", `{"messages":[{"role":"assistant","content":"good"}],"outcome":"success"}`,
		`{"messages":[{"role":"assistant","content":"then it hung"}],"outcome":"timeout"}`)
	out, sum, _ := runLong(t, ws, export.Options{Format: export.Preference})
	if sum.Pairs != 0 {
		t.Errorf("%d pairs from an older outcome, want none: %s", sum.Pairs, out)
	}
	if n := noted(sum.Skipped, "outcome", "p-alt"); n == nil || !strings.Contains(n.Example, "timeout") {
		t.Errorf("p-alt's unranked outcome not named: skipped %+v", sum.Skipped)
	}
}

// TestNewestOutcomeInWrongShape: q's newest record carries its outcome
// in a form the convention does not have ("outcome": false), so the
// record is carried raw; the trajectory still took the older "success",
// so --outcome success selected it and Parquet's trajectory_outcome and
// ATIF's extra.outcome said success. The trajectory has no outcome, and
// a note says why; preference export does not pair the branch either.
func TestNewestOutcomeInWrongShape(t *testing.T) {
	ctx := t.Context()
	ws := emptyStore(t)
	commitRecords(t, ws, "q", `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}],"outcome":"success","reward":1}`,
		`{"messages":[{"role":"assistant","content":"b"}],"outcome":false,"reward":"low"}`)
	if out, sum, _ := run(t, ws, export.Options{Format: export.ATIF, Outcome: "success"}); out != "" || sum.Trajectories != 0 {
		t.Errorf("--outcome success selected q by its older outcome: %s", out)
	}
	if out, sum, _ := run(t, ws, export.Options{Format: export.ATIF, MinReward: f64(0.5)}); out != "" || sum.Trajectories != 0 {
		t.Errorf("--min-reward 0.5 selected q by its older reward: %s", out)
	}
	out, sum, _ := run(t, ws, export.Options{Format: export.ATIF})
	doc := lines(t, out)[0]
	if x := doc["extra"].(map[string]any); x["outcome"] != nil || x["reward"] != nil {
		t.Errorf("ATIF extra carries an older judgement: outcome %v, reward %v", x["outcome"], x["reward"])
	}
	if n := noted(sum.LeftOut, "outcome", "q"); n == nil || !strings.Contains(n.Example, "q@2") {
		t.Errorf("q's unread outcome not noted: left out %+v", sum.LeftOut)
	}

	commitRecords(t, ws, "r", `{"messages":[{"role":"user","content":"q"}]}`)
	fork(ctx, t, ws, "r@1", "r-alt")
	commitRecords(t, ws, "r", `{"messages":[{"role":"assistant","content":"bad"}],"outcome":"failure"}`)
	commitRecords(t, ws, "r-alt", `{"messages":[{"role":"assistant","content":"good"}],"outcome":"success"}`, `{"outcome":["success"]}`)
	out, sum, _ = runLong(t, ws, export.Options{Format: export.Preference})
	if sum.Pairs != 0 {
		t.Errorf("%d pairs from an older outcome, want none: %s", sum.Pairs, out)
	}
	if noted(sum.Skipped, "outcome", "r-alt") == nil {
		t.Errorf("r-alt's unread outcome not named: skipped %+v", sum.Skipped)
	}
}
