package bench

import (
	"strings"
	"testing"
)

// A session long enough ends in turn with a second session around step
// 1,000, and target 5's row says so; a short one keeps its own windows.
func TestResumeSetupPairsTheLongSessionsEnd(t *testing.T) {
	cfg := tiny(t)
	cfg.ResumeDir = t.TempDir()
	steps := 2 * (pairedAround + pairedSteps)
	setup := run[SetupResult](t, cfg, "resume-setup", "2400")
	if setup.Steps != steps || !setup.Paired {
		t.Fatalf("setup of %d steps: %d steps, paired %v", steps, setup.Steps, setup.Paired)
	}
	if setup.Early.N != pairedSteps || setup.Late.N != pairedSteps || setup.SoloEarly.N != pairedSteps {
		t.Fatalf("windows of %d, %d and %d commits, want %d each", setup.Early.N, setup.Late.N, setup.SoloEarly.N, pairedSteps)
	}
	res := run[ResumeResult](t, cfg, "resume", mustJSON(t, ResumeTarget{Label: "windowed", URL: setup.URL, Session: setup.Session, Steps: steps}))
	if res.Steps != steps {
		t.Fatalf("the long session's head is step %d, want %d", res.Steps, steps)
	}
	near := run[ResumeResult](t, cfg, "resume", mustJSON(t, ResumeTarget{Label: "near", URL: setup.URL, Session: "near-1000", Steps: pairedAround}))
	if want := pairedAround + pairedSteps/2; near.Steps != want {
		t.Fatalf("the paired session's head is step %d, want %d", near.Steps, want)
	}

	short := run[SetupResult](t, cfg, "resume-setup", "300")
	if short.Paired || short.Early.N == 0 || short.Late.N == 0 {
		t.Fatalf("setup of 300 steps: paired %v, windows %d and %d", short.Paired, short.Early.N, short.Late.N)
	}

	r := &Results{Setups: []SetupResult{short, setup}, Usage: []Usage{{Phase: "resume-setup", Arg: "300", MaxRSS: 1}, {Phase: "resume-setup", Arg: "2400", MaxRSS: 1}}}
	if row := historyMarkdown(r); !strings.Contains(row, "÷ a session around step 1,000, committed in turn") {
		t.Fatalf("target 5's row does not say the windows were paired:\n%s", row)
	}
}
