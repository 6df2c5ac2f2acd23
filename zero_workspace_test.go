package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestZeroWorkspaceAndSession: a Workspace or Session declared rather
// than got from Open, OpenStore or Workspace.Session (a zero value, or a
// struct field never set) crashed the program at its first call, with a
// nil map or nil pointer panic deep inside. As a hand-made Step already
// is, each call is now ErrInvalid saying how to get one, Close and the
// accessors answer, and the setters do nothing.
func TestZeroWorkspaceAndSession(t *testing.T) {
	ctx := context.Background()
	noPanic := func(t *testing.T, call string, f func() error) error {
		t.Helper()
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s panicked: %v", call, r)
				}
			}()
			err = f()
		}()
		return err
	}
	t.Run("Workspace", func(t *testing.T) {
		w := new(cairn.Workspace)
		calls := map[string]func() error{
			"Session":      func() error { _, err := w.Session("s"); return err },
			"SessionNames": func() error { _, err := w.SessionNames(ctx); return err },
			"EachSession":  func() error { return w.EachSession(ctx, func(string) error { return nil }) },
			"EachHead":     func() error { return w.EachHead(ctx, "", func(*cairn.Step) error { return nil }) },
			"ReadHead":     func() error { _, err := w.ReadHead(ctx, "s"); return err },
			"ReadStep":     func() error { _, err := w.ReadStep(ctx, "s", 1); return err },
			"Resolve":      func() error { _, err := w.Resolve(ctx, "s@1"); return err },
			"ForkOrigin":   func() error { _, err := w.ForkOrigin(ctx, "s"); return err },
			"Fork":         func() error { _, err := w.Fork(ctx, &cairn.Step{}, "t"); return err },
			"Diff":         func() error { _, err := w.Diff(ctx, &cairn.Step{}, &cairn.Step{}); return err },
			"Prune":        func() error { _, err := w.Prune(ctx, "s", 1); return err },
			"Remove":       func() error { _, err := w.Remove(ctx, "s"); return err },
			"GC":           func() error { _, err := w.GC(ctx, cairn.GCOptions{}); return err },
			"Verify":       func() error { _, err := w.Verify(ctx); return err },
			"Usage":        func() error { _, err := w.Usage(ctx); return err },
			"SetLimits":    func() error { return w.SetLimits(cairn.Limits{}) },
		}
		for call, f := range calls {
			err := noPanic(t, call, f)
			if !errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), "Open or OpenStore") {
				t.Errorf("%s on a zero Workspace: %v; want ErrInvalid saying to use Open or OpenStore", call, err)
			}
		}
		noPanic(t, "setters and accessors", func() error {
			w.SetCacheLimit(1 << 20)
			w.SetCompactionFanout(4)
			w.UseHeadCache(t.TempDir())
			w.Forget(nil)
			_ = w.URL()
			_ = w.Requests()
			_ = w.Limits()
			return nil
		})
		for i := range 2 {
			if err := noPanic(t, "Close", w.Close); err != nil {
				t.Errorf("Close #%d of a zero Workspace: %v", i+1, err)
			}
		}
	})
	t.Run("Session", func(t *testing.T) {
		s := new(cairn.Session)
		calls := map[string]func() error{
			"Commit": func() error { _, err := s.Commit(ctx, cairn.JSON([]byte(`1`)), cairn.CommitOptions{}); return err },
			"Head":   func() error { _, err := s.Head(ctx); return err },
			"Step":   func() error { _, err := s.Step(ctx, 1); return err },
			"Log":    func() error { return s.Log(ctx, func(*cairn.Step) error { return nil }) },
		}
		for call, f := range calls {
			err := noPanic(t, call, f)
			if !errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), "Workspace.Session") {
				t.Errorf("%s on a zero Session: %v; want ErrInvalid saying to use Workspace.Session", call, err)
			}
		}
	})
}
