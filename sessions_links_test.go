package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/fixture"
)

// TestSessionListingsBesideLinks: on a local store, every listing of
// sessions passed over one whose marker is a symbolic link, though its
// steps read (Workspace.EachHead, SessionNames, EachSession), and a link
// where a session's first step belongs stopped EachHead there, with the
// sessions after it unlisted. The first is now listed as any session; the
// second is passed over and named at the end in an *UnreadableError, as
// a corrupt session is, the others listed.
func TestSessionListingsBesideLinks(t *testing.T) {
	ctx := context.Background()
	dir := fixture.LinkedSessionsStore(t)
	ws2, err := cairn.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws2.Close()

	var heads []string
	err = ws2.EachHead(ctx, "", func(h *cairn.Step) error {
		heads = append(heads, h.String())
		return nil
	})
	if got, want := strings.Join(heads, " "), "a@1 b@1 d@1"; got != want {
		t.Errorf("EachHead listed %q; want %q", got, want)
	}
	var ue *cairn.UnreadableError
	if !errors.As(err, &ue) || len(ue.Sessions) != 1 || ue.Sessions[0] != "c" || !strings.Contains(err.Error(), "holds a link where step c@1 belongs") {
		t.Errorf("EachHead: %v; want an UnreadableError naming session c and the link", err)
	}

	names, err := ws2.SessionNames(ctx)
	if got, want := strings.Join(names, " "), "a b c d"; err != nil || got != want {
		t.Errorf("SessionNames: %q, %v; want %q", got, err, want)
	}
	names = nil
	err = ws2.EachSession(ctx, func(n string) error { names = append(names, n); return nil })
	if got, want := strings.Join(names, " "), "a b c d"; err != nil || got != want {
		t.Errorf("EachSession: %q, %v; want %q", got, err, want)
	}
}
