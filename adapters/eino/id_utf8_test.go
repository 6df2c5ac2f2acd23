package eino

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestIDsNotUTF8: a checkpoint id need not be UTF-8 (a Go string holds any
// bytes). Its session name escapes every byte, but the envelope records the
// id as JSON, which turns bad bytes into U+FFFD; the id check on read must
// compare like with like, or the checkpoint, stored fine, can never be
// read back. Short ids and long (hashed) ones alike.
func TestIDsNotUTF8(t *testing.T) {
	ctx := context.Background()
	s := memStore(t)
	for _, id := range []string{"run-\xff", strings.Repeat("\xfe", 70)} {
		want := []byte(`{"id":1}`)
		if err := s.Set(ctx, id, want); err != nil {
			t.Fatalf("Set(%q): %v", id, err)
		}
		got, ok, err := s.Get(ctx, id)
		if err != nil || !ok || !bytes.Equal(got, want) {
			t.Fatalf("Get(%q) = %s, %v, %v; want %s", id, got, ok, err, want)
		}
		if err := s.Delete(ctx, id); err != nil {
			t.Fatalf("Delete(%q): %v", id, err)
		}
		if _, ok, err := s.Get(ctx, id); ok || err != nil {
			t.Fatalf("Get(%q) after Delete: ok=%v err=%v", id, ok, err)
		}
	}
}
