package cairn_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestExpectHoldsWhenTheHeadIsReadAgain: a commit with Expect is refused
// unless the session's head is the expected step, even when the commit
// read the head again for another reason. A *Session whose head (awaiting
// input) another workspace had answered since, committing with Expect of
// its old head, read the store to check the question, found the answer,
// and wrote a step above it: the expectation was ignored.
func TestExpectHoldsWhenTheHeadIsReadAgain(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		state func(old *cairn.Step, now *cairn.Step) cairn.State
	}{
		{"a head that awaited input", func(_, _ *cairn.Step) cairn.State { return cairn.JSON([]byte(`{"a":3}`)) }},
		{"StateOf the new head", func(_, now *cairn.Step) cairn.State { return cairn.StateOf(now) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := mem.New()
			ws1, ws2 := cairn.OpenStore(store), cairn.OpenStore(store)
			s1, _ := ws1.Session("s")
			s2, _ := ws2.Session("s")
			old, err := s1.Commit(ctx, cairn.JSON([]byte(`{"a":1}`)), cairn.CommitOptions{Status: cairn.AwaitingInput})
			if err != nil {
				t.Fatal(err)
			}
			now, err := s2.Commit(ctx, cairn.JSON([]byte(`{"a":2}`)), cairn.CommitOptions{Reply: true})
			if err != nil {
				t.Fatal(err)
			}
			st, err := s1.Commit(ctx, c.state(old, now), cairn.CommitOptions{Expect: cairn.ExpectHead(1), Withdraw: c.name != "a head that awaited input"})
			if !errors.Is(err, cairn.ErrConflict) {
				t.Errorf("commit expecting head 1 with head 2 in the store: %v, %v; want ErrConflict", st, err)
			}
			if h, err := ws2.ReadHead(ctx, "s"); err != nil || h.Number != 2 {
				t.Errorf("head after the refused commit: %v, %v; want s@2", h, err)
			}
		})
	}
}
