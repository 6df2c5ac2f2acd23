package manifest

import (
	"fmt"
	"regexp"
	"testing"
)

// FuzzParseBaseKey: a key from a listing parses as a base marker only if
// BaseKeyAt spells it, with the same session and number back.
func FuzzParseBaseKey(f *testing.F) {
	for _, k := range []string{BaseKeyAt("d", 1), BaseKeyAt("a-b", 1<<62), BaseKey("d"), StepKey("d", 3),
		"steps/d/base.00000000000000000000", "steps/d/base.99999999999999999999", "steps//base.00000000000000000001",
		"steps/d/base.0000000000000000001", "steps/d/x/base.00000000000000000001", HintKey("d")} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		s, n, ok := ParseBaseKey(key)
		if !ok {
			return
		}
		if n == 0 || n > maxBase || ValidSession(s) != nil || BaseKeyAt(s, n) != key {
			t.Fatalf("ParseBaseKey(%q) = %q, %d: not what BaseKeyAt spells", key, s, n)
		}
	})
}

// FuzzParseStepKey: a key from a listing (a store's bytes, I6) parses as
// a step's, or a pack's, only if StepKey (PackKey) spells it, with the
// same session and a number above 0 back: gc deletes what parses so.
func FuzzParseStepKey(f *testing.F) {
	for _, k := range []string{StepKey("d", 1), StepKey("a-b", 1<<63), PackKey("d", 7), SpillKey("d", 7, 1), HintKey("d"),
		BaseKeyAt("d", 3), "steps/d/00000000000000000000", "steps/d/99999999999999999999", "steps/d/+0000000000000000001",
		"steps//00000000000000000001", "steps/d/x/00000000000000000001", "steps/d/0000000000000000001", "packs/d/00000000000000000002"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if s, n, ok := ParseStepKey(key); ok && (n == 0 || StepKey(s, n) != key) {
			t.Fatalf("ParseStepKey(%q) = %q, %d: not what StepKey spells", key, s, n)
		}
		if s, n, ok := ParsePackKey(key); ok && (n == 0 || PackKey(s, n) != key) {
			t.Fatalf("ParsePackKey(%q) = %q, %d: not what PackKey spells", key, s, n)
		}
	})
}

// TestDescribeKey: every kind of key the layout spells is described in
// the user's words (session, step, what the object is), with no part of
// the key itself.
func TestDescribeKey(t *testing.T) {
	keyish := regexp.MustCompile(`steps/|packs/|pins/|sessions/|gc/|[0-9]{6}`)
	for key, want := range map[string]string{
		StepKey("d", 2):                 "session d, step 2",
		PackKey("d", 33):                "session d, a pack of steps up to 33",
		SpillKey("d", 7, 2):             "session d, large-file pack 2 of step 7",
		HintKey("d"):                    "the head hint of session d",
		BaseKey("d"):                    "the base marker of session d",
		BaseKeyAt("d", 12):              "the base marker of session d",
		SessionKey("d"):                 "the marker of session d",
		PinKey("x", "0123456789abcdef"): "a fork pin of session x",
		ForkLockKey("x"):                "the fork lock of session x",
		GCStateKey:                      "gc's saved state",
		GCClockKey:                      "gc's clock object",
		"junk/00000000000000000001":     "an object of unknown kind",
	} {
		got := DescribeKey(key)
		if got != want || keyish.MatchString(got) {
			t.Errorf("DescribeKey(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestDescribePrefix(t *testing.T) {
	for prefix, want := range map[string]string{
		sessionsPrefix:            "the sessions",
		stepsPrefix:               "the steps of every session",
		sessionStepsPrefix("d"):   "the steps of session d",
		packsPrefix + "d/":        "the packs of session d",
		pinsPrefix:                "the fork pins",
		pinsPrefix + "x/":         "the fork pins of session x",
		"":                        "the store's objects",
		stepsPrefix + "bad name/": "the store's objects",
	} {
		if got := DescribePrefix(prefix); got != want {
			t.Errorf("DescribePrefix(%q) = %q, want %q", prefix, got, want)
		}
	}
}

// TestNumberedKeys: step and pack keys are built without fmt, and must
// be what %020d made of them, numbers of every length included.
func TestNumberedKeys(t *testing.T) {
	for _, n := range []uint64{0, 1, 9, 10, 12345, 1e19 - 1, 1e19, 1<<64 - 1} {
		for _, s := range []string{"d", "a-b.c"} {
			if got, want := StepKey(s, n), fmt.Sprintf("steps/%s/%020d", s, n); got != want {
				t.Errorf("StepKey(%q, %d) = %q, want %q", s, n, got, want)
			}
			if got, want := PackKey(s, n), fmt.Sprintf("packs/%s/%020d", s, n); got != want {
				t.Errorf("PackKey(%q, %d) = %q, want %q", s, n, got, want)
			}
		}
	}
}
