package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// landingStore is an object store that lists a step object before a GET
// finds it, as MinIO does for a put that is still landing or whose client
// was killed (seen in TestCrashKillMinIO): the first misses GETs of key
// say not found, and a phantom key is listed (and never readable) for the
// first phantomLists LISTs.
type landingStore struct {
	cas.Store
	mu          sync.Mutex
	key         string
	misses      int
	phantom     string
	phantomList int
}

func (s *landingStore) Get(ctx context.Context, key string, off, n int64) ([]byte, error) {
	s.mu.Lock()
	miss := key == s.phantom || (key == s.key && s.misses > 0)
	if key == s.key && s.misses > 0 {
		s.misses--
	}
	s.mu.Unlock()
	if miss {
		return nil, cas.ErrNotFound
	}
	return s.Store.Get(ctx, key, off, n)
}

func (s *landingStore) List(ctx context.Context, prefix, after string, fn func(cas.Info) error) error {
	s.mu.Lock()
	phantom := ""
	if s.phantom != "" && s.phantomList != 0 {
		phantom = s.phantom
		s.phantomList--
	}
	s.mu.Unlock()
	listed := false
	err := s.Store.List(ctx, prefix, after, func(i cas.Info) error {
		if phantom != "" && !listed && i.Key > phantom {
			listed = true
			if err := fn(cas.Info{Key: phantom, Size: 1}); err != nil {
				return err
			}
		}
		return fn(i)
	})
	if err == nil && phantom != "" && !listed && len(phantom) >= len(prefix) && phantom[:len(prefix)] == prefix && phantom > after {
		err = fn(cas.Info{Key: phantom, Size: 1})
	}
	return err
}

// threeSteps returns a store holding steps 1 to 3 of session "run" and
// the session that wrote them.
func threeSteps(t *testing.T) (*mem.Store, *cairn.Session) {
	t.Helper()
	backend := mem.New()
	s, _ := cairn.OpenStore(backend).Session("run")
	for i := 1; i <= 3; i++ {
		if _, err := s.Commit(context.Background(), cairn.JSON(fmt.Appendf(nil, `{"n":%d}`, i)), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return backend, s
}

// TestHeadStillLanding: a head that the store lists before it can be
// read is waited for; one that was listed and then dropped (a killed
// client's put) gives way to the step below it; only a head that stays
// listed and unreadable is an error. Before, the first GET's not found
// was the answer: Head, ReadHead, a resumed commit and Verify all failed
// with "not found" for a session that was fine.
func TestHeadStillLanding(t *testing.T) {
	ctx := context.Background()
	backend, _ := threeSteps(t)
	open := func(st *landingStore) (*cairn.Workspace, *cairn.Session) {
		st.Store = backend
		ws := cairn.OpenStore(st)
		s, err := ws.Session("run")
		if err != nil {
			t.Fatal(err)
		}
		return ws, s
	}

	t.Run("landing", func(t *testing.T) {
		for _, read := range []string{"Head", "ReadHead", "Commit", "Verify"} {
			ws, s := open(&landingStore{key: manifest.StepKey("run", 3), misses: 2})
			var err error
			switch read {
			case "Head":
				var st *cairn.Step
				if st, err = s.Head(ctx); err == nil && st.Number != 3 {
					t.Fatalf("Head = step %d, want 3", st.Number)
				}
			case "ReadHead":
				_, err = ws.ReadHead(ctx, "run")
			case "Commit":
				_, err = s.Commit(ctx, cairn.JSON([]byte(`{"n":4}`)), cairn.CommitOptions{Expect: cairn.ExpectHead(3)})
				if err == nil {
					if err := backend.Delete(ctx, manifest.StepKey("run", 4)); err != nil {
						t.Fatal(err)
					}
				}
			case "Verify":
				var rep *cairn.VerifyReport
				if rep, err = ws.Verify(ctx, "run"); err == nil && len(rep.Problems) > 0 {
					err = rep.Problems[0].Err
				}
			}
			if err != nil {
				t.Errorf("%s of a head still landing: %v", read, err)
			}
		}
	})

	t.Run("dropped", func(t *testing.T) {
		_, s := open(&landingStore{phantom: manifest.StepKey("run", 4), phantomList: 2})
		st, err := s.Head(ctx)
		if err != nil || st.Number != 3 {
			t.Fatalf("Head after a listed step was dropped = %v, %v; want step 3", st, err)
		}
	})

	t.Run("never readable", func(t *testing.T) {
		_, s := open(&landingStore{phantom: manifest.StepKey("run", 4), phantomList: -1})
		_, err := s.Head(ctx)
		if !errors.Is(err, cairn.ErrCorrupt) || strings.Contains(err.Error(), "steps/") {
			t.Fatalf("Head of a step listed but never readable = %v; want ErrCorrupt, in words without store keys", err)
		}
	})
}

// TestPruneDroppedHead: Prune finds the head as the store settles it. A
// step listed once and then dropped (a killed client's put) used to be
// taken as the head, and the base moved past the session's real head.
func TestPruneDroppedHead(t *testing.T) {
	ctx := context.Background()
	backend, _ := threeSteps(t)
	st := &landingStore{Store: backend, phantom: manifest.StepKey("run", 4), phantomList: 1}
	ws := cairn.OpenStore(st)
	if _, err := ws.Prune(ctx, "run", 1); err != nil {
		t.Fatal(err)
	}
	s2, _ := cairn.OpenStore(backend).Session("run")
	h, err := s2.Head(ctx)
	if err != nil || h.Number != 3 {
		t.Fatalf("after prune keeping 1 step, Head = %v, %v; want step 3", h, err)
	}
}

// TestRemoveDroppedHeadFences: Remove fences a writer that holds the old
// head by a tombstone in the slot above the head. Taken from a dropped
// listed head, the tombstone landed one slot too high, and that writer's
// next commit was acknowledged into the removed history, unreadable.
func TestRemoveDroppedHeadFences(t *testing.T) {
	ctx := context.Background()
	backend, s := threeSteps(t)
	st := &landingStore{Store: backend, phantom: manifest.StepKey("run", 4), phantomList: 1}
	if _, err := cairn.OpenStore(st).Remove(ctx, "run"); err != nil {
		t.Fatal(err)
	}
	step, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":4}`)), cairn.CommitOptions{})
	if err == nil {
		s2, _ := cairn.OpenStore(backend).Session("run")
		h, herr := s2.Head(ctx)
		t.Fatalf("commit after Remove acknowledged step %d (want ErrConflict); Head now: %v, %v", step.Number, h, herr)
	}
}
