package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestBadStateIsNotMaybeWritten: a state that cannot be built (invalid
// JSON, a patch that does not apply, no head to patch) fails before the
// step's put, so its error is the input's fault alone: it must not say
// that the step may have been written, and the head stays where it was.
func TestBadStateIsNotMaybeWritten(t *testing.T) {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ws.Session("s")
	bad := map[string]cairn.State{
		"patch of a new session": cairn.Patch([]byte(`[{"op":"add","path":"/x","value":1}]`)),
		"invalid JSON":           cairn.JSON([]byte(`{"a":`)),
	}
	for name, st := range bad {
		if _, err := s.Commit(ctx, st, cairn.CommitOptions{}); !errors.Is(err, cairn.ErrInvalid) || errors.Is(err, cairn.ErrMaybeWritten) || strings.Contains(err.Error(), "may have been written") {
			t.Errorf("%s on a new session = %v, want ErrInvalid and not ErrMaybeWritten", name, err)
		}
	}
	stepOf(t, s, cairn.JSON([]byte(`{"a":{"b":1}}`)))
	bad = map[string]cairn.State{
		"remove of a missing member": cairn.Patch([]byte(`[{"op":"remove","path":"/nope"}]`)),
		"failed test":                cairn.Patch([]byte(`[{"op":"test","path":"/a/b","value":2}]`)),
		"not a patch":                cairn.Patch([]byte(`{"op":"add"}`)),
		"invalid JSON":               cairn.JSON([]byte(`[1,2`)),
	}
	for name, st := range bad {
		if _, err := s.Commit(ctx, st, cairn.CommitOptions{}); !errors.Is(err, cairn.ErrInvalid) || errors.Is(err, cairn.ErrMaybeWritten) || strings.Contains(err.Error(), "may have been written") {
			t.Errorf("%s = %v, want ErrInvalid and not ErrMaybeWritten", name, err)
		}
	}
	head, err := s.Head(ctx)
	if err != nil || head.Number != 1 {
		t.Fatalf("head after refused states = %v, %v; want step 1", head, err)
	}
	if got := string(stepJSON(t, stepOf(t, s, cairn.Patch([]byte(`[{"op":"replace","path":"/a/b","value":2}]`))))); got != `{"a":{"b":2}}` {
		t.Fatalf("patch after refused ones = %s", got)
	}
}
