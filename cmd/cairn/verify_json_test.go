package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVerifyJSON: verify takes --json, as its siblings du and gc do: one
// object with the counts the text form gives and every problem (the
// object, the step, what is wrong), an empty list on a sound store; the
// exit code is the text form's (0 sound, 1 problems).
func TestVerifyJSON(t *testing.T) {
	store := t.TempDir()
	for _, doc := range []string{`{"a":"` + strings.Repeat("x", 100) + `"}`, `{"a":"` + strings.Repeat("y", 100) + `"}`} {
		if _, errs, code := cli(t, store, doc, "commit", "s", "-"); code != 0 {
			t.Fatalf("commit: exit %d: %s", code, errs)
		}
	}
	type report struct {
		Sessions, Steps, Objects, Blobs *int
		Problems                        []struct{ Object, Step, Error string }
	}
	check := func(wantCode int) report {
		t.Helper()
		text, _, textCode := cli(t, store, "", "verify")
		out, errs, code := cli(t, store, "", "verify", "--json")
		var r report
		if err := json.Unmarshal([]byte(out), &r); err != nil || code != wantCode || textCode != wantCode || strings.Count(out, "\n") != 1 {
			t.Fatalf("verify --json: exit %d (text: %d), %q, %s (%v); want exit %d and one JSON object", code, textCode, out, errs, err, wantCode)
		}
		if r.Sessions == nil || r.Steps == nil || r.Objects == nil || r.Blobs == nil || r.Problems == nil {
			t.Fatalf("verify --json: %s; want sessions, steps, objects, blobs and problems", out)
		}
		counts := "verified " + plural(*r.Sessions, "session") + ", " + plural(*r.Steps, "step") + ", " +
			plural(*r.Objects, "object") + ", " + plural(*r.Blobs, "blob") + ": " + plural(len(r.Problems), "problem")
		if !strings.Contains(text, counts) || *r.Sessions != 1 {
			t.Errorf("verify --json: %s; the text form says %q", out, text)
		}
		return r
	}
	if r := check(0); len(r.Problems) != 0 {
		t.Errorf("verify --json of a sound store: problems %v", r.Problems)
	}
	key := filepath.Join(store, "steps", "s", "00000000000000000001")
	b, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)-40] ^= 0xff
	if err := os.WriteFile(key, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := check(1)
	if len(r.Problems) == 0 || r.Problems[0].Object != "steps/s/00000000000000000001" || r.Problems[0].Step == "" || r.Problems[0].Error == "" {
		t.Errorf("verify --json of a flipped step object: problems %+v; want it named, with its step and what is wrong", r.Problems)
	}
}

// TestVerifyCountsEveryObjectItReads: verify reads every live step's
// object whole and checks it, so the objects it reports are those du
// counts live: a store of small JSON steps, their blobs inline in each
// step object, said "3 steps, 0 objects".
func TestVerifyCountsEveryObjectItReads(t *testing.T) {
	store := t.TempDir()
	for _, doc := range []string{`{"a":1}`, `{"a":2}`, `{"a":3}`} {
		if _, errs, code := cli(t, store, doc, "commit", "s", "-"); code != 0 {
			t.Fatalf("commit: exit %d: %s", code, errs)
		}
	}
	if _, errs, code := cli(t, store, "", "fork", "s@2", "t"); code != 0 {
		t.Fatalf("fork: exit %d: %s", code, errs)
	}
	var v struct{ Objects int }
	var u struct {
		LiveObjects    int `json:"live_objects"`
		GarbageObjects int `json:"garbage_objects"`
	}
	out, errs, code := cli(t, store, "", "verify", "--json")
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 0 {
		t.Fatalf("verify --json: exit %d, %q, %s (%v)", code, out, errs, err)
	}
	out, errs, code = cli(t, store, "", "du", "--json")
	if err := json.Unmarshal([]byte(out), &u); err != nil || code != 0 || u.GarbageObjects != 0 {
		t.Fatalf("du --json: exit %d, %q, %s (%v)", code, out, errs, err)
	}
	if v.Objects != u.LiveObjects || v.Objects != 4 {
		t.Errorf("verify checked %d objects, du counts %d live; want both 4 (3 steps of s, 1 of t)", v.Objects, u.LiveObjects)
	}
}
