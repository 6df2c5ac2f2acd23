package cairn_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// lostAnswer lets the step put of one slot land, then answers it with a
// reset connection, once: the response a worker never heard.
type lostAnswer struct {
	cas.Store
	key  string
	mu   sync.Mutex
	done bool
}

func (s *lostAnswer) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	if err := s.Store.Put(ctx, key, data, opts); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if key == s.key && !s.done {
		s.done = true
		return errDown
	}
	return nil
}

// headNumber returns the number of the session's head, read through a
// workspace of its own.
func headNumber(t *testing.T, store cas.Store, session string) uint64 {
	t.Helper()
	s, err := cairn.OpenStore(store).Session(session)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Head(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.Number
}

// TestRetriedCommitLandsOnce: a commit whose step landed but whose answer
// was lost is ErrMaybeWritten; its retry with the same idempotency key,
// by the same Session, by a new process, or with Expect of the head the
// first try saw, answers with that step, marked Replayed, and writes no
// second one. JSON documents, patches and appends alike: a retried patch
// is not applied twice.
func TestRetriedCommitLandsOnce(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		state cairn.State
	}{
		{"document", cairn.JSON([]byte(`{"n":2}`))},
		{"patch", cairn.Patch([]byte(`[{"op":"add","path":"/m/-","value":"two"}]`))},
	} {
		for _, retry := range []string{"same session", "new process", "expect"} {
			t.Run(c.name+"/"+retry, func(t *testing.T) {
				store := &lostAnswer{Store: mem.New(), key: manifest.StepKey("run", 2)}
				s, _ := cairn.OpenStore(store).Session("run")
				if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":1,"m":["one"]}`)), cairn.CommitOptions{IdempotencyKey: "step-1"}); err != nil {
					t.Fatal(err)
				}
				opts := cairn.CommitOptions{Record: []byte(`{"role":"tool"}`), IdempotencyKey: "job-7/step-2"}
				_, err := s.Commit(ctx, c.state, opts)
				if !errors.Is(err, cairn.ErrMaybeWritten) {
					t.Fatalf("first try: %v, want ErrMaybeWritten", err)
				}
				switch retry {
				case "new process":
					s, _ = cairn.OpenStore(store).Session("run")
				case "expect":
					s, _ = cairn.OpenStore(store).Session("run")
					opts.Expect = cairn.ExpectHead(1)
				}
				st, err := s.Commit(ctx, c.state, opts)
				if err != nil {
					t.Fatalf("retry: %v", err)
				}
				if !st.Replayed || st.Number != 2 || st.IdempotencyKey != "job-7/step-2" {
					t.Errorf("retry answered step %d, replayed %v, key %q; want step 2, replayed, its key", st.Number, st.Replayed, st.IdempotencyKey)
				}
				if n := headNumber(t, store, "run"); n != 2 {
					t.Errorf("after the retry the head is step %d, want 2: the step landed twice", n)
				}
				if doc, err := st.JSON(ctx); err != nil || c.name == "patch" && string(doc) != `{"n":1,"m":["one","two"]}` {
					t.Errorf("replayed step's state %s, %v", doc, err)
				}
				// The session goes on from the replayed step.
				next, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":3}`)), cairn.CommitOptions{IdempotencyKey: "job-7/step-3"})
				if err != nil || next.Number != 3 || next.Replayed {
					t.Fatalf("next commit: %v, %+v", err, next)
				}
				if next.Parent == nil || next.Parent.ID != st.ID.String() {
					t.Errorf("next step's parent %v, want the replayed step %s", next.Parent, st.ID)
				}
			})
		}
	}
}

// TestRetryMeetsItsStepInTheSlot: a writer that still holds the head
// before its earlier try (another workspace acknowledged the try; this
// one retries it from its own stale view) loses the slot to that try and
// is answered with it, not with a conflict.
func TestRetryMeetsItsStepInTheSlot(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	a, _ := cairn.OpenStore(store).Session("run")
	b, _ := cairn.OpenStore(store).Session("run")
	if _, err := a.Commit(ctx, cairn.JSON([]byte(`{"n":1}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Head(ctx); err != nil { // b holds step 1
		t.Fatal(err)
	}
	opts := cairn.CommitOptions{IdempotencyKey: "k2", Status: cairn.AwaitingInput}
	first, err := a.Commit(ctx, cairn.JSON([]byte(`{"n":2}`)), opts)
	if err != nil {
		t.Fatal(err)
	}
	st, err := b.Commit(ctx, cairn.JSON([]byte(`{"n":2}`)), opts)
	if err != nil {
		t.Fatalf("retry from the stale head: %v", err)
	}
	if !st.Replayed || st.ID != first.ID || st.Status != cairn.AwaitingInput {
		t.Errorf("retry answered %+v; want step 2 (%s) replayed", st, first.ID)
	}
	if n := headNumber(t, store, "run"); n != 2 {
		t.Errorf("head is step %d, want 2", n)
	}
}

// TestIdempotencyKeyUsedForAnotherStep: the key of the head (or of the
// step in the slot the commit lost) given with another state, record,
// status or parent is ErrKeyUsed, in words, and writes nothing.
func TestIdempotencyKeyUsedForAnotherStep(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		state string
		opts  cairn.CommitOptions
	}{
		{"another state", `{"n":3}`, cairn.CommitOptions{}},
		{"another record", `{"n":2}`, cairn.CommitOptions{Record: []byte(`{"x":1}`)}},
		{"another status", `{"n":2}`, cairn.CommitOptions{Status: cairn.Done}},
		{"on top of it", `{"n":2}`, cairn.CommitOptions{Expect: cairn.ExpectHead(2)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := mem.New()
			s, _ := cairn.OpenStore(store).Session("run")
			for i, doc := range []string{`{"n":1}`, `{"n":2}`} {
				key := []string{"k1", "k2"}[i]
				if _, err := s.Commit(ctx, cairn.JSON([]byte(doc)), cairn.CommitOptions{IdempotencyKey: key}); err != nil {
					t.Fatal(err)
				}
			}
			c.opts.IdempotencyKey = "k2"
			_, err := s.Commit(ctx, cairn.JSON([]byte(c.state)), c.opts)
			if !errors.Is(err, cairn.ErrKeyUsed) || !errors.Is(err, cairn.ErrConflict) {
				t.Fatalf("commit reusing the head's key: %v, want ErrKeyUsed", err)
			}
			if msg := err.Error(); !strings.Contains(msg, `idempotency key "k2" was already used for step 2`) {
				t.Errorf("error %q does not say the key was used for step 2", msg)
			}
			if n := headNumber(t, store, "run"); n != 2 {
				t.Errorf("head is step %d, want 2: the refused commit wrote", n)
			}
		})
	}
}

// TestExpectFencesOtherKeys: two workers racing for the step after head
// 1, each with its own key, fence each other exactly as without keys:
// one step lands, the other gets a plain conflict (not a replay, not
// ErrKeyUsed), and its retry with its own key still conflicts.
func TestExpectFencesOtherKeys(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	s, _ := cairn.OpenStore(store).Session("run")
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":1}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	workers := make([]*cairn.Session, 2)
	for i := range workers {
		workers[i], _ = cairn.OpenStore(store).Session("run")
		if _, err := workers[i].Head(ctx); err != nil {
			t.Fatal(err)
		}
	}
	keys := []string{"worker-a", "worker-b"}
	errs := make([]error, 2)
	steps := make([]*cairn.Step, 2)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			steps[i], errs[i] = workers[i].Commit(ctx, cairn.JSON([]byte(`{"n":2}`)),
				cairn.CommitOptions{Expect: cairn.ExpectHead(1), IdempotencyKey: keys[i]})
		}()
	}
	wg.Wait()
	won := 0
	if errs[0] != nil {
		won = 1
	}
	lost := 1 - won
	if errs[won] != nil || steps[won].Replayed || steps[won].Number != 2 {
		t.Fatalf("winner: %v %+v", errs[won], steps[won])
	}
	if !errors.Is(errs[lost], cairn.ErrConflict) || errors.Is(errs[lost], cairn.ErrKeyUsed) {
		t.Fatalf("loser: %v, want a plain conflict", errs[lost])
	}
	_, err := workers[lost].Commit(ctx, cairn.JSON([]byte(`{"n":2}`)), cairn.CommitOptions{Expect: cairn.ExpectHead(1), IdempotencyKey: keys[lost]})
	if !errors.Is(err, cairn.ErrConflict) || errors.Is(err, cairn.ErrKeyUsed) {
		t.Fatalf("loser's retry: %v, want a plain conflict", err)
	}
	head, _ := workers[lost].Head(ctx)
	if head.Number != 2 || head.IdempotencyKey != keys[won] {
		t.Errorf("head is step %d with key %q, want step 2 with %q", head.Number, head.IdempotencyKey, keys[won])
	}
}

// TestExpectRetryAfterOthersBuiltOn: an earlier try landed at step 2 and
// another writer built step 3 on it before the retry: the retry, which
// expects head 1, is answered with step 2 (one GET of step 2, on the
// refusal path) rather than a conflict over a step that is its own; the
// session's next commit goes on from the head, step 3.
func TestExpectRetryAfterOthersBuiltOn(t *testing.T) {
	ctx := context.Background()
	store := &lostAnswer{Store: mem.New(), key: manifest.StepKey("run", 2)}
	s, _ := cairn.OpenStore(store).Session("run")
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":1}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	opts := cairn.CommitOptions{Expect: cairn.ExpectHead(1), IdempotencyKey: "k2"}
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":2}`)), opts); !errors.Is(err, cairn.ErrMaybeWritten) {
		t.Fatalf("first try: %v", err)
	}
	other, _ := cairn.OpenStore(store).Session("run")
	if _, err := other.Commit(ctx, cairn.JSON([]byte(`{"n":3}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":2}`)), opts)
	if err != nil || !st.Replayed || st.Number != 2 {
		t.Fatalf("retry: %v, %+v; want step 2 replayed", err, st)
	}
	if n := headNumber(t, store, "run"); n != 3 {
		t.Errorf("head is step %d, want 3", n)
	}
	// The session goes on from the head, not from the replayed step.
	if next, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":4}`)), cairn.CommitOptions{}); err != nil || next.Number != 4 {
		t.Fatalf("next commit: %v, %+v; want step 4", err, next)
	}
	opts.Expect = cairn.ExpectHead(1)
	// Another key there is the conflict it always was.
	opts.IdempotencyKey = "k2-other"
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":2}`)), opts); !errors.Is(err, cairn.ErrConflict) || errors.Is(err, cairn.ErrKeyUsed) {
		t.Errorf("another key expecting head 1: %v, want a plain conflict", err)
	}
}

// TestIdempotencyKeyCostsNothing: a commit with a key, through a live
// session, is one PUT with no GET or LIST, as without one.
func TestIdempotencyKeyCostsNothing(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	s, _ := ws.Session("run")
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":1}`)), cairn.CommitOptions{IdempotencyKey: "k1"}); err != nil {
		t.Fatal(err)
	}
	for i, key := range []string{"", "k3"} {
		before := ws.Requests()
		if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":`+string(rune('2'+i))+`}`)), cairn.CommitOptions{IdempotencyKey: key}); err != nil {
			t.Fatal(err)
		}
		if got := ws.Requests().Sub(before); got.Put != 1 || got.Get != 0 || got.List != 0 {
			t.Errorf("commit with key %q: %+v, want 1 PUT, 0 GET, 0 LIST", key, got)
		}
	}
}

// TestIdempotencyKeyChecked: a key that is empty-looking, too long or
// not printable ASCII is refused before anything is read or written,
// saying what a key may be.
func TestIdempotencyKeyChecked(t *testing.T) {
	ctx := context.Background()
	s, _ := cairn.OpenStore(mem.New()).Session("run")
	for _, key := range []string{"a b", strings.Repeat("k", 129), "é", "tab\tkey", "nl\n"} {
		_, err := s.Commit(ctx, cairn.JSON([]byte(`1`)), cairn.CommitOptions{IdempotencyKey: key})
		if !errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), "idempotency key") || !strings.Contains(err.Error(), "printable ASCII") {
			t.Errorf("key %q: %v, want ErrInvalid saying what a key may be", key, err)
		}
	}
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`1`)), cairn.CommitOptions{IdempotencyKey: strings.Repeat("k", 128)}); err != nil {
		t.Errorf("a 128-byte key: %v", err)
	}
}
