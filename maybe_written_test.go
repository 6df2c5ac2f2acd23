package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// failPuts fails every put of the key prefix (or keys under it), as a store
// that is down would, with an error that is not the slot being taken.
type failPuts struct {
	cas.Store
	prefix string
}

var errDown = errors.New("connection reset")

func (s failPuts) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	if strings.HasPrefix(key, s.prefix) {
		return errDown
	}
	return s.Store.Put(ctx, key, data, opts)
}

// TestMaybeWrittenOnlyForTheStepPut: a commit says the step may have been
// written only when the step object's own put failed. A failure before it
// (here the session marker's put, on a session's first step) left
// nothing written, and the commit said "may have been written" all the
// same (found by the hostile-user audit).
func TestMaybeWrittenOnlyForTheStepPut(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		prefix string
		maybe  bool
	}{{manifest.SessionKey("run"), false}, {manifest.StepKey("run", 1), true}} {
		s, _ := cairn.OpenStore(failPuts{mem.New(), c.prefix}).Session("run")
		_, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":1}`)), cairn.CommitOptions{})
		if !errors.Is(err, errDown) {
			t.Fatalf("puts under %s failing: commit error %v; want the store's", c.prefix, err)
		}
		if got := errors.Is(err, cairn.ErrMaybeWritten); got != c.maybe {
			t.Errorf("puts under %s failing: ErrMaybeWritten = %v, want %v (%v)", c.prefix, got, c.maybe, err)
		}
	}
}

// notStoredOnce fails the first put of one key with an error its
// backend marks as having left nothing (a local store's disk full before
// the object was named).
type notStoredOnce struct {
	cas.Store
	key    string
	failed *bool
}

var errFull = errors.New("no space left on device")

func (s notStoredOnce) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	if key == s.key && !*s.failed {
		*s.failed = true
		return cas.NotStored(errFull)
	}
	return s.Store.Put(ctx, key, data, opts)
}

// TestNotStoredIsNotMaybeWritten: a step put that the backend knows left
// nothing is a plain failure, not "the step may have been written", and
// the session keeps its head: the next commit takes the same slot with
// one PUT, reading nothing.
func TestNotStoredIsNotMaybeWritten(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(notStoredOnce{mem.New(), manifest.StepKey("run", 2), new(bool)})
	s, _ := ws.Session("run")
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":1}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":2}`)), cairn.CommitOptions{})
	if !errors.Is(err, errFull) || errors.Is(err, cairn.ErrMaybeWritten) {
		t.Fatalf("a step put that left nothing: %v; want the store's error, not ErrMaybeWritten", err)
	}
	before := ws.Requests()
	step, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":2}`)), cairn.CommitOptions{})
	if err != nil || step.Number != 2 {
		t.Fatalf("the next commit: %v, %v; want step 2", step, err)
	}
	if got := ws.Requests(); got.Put-before.Put != 1 || got.Get != before.Get || got.List != before.List {
		t.Errorf("the next commit made %+v requests after %+v: it read the store again", got, before)
	}
}
