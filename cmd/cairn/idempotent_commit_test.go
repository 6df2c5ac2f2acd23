package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommitRetriedWithIdempotencyKey: a cairn commit killed once its
// step landed, before it could print it, left its user no safe move: a
// retry with --expect met its own step as a conflict, and one without
// would have written the step twice. Retried with the same
// --idempotency-key, it prints the step it wrote, marked already
// written, and exits 0; the session holds one step for it.
func TestCommitRetriedWithIdempotencyKey(t *testing.T) {
	testbin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	doc := filepath.Join(t.TempDir(), "doc.json")
	if err := os.WriteFile(doc, []byte(`{"turn":2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := cli(t, store, `{"turn":1}`, "commit", "s", "-"); code != 0 {
		t.Fatalf("first step: exit %d: %s", code, errs)
	}
	args := []string{"--store", store, "commit", "s", "--json-file", doc, "--expect", "1", "--idempotency-key", "job-7/turn-2"}
	killed := exec.Command(testbin, args...)
	killed.Env = append(os.Environ(), "CAIRN_TEST_CHILD=cli-killed-after-landing")
	if out, err := killed.CombinedOutput(); err == nil || len(out) != 0 {
		t.Fatalf("the commit was not killed before it printed: %v, %q", err, out)
	}
	out, errs, code := cli(t, store, "", args[2:]...)
	if code != 0 || !strings.HasPrefix(out, "s@2 ") || !strings.Contains(out, "already written") {
		t.Fatalf("retry: exit %d, %q %q; want s@2 marked already written", code, out, errs)
	}
	out, errs, code = cli(t, store, "", append(args[2:], "--json")...)
	var res struct {
		Step     uint64 `json:"step"`
		Replayed bool   `json:"replayed"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Step != 2 || !res.Replayed {
		t.Fatalf("retry --json: exit %d, %q %q; want step 2, replayed", code, out, errs)
	}
	if out, _, _ := cli(t, store, "", "log", "s"); strings.Count(out, "s@") != 2 {
		t.Errorf("the session holds more than its two steps:\n%s", out)
	}
	// The key on another step is a conflict, in words.
	_, errs, code = cli(t, store, `{"turn":3}`, "commit", "s", "-", "--idempotency-key", "job-7/turn-2")
	if code != 3 || !strings.Contains(errs, `idempotency key "job-7/turn-2" was already used for step 2`) {
		t.Errorf("key reused for another step: exit %d, %q; want exit 3 naming the step", code, errs)
	}
	// Without a key, the retry is the conflict it always was.
	if _, _, code := cli(t, store, "", args[2:len(args)-2]...); code != 3 {
		t.Errorf("retry without a key: exit %d, want 3", code)
	}
}

// TestIdempotencyKeyFlagChecked: a key no commit could store is a usage
// error naming the flag and what a key may be, before anything is read.
func TestIdempotencyKeyFlagChecked(t *testing.T) {
	store := t.TempDir()
	for _, key := range []string{"", "two words", strings.Repeat("k", 129)} {
		_, errs, code := cli(t, store, `{}`, "commit", "s", "-", "--idempotency-key", key)
		if code != 2 || !strings.Contains(errs, "--idempotency-key") || !strings.Contains(errs, "printable ASCII") {
			t.Errorf("--idempotency-key %q: exit %d, %q", key, code, errs)
		}
	}
}
