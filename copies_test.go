package cairn_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// valueCopy returns a copy of the struct p points to, as `c := *p` makes
// one (go vet's copylocks would flag that line in a test; a careless
// program is not vetted).
func valueCopy[T any](p *T) *T {
	c := reflect.New(reflect.TypeFor[T]())
	c.Elem().Set(reflect.ValueOf(p).Elem())
	return c.Interface().(*T)
}

// TestCopiedWorkspaceAndSession: a copy of a Workspace (w2 := *w) shared
// the original's map of sessions under a lock of its own (two
// goroutines, one on each, wrote the map at once: a fatal error), and
// closing the copy released the original's sessions, caches and store;
// a copy of a Session committed from a head the original did not share,
// so the original's next commit, the only writer's in the program, lost
// as a conflict. Now a copy is refused with ErrInvalid saying to use
// the pointer, and the original goes on.
func TestCopiedWorkspaceAndSession(t *testing.T) {
	ctx := context.Background()
	_, w, s, _ := oneStep(t)

	w2 := valueCopy(w)
	if _, err := w2.Session("t"); !errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), "copy of a Workspace") {
		t.Errorf("Session on a copied Workspace: %v; want ErrInvalid saying it is a copy", err)
	}
	if _, err := w2.ReadHead(ctx, "s"); !errors.Is(err, cairn.ErrInvalid) {
		t.Errorf("ReadHead on a copied Workspace: %v; want ErrInvalid", err)
	}
	if err := w2.Close(); !errors.Is(err, cairn.ErrInvalid) {
		t.Errorf("Close of a copied Workspace: %v; want ErrInvalid", err)
	}
	if got, want := w2.Limits(), w.Limits(); got != want {
		t.Errorf("Limits of a copy: %+v, want the original's %+v", got, want)
	}

	s2 := valueCopy(s)
	if _, err := s2.Commit(ctx, cairn.JSON([]byte(`{"a":2}`)), cairn.CommitOptions{}); !errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), "copy of a Session") {
		t.Errorf("Commit through a copied Session: %v; want ErrInvalid saying it is a copy", err)
	}
	if _, err := s2.Head(ctx); !errors.Is(err, cairn.ErrInvalid) {
		t.Errorf("Head of a copied Session: %v; want ErrInvalid", err)
	}

	// The original is untouched by what was done to its copies.
	st, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":3}`)), cairn.CommitOptions{})
	if err != nil {
		t.Fatalf("commit through the original after its copies were used: %v", err)
	}
	if st.Number != 2 {
		t.Errorf("the original's commit is step %d, want 2", st.Number)
	}
}

// TestStepFieldsSetByCaller: a Step's exported fields are the caller's
// to set, but its methods went by them rather than by the step as read:
// a JSON step whose Kind was set to KindDir was listed and checked out
// as a damaged directory (ErrCorrupt, "directory is not a node"), and
// one whose Session was set to another name had its Log and Fork walk
// that name's history (or fail naming a store key). Now every method
// goes by the step as read.
func TestStepFieldsSetByCaller(t *testing.T) {
	ctx := context.Background()
	_, w, s, _ := oneStep(t)
	st, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":2}`)), cairn.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, set := range map[string]func(*cairn.Step){
		"Kind=dir":      func(st *cairn.Step) { st.Kind = cairn.KindDir },
		"Number=7":      func(st *cairn.Step) { st.Number = 7 },
		"Session=other": func(st *cairn.Step) { st.Session = "other" },
		"Session=../x":  func(st *cairn.Step) { st.Session = "../x" },
	} {
		t.Run(i, func(t *testing.T) {
			c := *st
			set(&c)
			if got := c.String(); got != "s@2" {
				t.Errorf("String: %s, want s@2", got)
			}
			if doc, err := c.JSON(ctx); err != nil || string(doc) != `{"a":2}` {
				t.Errorf("JSON: %s, %v", doc, err)
			}
			if _, err := c.Files(ctx); !errors.Is(err, cairn.ErrInvalid) || errors.Is(err, cairn.ErrCorrupt) {
				t.Errorf("Files of a JSON state: %v; want ErrInvalid, not ErrCorrupt", err)
			}
			if err := c.Checkout(ctx, filepath.Join(t.TempDir(), "out")); err != nil {
				t.Errorf("Checkout: %v", err)
			}
			var chain []string
			if err := c.Log(ctx, func(st *cairn.Step) error { chain = append(chain, st.String()); return nil }); err != nil || strings.Join(chain, " ") != "s@2 s@1" {
				t.Errorf("Log: %v, %v; want s@2 s@1", chain, err)
			}
			f, err := w.Fork(ctx, &c, "f"+strings.NewReplacer("=", "", ".", "", "/", "").Replace(i))
			if err != nil {
				t.Fatalf("Fork: %v", err)
			}
			chain = nil
			if err := f.Log(ctx, func(st *cairn.Step) error { chain = append(chain, st.String()); return nil }); err != nil || len(chain) != 2 || chain[1] != "s@1" {
				t.Errorf("Log of the fork %s: %v, %v; want its first step, then s@1", f, chain, err)
			}
		})
	}
	report, err := w.Verify(ctx)
	if err != nil || len(report.Problems) != 0 {
		t.Errorf("verify: %v, %+v", err, report)
	}
}
