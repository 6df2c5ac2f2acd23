package castest

import (
	"context"
	"testing"

	"github.com/cairnlog/cairn/cas"
)

// Damage flips one bit in the middle of the object at key, rewriting it
// in place: the store's damage that every reader must report (a trailer
// or an id no longer matches), never serve.
func Damage(t testing.TB, s cas.Store, key string) {
	t.Helper()
	ctx := context.Background()
	b, err := s.Get(ctx, key, 0, -1)
	if err != nil {
		t.Fatalf("damage %s: %v", key, err)
	}
	b[len(b)/2] ^= 0x40
	if err := s.Delete(ctx, key); err != nil {
		t.Fatalf("damage %s: %v", key, err)
	}
	if err := s.Put(ctx, key, b, cas.PutOptions{}); err != nil {
		t.Fatalf("damage %s: %v", key, err)
	}
}
