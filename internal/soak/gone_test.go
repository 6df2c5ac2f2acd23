package soak

import (
	"testing"

	"github.com/cairnlog/cairn"
)

// TestGoneWords: the soak tells a session or step that others removed or
// pruned meanwhile (expected) from damage (a problem) by cairn's words.
// It matched "not found", which those words once did not hold, and
// called every refused fork of a pruned step a problem; then it listed
// the words of each reason a second time. Now every reason says "not
// found" once, and only the lost step's are told apart: this ties gone
// to the words of each reason.
func TestGoneWords(t *testing.T) {
	for _, e := range []*cairn.NotFoundError{
		{Session: "s", Why: cairn.NotFoundNoSteps},
		{Session: "s", Step: 3, Why: cairn.NotFoundNoSteps},
		{Session: "s", Why: cairn.NotFoundRemoved},
		{Session: "s", Step: 3, Why: cairn.NotFoundRemoved},
		{Session: "s", Step: 3, Why: cairn.NotFoundRemoved, InForks: true},
		{Session: "s", Step: 3, Why: cairn.NotFoundRemoved, Start: 6},
		{Session: "s", Step: 9, Why: cairn.NotFoundPastHead, Head: 5},
		{Session: "s", Step: 2, Why: cairn.NotFoundPruned, Start: 5},
		{Session: "s", Step: 2, Why: cairn.NotFoundBeforeStart, Start: 5},
	} {
		if msg := "cairn fork: " + e.Error(); !gone(msg) {
			t.Errorf("gone(%q) = false, want true", msg)
		}
	}
	for _, e := range []*cairn.NotFoundError{
		{Session: "s", Step: 3, Why: cairn.NotFoundLost},
		{Session: "s", Step: 3, Why: cairn.NotFoundLost, Below: 5},
	} {
		if msg := "cairn fork: " + e.Error(); gone(msg) {
			t.Errorf("gone(%q) = true: a lost step is damage, not a race", msg)
		}
	}
}
