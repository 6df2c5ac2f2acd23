package cairn_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/manifest"
)

// landsOnRead is an object store whose first GET of key misses and, while
// it does, lands that key's step: a reader that asks for a step as
// another writer commits it.
type landsOnRead struct {
	cas.Store
	key  string
	land func()
	once sync.Once
}

func (s *landsOnRead) Get(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if key == s.key {
		missed := false
		s.once.Do(func() { missed = true; s.land() })
		if missed {
			return nil, cas.ErrNotFound
		}
	}
	return s.Store.Get(ctx, key, off, n)
}

// TestStepReadWhileItLands: Step(n) read step n's object, missed it, then
// found the head at n or above: a step that landed between those two
// reads (an agent's commit beside a reader watching the session, an MCP
// client's fork of the step its checkpoint was writing) was said to be
// lost, "the store has lost it (cairn verify lists what is missing)". It
// is read again now, and returned.
func TestStepReadWhileItLands(t *testing.T) {
	ctx := context.Background()
	backend, writer := threeSteps(t)
	st := &landsOnRead{Store: backend, key: manifest.StepKey("run", 4), land: func() {
		if _, err := writer.Commit(ctx, cairn.JSON([]byte(`{"n":4}`)), cairn.CommitOptions{Expect: cairn.ExpectHead(3)}); err != nil {
			t.Error(err)
		}
	}}
	s, err := cairn.OpenStore(st).Session("run")
	if err != nil {
		t.Fatal(err)
	}
	step, err := s.Step(ctx, 4)
	if err != nil || step.Number != 4 {
		t.Fatalf("Step(4) while step 4 lands = %v, %v; want step 4", step, err)
	}
	if doc, err := step.JSON(ctx); err != nil || string(doc) != `{"n":4}` {
		t.Fatalf("its state = %s, %v", doc, err)
	}

	// A step that stays missing at or below the head is still damage.
	if err := backend.Delete(ctx, manifest.StepKey("run", 2)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Step(ctx, 2); !errors.Is(err, cairn.ErrNotFound) {
		t.Fatalf("Step(2) of a lost step = %v; want not found", err)
	}
}
