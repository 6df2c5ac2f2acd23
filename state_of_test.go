package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestStateOfAStepNotTheHead: committing StateOf a step that is not the
// session's head is refused with an error kind: ErrConflict if another
// step landed above it since (it was the head once), ErrInvalid for a
// step of another session. It used to match no kind at all.
func TestStateOfAStepNotTheHead(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	s, _ := ws.Session("s")
	first := stepOf(t, s, cairn.JSON([]byte(`{"a":1}`)))
	stepOf(t, s, cairn.JSON([]byte(`{"a":2}`)))
	if _, err := s.Commit(ctx, cairn.StateOf(first), cairn.CommitOptions{}); !errors.Is(err, cairn.ErrConflict) {
		t.Errorf("StateOf s@1 with s@2 the head: %v; want ErrConflict", err)
	}
	o, _ := ws.Session("o")
	other := stepOf(t, o, cairn.JSON([]byte(`{"o":1}`)))
	if _, err := s.Commit(ctx, cairn.StateOf(other), cairn.CommitOptions{}); !errors.Is(err, cairn.ErrInvalid) {
		t.Errorf("StateOf o@1 committed to s: %v; want ErrInvalid", err)
	}
}

// TestStateOfTheHeadAnotherWriterCommitted: StateOf the session's head,
// read by a program whose *Session still holds an older head (another
// workspace of the same store committed since), commits as the next
// step. It was refused, as if the step were not the head, and refused
// again at every retry: the refusal never re-read the store.
func TestStateOfTheHeadAnotherWriterCommitted(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws1, ws2 := cairn.OpenStore(store), cairn.OpenStore(store)
	s1, _ := ws1.Session("s")
	s2, _ := ws2.Session("s")
	stepOf(t, s1, cairn.JSON([]byte(`{"a":1}`)))
	if _, err := s2.Commit(ctx, cairn.JSON([]byte(`{"a":2}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	head, err := ws1.ReadHead(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	st, err := s1.Commit(ctx, cairn.StateOf(head), cairn.CommitOptions{Record: []byte(`{"note":"approved"}`)})
	if err != nil {
		t.Fatalf("StateOf the head s@2 through a Session that held s@1: %v", err)
	}
	if st.Number != 3 || st.StateID() != head.StateID() {
		t.Errorf("committed %v with state %v; want s@3 with the state of s@2", st, st.StateID() == head.StateID())
	}
	j, err := st.JSON(ctx)
	if err != nil || string(j) != `{"a":2}` {
		t.Errorf("state of %v: %s, %v; want {\"a\":2}", st, j, err)
	}
}

// TestPruneKeepingNoStepIsInvalid: Prune with keepLast 0 is the caller's
// mistake (Remove drops every step), refused as ErrInvalid with nothing
// changed. Its error matched no kind.
func TestPruneKeepingNoStepIsInvalid(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	s, _ := ws.Session("s")
	stepOf(t, s, cairn.JSON([]byte(`{"a":1}`)))
	if _, err := ws.Prune(ctx, "s", 0); !errors.Is(err, cairn.ErrInvalid) {
		t.Errorf("Prune keeping 0 steps: %v; want ErrInvalid", err)
	}
	if _, err := s.Step(ctx, 1); err != nil {
		t.Errorf("s@1 after the refused prune: %v", err)
	}
}

// TestReplyToASessionWithNoSteps: a reply to a session with no steps is
// ErrConflict saying the session has none; it named a step "s@0", which
// no session has.
func TestReplyToASessionWithNoSteps(t *testing.T) {
	s, _ := cairn.OpenStore(mem.New()).Session("s")
	_, err := s.Commit(context.Background(), cairn.JSON([]byte(`{}`)), cairn.CommitOptions{Reply: true})
	if !errors.Is(err, cairn.ErrConflict) || strings.Contains(err.Error(), "s@0") || !strings.Contains(err.Error(), "session s has no steps") {
		t.Errorf("reply to a session with no steps: %v; want ErrConflict saying it has no steps", err)
	}
}
