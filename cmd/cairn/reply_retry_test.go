package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestReplyRetriedWithIdempotencyKey: a cairn reply killed once its
// answer landed, before it could print it, left the human no way to
// tell: a retry was refused, "does not await input". Retried with the
// same --idempotency-key, it prints the reply it wrote, marked already
// written, and exits 0, also fenced with --expect on the question after
// the agent went on; the session holds one reply. The key with another
// answer is a conflict.
func TestReplyRetriedWithIdempotencyKey(t *testing.T) {
	testbin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"plan":"deploy"}`, "commit", "s", "-"); code != 0 {
		t.Fatalf("first step: exit %d: %s", code, errs)
	}
	if _, errs, code := cli(t, store, `{"plan":"deploy"}`, "commit", "s", "-", "--status", "awaiting_input", "--record", `{"question":"Deploy?"}`); code != 0 {
		t.Fatalf("question: exit %d: %s", code, errs)
	}
	args := []string{"--store", store, "reply", "s", "--input", `{"approved":true}`, "--expect", "2", "--idempotency-key", "human/deploy"}
	killed := exec.Command(testbin, args...)
	killed.Env = append(os.Environ(), "CAIRN_TEST_CHILD=cli-killed-after-landing")
	if out, err := killed.CombinedOutput(); err == nil || len(out) != 0 {
		t.Fatalf("the reply was not killed before it printed: %v, %q", err, out)
	}
	out, errs, code := cli(t, store, "", args[2:]...)
	if code != 0 || !strings.HasPrefix(out, "s@3 ") || !strings.Contains(out, "already written") {
		t.Fatalf("retry: exit %d, %q %q; want s@3 marked already written", code, out, errs)
	}
	// The agent read the answer and went on; the retry still finds it.
	if _, errs, code := cli(t, store, `{"plan":"deployed"}`, "commit", "s", "-"); code != 0 {
		t.Fatalf("the agent's next step: exit %d: %s", code, errs)
	}
	out, errs, code = cli(t, store, "", append(args[2:], "--json")...)
	var res struct {
		Step      uint64 `json:"step"`
		InReplyTo uint64 `json:"in_reply_to"`
		Replayed  bool   `json:"replayed"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Step != 3 || res.InReplyTo != 2 || !res.Replayed {
		t.Fatalf("retry --json after the agent went on: exit %d, %q %q; want step 3, in reply to 2, replayed", code, out, errs)
	}
	if out, _, _ := cli(t, store, "", "log", "s"); strings.Count(out, "s@") != 4 {
		t.Errorf("the session holds more than its four steps:\n%s", out)
	}
	// The key with another answer is a conflict, in words.
	_, errs, code = cli(t, store, "", "reply", "s", "--input", `{"approved":false}`, "--expect", "2", "--idempotency-key", "human/deploy")
	if code != 3 || !strings.Contains(errs, `idempotency key "human/deploy" was already used for step 3`) {
		t.Errorf("key reused for another answer: exit %d, %q; want exit 3 naming the step", code, errs)
	}
	// Without a key, the retry is refused as it always was.
	if _, _, code := cli(t, store, "", args[2:len(args)-2]...); code != 3 {
		t.Errorf("retry without a key: exit %d, want 3", code)
	}
	if _, errs, code := cli(t, store, "", "reply", "s", "--input", "1", "--idempotency-key", "two words"); code != 2 || !strings.Contains(errs, "--idempotency-key") {
		t.Errorf("a bad key: exit %d, %q; want a usage error naming the flag", code, errs)
	}
}
