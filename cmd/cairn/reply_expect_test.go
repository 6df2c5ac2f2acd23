package main

import (
	"strings"
	"testing"

	"github.com/cairnlog/cairn/internal/s3test"
)

// TestReplyExpectQuestionMoved: a human reads S@2's question in the inbox
// on one machine; meanwhile a worker on another machine withdraws it and
// asks another at S@4. `cairn reply S --expect 2` must not answer the new
// question (exit 3, the question at 4 stays in the inbox); with --expect 4
// it answers it. Before --expect there was no way to name the question,
// and the human's approval went to a question they never saw.
func TestReplyExpectQuestionMoved(t *testing.T) {
	b := s3test.StartMinIO(t)
	bin := cairnBinary(t)
	human, worker := minioMachine(t, bin, b, "hitl"), minioMachine(t, bin, b, "hitl")

	worker.must(`{"plan":"deploy"}`, "commit", "s", "-")
	worker.must(`{"plan":"deploy"}`, "commit", "s", "-", "--status", "awaiting_input", "--record", `{"question":"Deploy to staging?"}`)
	if out := human.must("", "inbox"); !strings.Contains(out, "s@2") {
		t.Fatalf("inbox does not show s@2: %q", out)
	}
	worker.must(`{"plan":"drop"}`, "commit", "s", "-", "--withdraw")
	worker.must(`{"plan":"drop"}`, "commit", "s", "-", "--status", "awaiting_input", "--record", `{"question":"Drop the database?"}`)

	_, errs, code := human.run("", "reply", "s", "--input", `{"approved":true}`, "--expect", "2")
	if code != 3 || !strings.Contains(errs, "expected the question at s@2, but the head is s@4") || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
		t.Fatalf("reply --expect 2 to a question moved to s@4: exit %d: %q (want exit 3 naming both steps, one line)", code, errs)
	}
	if out := human.must("", "inbox"); !strings.Contains(out, "s@4") || !strings.Contains(out, "Drop the database?") {
		t.Fatalf("the question at s@4 left the inbox: %q", out)
	}
	if steps := human.log("s"); steps[0].Step != 4 {
		t.Fatalf("head of s is %d after a refused reply, want 4", steps[0].Step)
	}

	if out := human.must("", "reply", "s", "--input", `{"approved":false}`, "--expect", "4"); !strings.Contains(out, "reply to s@4") {
		t.Fatalf("reply --expect 4: %q", out)
	}
	rec := strings.TrimSpace(human.must("", "show", "s@5", "--record"))
	if rec != `{"reply":{"approved":false},"in_reply_to":4}` {
		t.Fatalf("s@5 record = %s", rec)
	}
	// A step that is no question, named: the conflict names the head.
	if _, errs, code := human.run("", "reply", "s", "--input", "1", "--expect", "5"); code != 3 || !strings.Contains(errs, "does not await input") {
		t.Fatalf("reply --expect 5 to a head that asks nothing: exit %d: %q", code, errs)
	}
	if _, errs, code := human.run("", "reply", "s", "--input", "1", "--expect", "0"); code != 2 || !strings.Contains(errs, "--expect") {
		t.Fatalf("reply --expect 0: exit %d: %q (want a usage error naming --expect)", code, errs)
	}
}
