package eino

import (
	"context"
	"strings"
	"testing"
)

// TestEmptyIDSaysItOnce: every call given an empty checkpoint id fails with
// one sentence that names the store once.
func TestEmptyIDSaysItOnce(t *testing.T) {
	ctx := context.Background()
	s := memStore(t)
	_, _, getErr := s.Get(ctx, "")
	_, _, stepErr := s.GetStep(ctx, "", 1)
	_, stepsErr := s.Steps(ctx, "")
	for name, err := range map[string]error{
		"Get":     getErr,
		"GetStep": stepErr,
		"Steps":   stepsErr,
		"Set":     s.Set(ctx, "", []byte(`{}`)),
		"Delete":  s.Delete(ctx, ""),
		"Fork":    s.Fork(ctx, "", 1, "b"),
		"Fork to": s.Fork(ctx, "a", 1, ""),
	} {
		if err == nil {
			t.Errorf("%s with an empty id succeeded", name)
			continue
		}
		if n := strings.Count(err.Error(), "eino store"); n != 1 || !strings.Contains(err.Error(), "empty checkpoint id") {
			t.Errorf("%s: %q, want one sentence naming the store once and the empty id", name, err)
		}
	}
}
