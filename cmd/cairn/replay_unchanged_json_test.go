package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestReplayJSONUnchangedStep: in cairn replay --json a step whose state
// did not change has "changes": [], as the text form says "state:
// unchanged"; only a step compared with nothing (the first, all new)
// has none. An unchanged step had no "changes" either, so a reader could
// not tell it from a first step.
func TestReplayJSONUnchangedStep(t *testing.T) {
	store := t.TempDir()
	for _, doc := range []string{`{"a":1}`, `{"a":1}`, `{"a":2}`} {
		if _, errs, code := cli(t, store, doc, "commit", "s", "-"); code != 0 {
			t.Fatal(errs)
		}
	}
	out, errs, code := cli(t, store, "", "replay", "s", "--json")
	if code != 0 {
		t.Fatalf("replay --json: exit %d: %s", code, errs)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var line map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &line); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		c, ok := line["changes"]
		if !ok {
			c = []byte("absent")
		}
		got = append(got, string(c))
	}
	want := []string{"absent", "[]", `[{"path":"/a","kind":"changed"}]`}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("changes of steps 1..3 = %q, want %q", got, want)
	}
}
