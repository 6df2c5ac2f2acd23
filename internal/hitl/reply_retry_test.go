package hitl

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/cas/metered"
)

// asked returns a session whose head, step 2, asks a question.
func asked(t *testing.T, ws *cairn.Workspace) *cairn.Session {
	t.Helper()
	s, _ := ws.Session("s")
	if _, err := s.Commit(t.Context(), cairn.JSON([]byte(`{"plan":"a"}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Ask(t.Context(), s, "deploy?", nil); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRetriedReplyLandsOnce: a reply sent again with its idempotency
// key, by the same Session or another process, after its first try
// landed (its answer lost), is answered with the step that try wrote,
// marked Replayed, instead of "does not await input"; so is one fenced
// on the question after the agent has moved on. The same key with
// another answer is ErrKeyUsed, and without a key a second reply is
// refused as before.
func TestRetriedReplyLandsOnce(t *testing.T) {
	ctx := t.Context()
	store := mem.New()
	s := asked(t, cairn.OpenStore(store))
	q := uint64(2)
	first, err := ReplyWith(ctx, s, json.RawMessage(`{"ok":true}`), ReplyOptions{Question: &q, IdempotencyKey: "human-1"})
	if err != nil || first.Number != 3 || first.Replayed || first.IdempotencyKey != "human-1" {
		t.Fatalf("first reply = %v, %v", first, err)
	}
	for _, opts := range []ReplyOptions{{IdempotencyKey: "human-1"}, {Question: &q, IdempotencyKey: "human-1"}} {
		for name, s := range map[string]*cairn.Session{"same session": s, "new process": session(t, store)} {
			again, err := ReplyWith(ctx, s, json.RawMessage(`{"ok":true}`), opts)
			if err != nil || again.Number != 3 || !again.Replayed || again.ID != first.ID {
				t.Fatalf("%s, question %v: retry = %v, %v; want step 3 replayed", name, opts.Question != nil, again, err)
			}
		}
	}
	if _, err := ReplyWith(ctx, session(t, store), json.RawMessage(`{"ok":false}`), ReplyOptions{IdempotencyKey: "human-1"}); !errors.Is(err, cairn.ErrKeyUsed) {
		t.Fatalf("the key with another answer: %v; want ErrKeyUsed", err)
	}
	if _, err := Reply(ctx, session(t, store), json.RawMessage(`{"ok":true}`)); !errors.Is(err, ErrNotAwaiting) {
		t.Fatalf("a second reply without a key: %v; want ErrNotAwaiting", err)
	}
	// The agent read the reply and went on: the retry, fenced on the
	// question, still finds its answer (one read more, on this path).
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"plan":"b"}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	again, err := ReplyWith(ctx, session(t, store), json.RawMessage(`{"ok":true}`), ReplyOptions{Question: &q, IdempotencyKey: "human-1"})
	if err != nil || again.Number != 3 || !again.Replayed {
		t.Fatalf("retry after the agent went on = %v, %v; want step 3 replayed", again, err)
	}
	if _, err := ReplyWith(ctx, session(t, store), json.RawMessage(`{"ok":true}`), ReplyOptions{IdempotencyKey: "human-1"}); !errors.Is(err, ErrNotAwaiting) {
		t.Fatalf("retry after the agent went on, not fenced on the question: %v; want ErrNotAwaiting (keys are compared with the head only)", err)
	}
	if got := headNumber(t, store); got != 4 {
		t.Fatalf("head = %d; want 4: no reply written twice", got)
	}
}

// TestReplyKeyOnAnotherStep: a reply whose key the head holds, but that
// was a commit on a head asking nothing, is the key's conflict, not a
// question that is missing.
func TestReplyKeyOnAnotherStep(t *testing.T) {
	ctx := t.Context()
	store := mem.New()
	s, _ := cairn.OpenStore(store).Session("s")
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":1}`)), cairn.CommitOptions{IdempotencyKey: "k"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReplyWith(ctx, session(t, store), json.RawMessage(`1`), ReplyOptions{IdempotencyKey: "k"}); !errors.Is(err, cairn.ErrKeyUsed) {
		t.Fatalf("reply with the key of a plain step: %v; want ErrKeyUsed", err)
	}
	if got := headNumber(t, store); got != 2 {
		t.Fatalf("head = %d; want 2", got)
	}
}

// TestReplyKeyCostsNothing: a reply with a key makes the requests one
// without makes.
func TestReplyKeyCostsNothing(t *testing.T) {
	ctx := t.Context()
	counts := map[string]metered.Counts{}
	for _, key := range []string{"", "human-1"} {
		store := metered.New(mem.New())
		s := asked(t, cairn.OpenStore(store))
		before := store.Counts()
		if _, err := ReplyWith(ctx, s, json.RawMessage(`1`), ReplyOptions{IdempotencyKey: key}); err != nil {
			t.Fatal(err)
		}
		c := store.Counts().Sub(before)
		c.BytesWritten, c.BytesRead = 0, 0 // the key itself is stored
		counts[key] = c
		if key != "" {
			// A retry, as another process: what finding its try costs.
			before = store.Counts()
			st, err := ReplyWith(ctx, session(t, store), json.RawMessage(`1`), ReplyOptions{IdempotencyKey: key})
			if err != nil || !st.Replayed {
				t.Fatalf("retry = %v, %v", st, err)
			}
			t.Logf("a retried reply's requests: %+v", store.Counts().Sub(before))
		}
	}
	t.Logf("a reply's requests: without a key %+v, with one %+v", counts[""], counts["human-1"])
	if counts[""] != counts["human-1"] {
		t.Fatalf("requests without a key %v, with one %v", counts[""], counts["human-1"])
	}
}

// session opens session s through a workspace of its own, as another
// process would.
func session(t *testing.T, store cas.Store) *cairn.Session {
	t.Helper()
	s, err := cairn.OpenStore(store).Session("s")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func headNumber(t *testing.T, store cas.Store) uint64 {
	t.Helper()
	st, err := session(t, store).Head(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return st.Number
}
