package cairn_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestKeyOnStepOfAnotherKind: a reply whose idempotency key the head
// holds, written by a plain commit, is the key's conflict (ErrKeyUsed),
// not "nothing to reply to": the step holding the key is no earlier
// try of it. So is a plain commit whose key a reply holds.
func TestKeyOnStepOfAnotherKind(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	s, _ := cairn.OpenStore(store).Session("s")
	st, err := s.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(ctx, cairn.StateOf(st), cairn.CommitOptions{Status: cairn.AwaitingInput}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{Reply: true, IdempotencyKey: "k"}); err != nil {
		t.Fatal(err)
	}
	other, _ := cairn.OpenStore(store).Session("s")
	if _, err := other.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{IdempotencyKey: "k"}); !errors.Is(err, cairn.ErrKeyUsed) {
		t.Fatalf("a plain commit with a reply's key: %v; want ErrKeyUsed", err)
	}
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":1}`)), cairn.CommitOptions{IdempotencyKey: "j"}); err != nil {
		t.Fatal(err)
	}
	other, _ = cairn.OpenStore(store).Session("s")
	if _, err := other.Commit(ctx, cairn.JSON([]byte(`{"a":1}`)), cairn.CommitOptions{Reply: true, IdempotencyKey: "j"}); !errors.Is(err, cairn.ErrKeyUsed) {
		t.Fatalf("a reply with a plain commit's key: %v; want ErrKeyUsed", err)
	}
}
