package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/castest"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestEachHead: the walk behind sessions and inbox lists every session
// with a head, in name order and within its prefix, passes over removed
// ones, and goes on past a damaged one, naming it at the end in an
// *UnreadableError that matches ErrCorrupt.
func TestEachHead(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	for _, name := range []string{"b", "a", "d", "gone", "ab"} {
		s, _ := ws.Session(name)
		for i := 0; i < 2; i++ {
			if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"i":1}`)), cairn.CommitOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := ws.Remove(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	castest.Damage(t, store, manifest.StepKey("d", 2))
	walk := func(prefix string) ([]string, error) {
		var got []string
		err := cairn.OpenStore(store).EachHead(ctx, prefix, func(h *cairn.Step) error {
			got = append(got, h.Session)
			if h.Number != 2 {
				t.Errorf("head of %s: step %d, want 2", h.Session, h.Number)
			}
			return nil
		})
		return got, err
	}
	got, err := walk("")
	if strings.Join(got, " ") != "a ab b" {
		t.Errorf("EachHead: %q; want a ab b", got)
	}
	var u *cairn.UnreadableError
	if !errors.As(err, &u) || !errors.Is(err, cairn.ErrCorrupt) || len(u.Sessions) != 1 || u.Sessions[0] != "d" ||
		!strings.Contains(err.Error(), "1 session could not be read") || !strings.Contains(err.Error(), "session d, step 2") {
		t.Errorf("EachHead error: %v; want an UnreadableError naming session d", err)
	}
	if got, err := walk("a"); err != nil || strings.Join(got, " ") != "a ab" {
		t.Errorf("EachHead(a): %q, %v; want a ab, no error", got, err)
	}
	if got, err := walk("x"); err != nil || len(got) != 0 {
		t.Errorf("EachHead(x): %q, %v; want nothing", got, err)
	}
	if _, err := walk("../"); !errors.Is(err, cairn.ErrInvalid) {
		t.Errorf("EachHead(../): %v; want ErrInvalid", err)
	}
	stop := errors.New("stop")
	n := 0
	if err := ws.EachHead(ctx, "", func(*cairn.Step) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Errorf("EachHead with fn failing: %v after %d calls; want fn's error after 1", err, n)
	}
}
