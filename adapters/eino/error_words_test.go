package eino

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestErrorsNameCheckpointIDs: an Eino user chose checkpoint ids ("run-1"),
// not cairn session names ("eino-run-1") or steps ("eino-run-1@9"): the
// store's errors name the ids and step numbers only, and still match
// cairn's errors (errors.Is ErrNotFound, errors.As *ConflictError) as
// before.
func TestErrorsNameCheckpointIDs(t *testing.T) {
	ctx := context.Background()
	s := memStore(t)
	for _, id := range []string{"run-1", "run_2", "run-3"} {
		if err := s.Set(ctx, id, []byte(`{"a":1}`)); err != nil {
			t.Fatal(err)
		}
	}
	_, _, stepErr := s.GetStep(ctx, "run-1", 9)
	_, _, neverErr := s.GetStep(ctx, "never", 1)
	_, logErr := s.Steps(ctx, "never")
	forkStepErr := s.Fork(ctx, "run_2", 9, "other")
	forkToErr := s.Fork(ctx, "run-1", 1, "run-3")
	// A fork of a fork reads its steps in the history of the first.
	if err := s.Fork(ctx, "run_2", 1, "run-4"); err != nil {
		t.Fatal(err)
	}
	_, _, forkedErr := s.GetStep(ctx, "run-4", 7)

	internal := regexp.MustCompile(`eino-|@[0-9]|_5f`)
	for _, c := range []struct {
		name string
		err  error
		kind error
		says string
	}{
		{"GetStep(run-1, 9)", stepErr, cairn.ErrNotFound, `checkpoint "run-1" step 9`},
		{"GetStep(never, 1)", neverErr, cairn.ErrNotFound, `checkpoint "never" step 1`},
		{"Steps(never)", logErr, cairn.ErrNotFound, `checkpoint "never"`},
		{"Fork(run_2, 9)", forkStepErr, cairn.ErrNotFound, `checkpoint "run_2" step 9`},
		{"Fork(run-1, 1, run-3)", forkToErr, cairn.ErrConflict, `checkpoint "run-3" already exists`},
		{"GetStep(run-4, 7)", forkedErr, cairn.ErrNotFound, `checkpoint "run-4" step 7`},
	} {
		if c.err == nil {
			t.Fatalf("%s: no error", c.name)
		}
		msg := c.err.Error()
		if internal.MatchString(msg) {
			t.Errorf("%s: %q names a cairn session or step (%q), not the checkpoint id", c.name, msg, internal.FindString(msg))
		}
		if !strings.Contains(msg, c.says) {
			t.Errorf("%s: %q does not say %s", c.name, msg, c.says)
		}
		if !errors.Is(c.err, c.kind) {
			t.Errorf("%s: %v does not match %v", c.name, c.err, c.kind)
		}
	}
	var ce *cairn.ConflictError
	if !errors.As(forkToErr, &ce) {
		t.Errorf("Fork onto an existing id: %v is no *cairn.ConflictError", forkToErr)
	}
}

// TestNotFoundInCheckpointWords: a checkpoint, or a step of it, that is
// not there is said in a checkpoint's words, read from cairn's
// *cairn.NotFoundError (errors.As), not from its text, whose words
// ("session … has no steps") are cairn's.
func TestNotFoundInCheckpointWords(t *testing.T) {
	ctx := context.Background()
	s := memStore(t)
	if err := s.Set(ctx, "run-1", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	_, _, pastHead := s.GetStep(ctx, "run-1", 9)
	_, _, never := s.GetStep(ctx, "never", 1)
	_, logNever := s.Steps(ctx, "never")
	for _, c := range []struct {
		err  error
		want string
	}{
		{pastHead, `eino store: get checkpoint "run-1" step 9: not found: its newest step is 1`},
		{never, `eino store: get checkpoint "never" step 1: not found: nothing was saved under it`},
		{logNever, `eino store: log checkpoint "never": not found: nothing was saved under it`},
	} {
		if c.err == nil || c.err.Error() != c.want || !errors.Is(c.err, cairn.ErrNotFound) {
			t.Errorf("%v; want %q, an ErrNotFound", c.err, c.want)
		}
	}
}
