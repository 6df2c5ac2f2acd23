package hitl

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestReplyTooDeepSaidOfTheInput: a reply nested deeper than its step's
// record may hold it is bad input (cairn.ErrInvalid: HTTP 400) said of
// the input, with nothing written. It was said in the terms of the
// record it is stored in ("commit s: step record: nested too deep: …
// at offset 520", the input's offset 511), through the HTTP API as
// through the CLI.
func TestReplyTooDeepSaidOfTheInput(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	s, err := ws.Session("s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{Status: cairn.AwaitingInput}); err != nil {
		t.Fatal(err)
	}
	deep := func(levels int) json.RawMessage {
		return json.RawMessage(strings.Repeat("[", levels) + strings.Repeat("]", levels))
	}
	_, err = Reply(ctx, s, deep(MaxInputDepth+1))
	want := "reply to s: input is nested too deep: more than 511 levels at offset 511"
	if !errors.Is(err, cairn.ErrInvalid) || err == nil || err.Error() != want {
		t.Fatalf("reply of %d levels: %v; want ErrInvalid, %q", MaxInputDepth+1, err, want)
	}
	st, err := Reply(ctx, s, deep(MaxInputDepth))
	if err != nil || st.Number != 2 {
		t.Fatalf("reply of %d levels: %v, %v; want step 2", MaxInputDepth, st, err)
	}
}
