package eino

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestForkToHashedID: the first step of a fork into an id named by its
// hash records the id it was forked from; GetStep reads it (as it does
// for a plain id) instead of refusing it as another checkpoint's session.
func TestForkToHashedID(t *testing.T) {
	ctx := context.Background()
	s := memStore(t)
	to := strings.Repeat("long-id.", 20)
	if !s.hashed(to) {
		t.Fatalf("%q is not named by its hash", to)
	}
	for _, v := range []string{`{"n":1}`, `{"n":2}`, `{"n":3}`} {
		if err := s.Set(ctx, "run", []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Fork(ctx, "run", 2, to); err != nil {
		t.Fatal(err)
	}
	steps, err := s.Steps(ctx, to)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, st := range steps {
		if st.Session != s.SessionName(to) {
			continue
		}
		n++
		got, ok, err := s.GetStep(ctx, to, st.Number)
		if err != nil || !ok || !bytes.Equal(got, []byte(`{"n":2}`)) {
			t.Errorf("GetStep(%d) of the fork = %s, %v, %v; want {\"n\":2}", st.Number, got, ok, err)
		}
	}
	if n != 2 {
		t.Fatalf("the fork has %d steps of its own, want 2 (the copy and the step recording its id)", n)
	}
}
