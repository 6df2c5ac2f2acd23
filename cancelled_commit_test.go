package cairn_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/cas/retry"
)

// TestCommitWithCancelledContextWasNotWritten: a commit whose context is
// done before its step's put tries nothing, so its error says the step
// was not written: it used to say it may have been (ErrMaybeWritten), on
// every backend.
func TestCommitWithCancelledContextWasNotWritten(t *testing.T) {
	stores := map[string]func(t *testing.T) *cairn.Workspace{
		"a local directory": func(t *testing.T) *cairn.Workspace {
			ws, err := cairn.Open(context.Background(), t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return ws
		},
		"mem://": func(t *testing.T) *cairn.Workspace { return cairn.OpenStore(mem.New()) },
		"a store behind the retry wrapper": func(t *testing.T) *cairn.Workspace {
			return cairn.OpenStore(retry.New(mem.New(), retry.DefaultPolicy))
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			ws := open(t)
			defer ws.Close()
			s, _ := ws.Session("s")
			stepOf(t, s, cairn.JSON([]byte(`{"a":1}`)))
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":2}`)), cairn.CommitOptions{})
			if !errors.Is(err, context.Canceled) || errors.Is(err, cairn.ErrMaybeWritten) {
				t.Fatalf("commit with a cancelled context = %v, want context.Canceled and not ErrMaybeWritten", err)
			}
			head, err := s.Head(context.Background())
			if err != nil || head.Number != 1 {
				t.Fatalf("head = %v, %v; want step 1", head, err)
			}
		})
	}
}
