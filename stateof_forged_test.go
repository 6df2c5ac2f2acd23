package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestStateOfAStepWithEditedFields: Commit(StateOf(st)) decided that st
// was the session's head by st's exported ID (and Session and Number),
// which a caller may set: a copy of a step of another session whose ID
// was set to the head's passed, and the commit wrote a step whose state
// lies in objects its layout does not name. The step was acknowledged,
// and unreadable ("blob … is not in any object of the step's layout"),
// and once gc swept the other session, lost. Only the step as read from
// the store decides now: such a commit is refused and writes nothing.
func TestStateOfAStepWithEditedFields(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	a, _ := ws.Session("a")
	b, _ := ws.Session("b")
	other := stepOf(t, a, cairn.JSON([]byte(`{"only-in-a":"`+strings.Repeat("q", 100000)+`"}`)))
	head := stepOf(t, b, cairn.JSON([]byte(`{"b":1}`)))
	forged := *other
	forged.ID, forged.Session, forged.Number = head.ID, head.Session, head.Number
	st, err := b.Commit(ctx, cairn.StateOf(&forged), cairn.CommitOptions{})
	if err == nil {
		_, rerr := st.JSON(ctx)
		t.Fatalf("commit of StateOf a copy of %s with the head's ID: landed %s (read back: %v); want it refused", other, st, rerr)
	}
	if !errors.Is(err, cairn.ErrInvalid) {
		t.Errorf("commit of StateOf a copy of %s with the head's ID: %v; want ErrInvalid", other, err)
	}
	if h, err := b.Head(ctx); err != nil || h.Number != head.Number {
		t.Errorf("head after the refused commit: %v, %v; want %s", h, err, head)
	}
	// The head itself, as read, still commits unchanged.
	if _, err := b.Commit(ctx, cairn.StateOf(head), cairn.CommitOptions{}); err != nil {
		t.Errorf("commit of StateOf the head: %v", err)
	}
}
