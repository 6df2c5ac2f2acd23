package eino

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestLimitErrorSaysHowToRaise: a checkpoint larger than the workspace's
// read limits fails Get and GetStep with cairn.ErrLimit and an error that
// says what the limit is and which environment variable raises it.
func TestLimitErrorSaysHowToRaise(t *testing.T) {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	s := New(ws)
	if err := s.Set(ctx, "run-big", []byte(`{"a":"`+strings.Repeat("x", 4096)+`"}`)); err != nil {
		t.Fatal(err)
	}
	if err := ws.SetLimits(cairn.Limits{MaxValueBytes: 1000, MaxTotalBytes: 1000}); err != nil {
		t.Fatal(err)
	}
	_, _, getErr := s.Get(ctx, "run-big")
	_, _, stepErr := s.GetStep(ctx, "run-big", 1)
	for name, err := range map[string]error{"Get": getErr, "GetStep": stepErr} {
		if !errors.Is(err, cairn.ErrLimit) {
			t.Fatalf("%s: %v, want a limit error", name, err)
		}
		if msg := err.Error(); !strings.Contains(msg, "$CAIRN_MAX_") || !strings.Contains(msg, "the limit is 1000 bytes") || !strings.Contains(msg, `checkpoint "run-big"`) {
			t.Fatalf("%s: %q does not name the checkpoint, the limit and its environment variable", name, msg)
		}
	}
}
