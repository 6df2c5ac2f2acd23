package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestCancelledCallSaysWhat: a call stopped by its context (cancelled, or
// past its deadline) says which call it stopped, as commit, head, prune
// and the others do ("head of s: find head of s: context canceled"),
// and still matches context.Canceled. Listing sessions (SessionNames,
// EachSession, EachHead), Diff and Verify of named sessions returned
// the bare "context canceled", which in a program's log says nothing of
// what was cut short. An error from the caller's own callback is passed
// through unchanged.
func TestCancelledCallSaysWhat(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	s, _ := ws.Session("s")
	stepOf(t, s, cairn.JSON([]byte(`{"a":1}`)))
	h := stepOf(t, s, cairn.JSON([]byte(`{"a":2}`)))
	p, err := h.ParentStep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, cancel := context.WithCancel(ctx)
	cancel()
	calls := map[string]struct {
		words string
		f     func() error
	}{
		"SessionNames": {"list sessions", func() error { _, err := ws.SessionNames(c); return err }},
		"EachSession":  {"list sessions", func() error { return ws.EachSession(c, func(string) error { return nil }) }},
		"EachHead":     {"list sessions", func() error { return ws.EachHead(c, "", func(*cairn.Step) error { return nil }) }},
		"Diff":         {"diff s@1 s@2", func() error { _, err := ws.Diff(c, p, h); return err }},
		"Verify s":     {"verify s", func() error { _, err := ws.Verify(c, "s"); return err }},
	}
	for name, call := range calls {
		err := call.f()
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), call.words) {
			t.Errorf("%s with a cancelled context: %v; want context.Canceled, saying %q", name, err, call.words)
		}
	}
	mine := errors.New("mine")
	if err := ws.EachSession(ctx, func(string) error { return mine }); err != mine {
		t.Errorf("EachSession's callback error came back as %v; want it unchanged", err)
	}
	if err := ws.EachHead(ctx, "", func(*cairn.Step) error { return mine }); err != mine {
		t.Errorf("EachHead's callback error came back as %v; want it unchanged", err)
	}
}
