package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestWithdrawWithNoQuestion: CommitOptions{Withdraw: true} on a head
// that asks no question withdraws nothing: almost always the caller's
// mistake (the wrong session, or someone answered first). It is refused
// as a conflict naming the session and the step, not ErrAwaitingInput,
// and nothing is written. A withdrawal retried after its first put
// landed says the question was already answered or withdrawn, so the
// caller is not told its withdrawal failed.
func TestWithdrawWithNoQuestion(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	s, _ := ws.Session("pr-7")
	withdraw := cairn.CommitOptions{Withdraw: true}

	_, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":0}`)), withdraw)
	if !errors.Is(err, cairn.ErrConflict) || errors.Is(err, cairn.ErrAwaitingInput) || !strings.Contains(err.Error(), "session pr-7 has no steps") || !strings.Contains(err.Error(), "nothing to withdraw") {
		t.Fatalf("withdraw on a session with no steps: %v; want a conflict saying there is nothing to withdraw", err)
	}
	for i := range 4 {
		if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":1}`)), cairn.CommitOptions{}); err != nil {
			t.Fatal(i, err)
		}
	}
	_, err = s.Commit(ctx, cairn.JSON([]byte(`{"a":2}`)), withdraw)
	if !errors.Is(err, cairn.ErrNotAwaiting) || !errors.Is(err, cairn.ErrConflict) || errors.Is(err, cairn.ErrAwaitingInput) || !strings.Contains(err.Error(), "step 4 of session pr-7 asks no question; nothing to withdraw") {
		t.Fatalf("withdraw on a head that asks nothing: %v; want a conflict naming step 4 of pr-7", err)
	}
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":2}`)), cairn.CommitOptions{Reply: true}); !errors.Is(err, cairn.ErrNotAwaiting) {
		t.Fatalf("reply on a head that asks nothing: %v; want ErrNotAwaiting, as a withdrawal gets", err)
	}
	if h, err := cairn.OpenStore(store).ReadHead(ctx, "pr-7"); err != nil || h.Number != 4 {
		t.Fatalf("head after the refused withdrawal: %v, %v; want pr-7@4", h, err)
	}

	// A question, withdrawn: fine. The same withdrawal again (a retry
	// of one whose put was acknowledged, its answer lost) is refused in
	// words that say the question is already gone.
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":3}`)), cairn.CommitOptions{Status: cairn.AwaitingInput, Record: []byte(`{"question":"ship it?"}`)}); err != nil {
		t.Fatal(err)
	}
	if st, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":4}`)), withdraw); err != nil || st.Number != 6 {
		t.Fatalf("withdraw of the question at step 5: %v, %v", st, err)
	}
	retry, _ := cairn.OpenStore(store).Session("pr-7")
	_, err = retry.Commit(ctx, cairn.JSON([]byte(`{"a":4}`)), withdraw)
	if !errors.Is(err, cairn.ErrConflict) || !strings.Contains(err.Error(), "step 6 of session pr-7 asks no question") || !strings.Contains(err.Error(), "step 5 was already answered or withdrawn by step 6") {
		t.Fatalf("a retried withdrawal: %v; want a conflict saying step 5's question was already answered or withdrawn", err)
	}
	// With Expect naming the question's step, the retry says the head moved.
	_, err = retry.Commit(ctx, cairn.JSON([]byte(`{"a":4}`)), cairn.CommitOptions{Withdraw: true, Expect: cairn.ExpectHead(5)})
	if !errors.Is(err, cairn.ErrConflict) || !strings.Contains(err.Error(), "expected head 5, but the head is 6") {
		t.Fatalf("a retried withdrawal expecting head 5: %v", err)
	}
	if h, err := cairn.OpenStore(store).ReadHead(ctx, "pr-7"); err != nil || h.Number != 6 {
		t.Fatalf("head after the refused retries: %v, %v; want pr-7@6", h, err)
	}
}

// TestReplyAndWithdrawTogether: a commit that says it both answers and
// withdraws the question is contradictory input: refused as ErrInvalid
// before anything is read or written, whatever the head.
func TestReplyAndWithdrawTogether(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	s, _ := ws.Session("pr-7")
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":1}`)), cairn.CommitOptions{Status: cairn.AwaitingInput}); err != nil {
		t.Fatal(err)
	}
	before := ws.Requests()
	_, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":2}`)), cairn.CommitOptions{Reply: true, Withdraw: true})
	if !errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), "Reply and Withdraw") {
		t.Fatalf("commit with Reply and Withdraw: %v; want ErrInvalid naming both", err)
	}
	if got := ws.Requests(); got != before {
		t.Errorf("the refused commit made requests: %+v, before %+v", got, before)
	}
	if h, err := cairn.OpenStore(store).ReadHead(ctx, "pr-7"); err != nil || h.Number != 1 {
		t.Fatalf("head after the refused commit: %v, %v; want pr-7@1", h, err)
	}
}
