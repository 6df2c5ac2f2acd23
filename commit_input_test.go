package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestCommitUnknownStatusRefused: a status that is none of the three is
// the caller's mistake, refused with ErrInvalid before anything is
// written. It used to be written, and every read of the step then said
// the store was corrupt.
func TestCommitUnknownStatusRefused(t *testing.T) {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ws.Session("s")
	stepOf(t, s, cairn.JSON([]byte(`{"a":1}`)))
	_, err = s.Commit(ctx, cairn.JSON([]byte(`{"a":2}`)), cairn.CommitOptions{Status: 200})
	if !errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), "status") {
		t.Fatalf("commit with status 200 = %v, want ErrInvalid naming the status", err)
	}
	head, err := s.Head(ctx)
	if err != nil || head.Number != 1 {
		t.Fatalf("head after the refused commit = %v, %v; want step 1", head, err)
	}
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":3}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	for n := uint64(1); n <= 2; n++ {
		if _, err := s.Step(ctx, n); err != nil {
			t.Errorf("step %d: %v", n, err)
		}
	}
}

// TestNilArgumentsRefused: nil where a state or a step is wanted is an
// ErrInvalid in words, not a panic.
func TestNilArgumentsRefused(t *testing.T) {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ws.Session("s")
	st := stepOf(t, s, cairn.JSON([]byte(`{"a":1}`)))
	calls := map[string]func() error{
		"Commit(nil)":          func() error { _, err := s.Commit(ctx, nil, cairn.CommitOptions{}); return err },
		"Commit(StateOf(nil))": func() error { _, err := s.Commit(ctx, cairn.StateOf(nil), cairn.CommitOptions{}); return err },
		"Fork(nil)":            func() error { _, err := ws.Fork(ctx, nil, "t"); return err },
		"Diff(nil, st)":        func() error { _, err := ws.Diff(ctx, nil, st); return err },
		"Diff(st, nil)":        func() error { _, err := ws.Diff(ctx, st, nil); return err },
	}
	for name, call := range calls {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s panicked: %v", name, r)
				}
			}()
			if err := call(); !errors.Is(err, cairn.ErrInvalid) {
				t.Errorf("%s = %v, want ErrInvalid", name, err)
			}
		}()
	}
}

// TestDirWithNoPathRefused: Dir("") said only "stat : no such file or
// directory" (a store failure, by the errors' classes); it is the
// caller's input that names no directory: ErrInvalid, in words.
func TestDirWithNoPathRefused(t *testing.T) {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ws.Session("s")
	for name, state := range map[string]cairn.State{`Dir("")`: cairn.Dir(""), `DirWithCache("", …)`: cairn.DirWithCache("", t.TempDir())} {
		_, err := s.Commit(ctx, state, cairn.CommitOptions{})
		if !errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), "directory state with no path") {
			t.Errorf("Commit(%s) = %v, want ErrInvalid saying the state names no directory", name, err)
		}
	}
}
