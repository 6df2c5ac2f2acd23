package manifest

import (
	"regexp"
	"testing"
)

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
		SessionKey("d"):                 "the marker of session d",
		PinKey("x", "0123456789abcdef"): "a fork pin of session x",
		GCStateKey:                      "gc's saved state",
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
