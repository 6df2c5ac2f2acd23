package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// The Go API refuses a whole JSON document that is not UTF-8, as the CLI,
// the HTTP API and patches do: the first document anywhere, a later one
// in what it changes. Nothing is written, and the next valid commit
// builds on the head as before.
func TestCommitJSONRefusesInvalidUTF8(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	s, _ := ws.Session("s")
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":"`+"\xff"+`"}`)), cairn.CommitOptions{}); !errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), "offset 6") {
		t.Fatalf("first document: %v; want ErrInvalid at offset 6", err)
	}
	long := `{"msgs":["` + strings.Repeat("héllo ", 2000) + `"],"n":1}`
	if _, err := s.Commit(ctx, cairn.JSON([]byte(long)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(long, "héllo", "h\xc3llo", 1)
	bad = strings.Replace(bad, `"n":1`, `"n":2`, 1)
	_, err := s.Commit(ctx, cairn.JSON([]byte(bad)), cairn.CommitOptions{})
	if !errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), "not UTF-8") {
		t.Fatalf("later document: %v; want ErrInvalid saying not UTF-8", err)
	}
	head, err := s.Head(ctx)
	if err != nil || head.Number != 1 {
		t.Fatalf("head after a refused commit: %v, %v", head, err)
	}
	next := strings.Replace(long, `"n":1`, `"n":2`, 1)
	st, err := s.Commit(ctx, cairn.JSON([]byte(next)), cairn.CommitOptions{})
	if err != nil || st.Number != 2 {
		t.Fatalf("valid commit after the refusal: %v, %v", st, err)
	}
	got, err := st.JSON(ctx)
	if err != nil || string(got) != next {
		t.Fatalf("state read back: %v", err)
	}
}
