package cairn

import (
	"errors"
	"fmt"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/retry"
	"github.com/cairnlog/cairn/manifest"
)

// TestRefusedWords: the words of a refused request for each kind of
// request, inside and outside a commit, for a put that may have landed
// (an earlier attempt's), and for a store opened without a URL, whose
// password a URL would hide; the words keep their cause.
func TestRefusedWords(t *testing.T) {
	boom := errors.New("boom")
	refused := func(op, key string) *cas.RefusedError {
		return &cas.RefusedError{Op: op, Key: key, Why: "access denied (x)", Err: boom}
	}
	put := func(key string) error { return fmt.Errorf("put %s: %w", key, cas.NotStored(refused("put", key))) }
	const store = "the store minio://k:xxxxx@h/b/p refused the request: access denied (x): "
	w := &Workspace{url: "minio://k:secret@h/b/p"}
	for _, c := range []struct {
		err  error
		step string
		want string
	}{
		{put(manifest.StepKey("s", 2)), "the step", store + "step s@2 was not written"},
		{put(manifest.SessionKey("s")), "the step", store + "the marker of session s was not written; the step was not written"},
		{put(manifest.PinKey("s", "0123456789abcdef")), "the fork's first step", store + "a fork pin of session s was not written; the fork's first step was not written"},
		{fmt.Errorf("x: %w", refused("get", manifest.HintKey("s"))), "", store + "could not read the head hint of session s"},
		{fmt.Errorf("x: %w", refused("stat", manifest.StepKey("s", 1))), "the step", store + "could not read session s, step 1; the step was not written"},
		{fmt.Errorf("x: %w", refused("list", "sessions/")), "", store + "could not list the sessions"},
		{fmt.Errorf("x: %w", refused("delete", manifest.StepKey("s", 1))), "", store + "session s, step 1 was not deleted"},
		{fmt.Errorf("commit s@3: %w: %w", ErrMaybeWritten, fmt.Errorf("put k: an earlier attempt may have landed; the last was refused: %w", refused("put", manifest.StepKey("s", 3)))),
			"the step", store + "step s@3 may have been written (an earlier attempt may have reached the store); the session's next commit reads its head again"},
		{fmt.Errorf("commit s@3: %w: %w", ErrMaybeWritten, fmt.Errorf("put k: %w", refused("put", manifest.HintKey("s")))),
			"the step", store + "the head hint of session s may have been written (an earlier attempt may have reached the store); the step may have been written (the session's next commit reads its head again)"},
	} {
		got := w.refused(c.err, c.step)
		if got.Error() != c.want {
			t.Errorf("%q:\n got %q\nwant %q", c.err, got, c.want)
		}
		var re *cas.RefusedError
		if !errors.As(got, &re) || !errors.Is(got, boom) || errors.Is(c.err, ErrMaybeWritten) != errors.Is(got, ErrMaybeWritten) {
			t.Errorf("%q: the words lost their cause", got)
		}
		if again := w.refused(fmt.Errorf("outer: %w", got), ""); again.Error() != "outer: "+c.want {
			t.Errorf("said twice: %q", again)
		}
	}
	if got := (&Workspace{}).refused(put(manifest.StepKey("s", 1)), ""); got.Error() != "the store refused the request: access denied (x): step s@1 was not written" {
		t.Errorf("a store opened without a URL: %q", got)
	}
	// A store that did not answer: the same words, with the attempts.
	down := func(op, key string) error {
		un := &cas.UnavailableError{Op: op, Key: key, Why: "could not be reached (connection refused)", Err: boom}
		return fmt.Errorf("%s %s: %w", op, key, &retry.GaveUpError{Attempts: 3, Err: un})
	}
	const downStore = "the store minio://k:xxxxx@h/b/p could not be reached (connection refused), after 3 attempts: "
	for _, c := range []struct {
		err  error
		step string
		want string
	}{
		{down("get", manifest.HintKey("s")), "the step", downStore + "could not read the head hint of session s; the step was not written"},
		{down("list", "sessions/"), "", downStore + "could not list the sessions"},
		{fmt.Errorf("commit s@3: %w: %w", ErrMaybeWritten, down("put", manifest.StepKey("s", 3))), "the step",
			downStore + "step s@3 may have been written (it may have reached the store before the answer was lost); the session's next commit reads its head again"},
	} {
		got := w.refused(classify(c.err), c.step)
		var un *cas.UnavailableError
		if got.Error() != c.want || !errors.As(got, &un) || !errors.Is(got, ErrUnavailable) || !errors.Is(got, boom) {
			t.Errorf("%q:\n got %q\nwant %q, ErrUnavailable, with its cause", c.err, got, c.want)
		}
	}
	if other := errors.New("x"); w.refused(other, "the step") != other {
		t.Error("an error that is no refusal was changed")
	}
}
