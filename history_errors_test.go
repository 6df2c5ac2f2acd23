package cairn_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// commitSmall commits n small JSON steps to session name.
func commitSmall(t *testing.T, ws *cairn.Workspace, name string, n int) *cairn.Session {
	t.Helper()
	s, err := ws.Session(name)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if _, err := s.Commit(context.Background(), cairn.JSON([]byte(`{"i":`+strconv.Itoa(i)+`}`)), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// noStoreWords fails if msg names a store key or a Go type.
func noStoreWords(t *testing.T, what, msg string) {
	t.Helper()
	for _, bad := range []string{"steps/", "sessions/", "0000000", "*cairn.", "manifest.", "tree."} {
		if strings.Contains(msg, bad) {
			t.Errorf("%s: %q speaks of %q", what, msg, bad)
		}
	}
}

// An --expect that does not hold on a session with no steps speaks of
// the step the commit would have written (s@1) and says the session has
// no steps, not "s@2" and "the head is 0".
func TestExpectOnEmptySessionSaysNoSteps(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	s, _ := ws.Session("s")
	_, err := s.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{Expect: cairn.ExpectHead(1)})
	if !errors.Is(err, cairn.ErrConflict) {
		t.Fatalf("err = %v, want a conflict", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "s@1") || strings.Contains(msg, "s@2") || !strings.Contains(msg, "no steps") {
		t.Errorf("err = %q; want it to speak of s@1 and say the session has no steps", msg)
	}
	commitSmall(t, ws, "t", 3)
	tt, _ := ws.Session("t")
	_, err = tt.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{Expect: cairn.ExpectHead(0)})
	if msg := err.Error(); !strings.Contains(msg, "t@4") || !strings.Contains(msg, "the head is 3") {
		t.Errorf("expect 0 on a head of 3: err = %q; want t@4 and the head is 3", msg)
	}
}
