package castest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cairnlog/cairn/cas"
)

// OneRequestPerCall checks that each Store call costs exactly one
// request to the server: one Put (plain or conditional, won or lost) is
// one PUT, one Get one GET, and so on. A lost conditional create alone
// costs one more: a HEAD of its key, which tells a key another writer
// holds from one a folder stands at (versitygw refuses the create there
// too; see s3compat.NotObject). requests returns how many requests
// the server has been sent so far (count them in the HTTP transport).
// The store must start empty.
func OneRequestPerCall(t *testing.T, s cas.Store, requests func() int64) {
	t.Helper()
	ctx := context.Background()
	calls := []struct {
		name string
		fn   func() error
		want error
	}{
		{"Put", func() error { return s.Put(ctx, "a", []byte("hello"), cas.PutOptions{}) }, nil},
		{"Put IfAbsent (wins)", func() error { return s.Put(ctx, "b", []byte("hi"), cas.PutOptions{IfAbsent: true}) }, nil},
		{"Put IfAbsent (loses)", func() error { return s.Put(ctx, "b", []byte("ho"), cas.PutOptions{IfAbsent: true}) }, cas.ErrExists},
		{"Get", func() error { _, err := s.Get(ctx, "a", 0, -1); return err }, nil},
		{"Get range", func() error { _, err := s.Get(ctx, "a", 1, 2); return err }, nil},
		{"Get past end", func() error {
			b, err := s.Get(ctx, "a", 100, -1)
			if err == nil && len(b) != 0 {
				err = fmt.Errorf("got %d bytes", len(b))
			}
			return err
		}, nil},
		{"Get missing", func() error { _, err := s.Get(ctx, "nope", 0, -1); return err }, cas.ErrNotFound},
		{"Stat", func() error { _, err := s.Stat(ctx, "a"); return err }, nil},
		{"Stat missing", func() error { _, err := s.Stat(ctx, "nope"); return err }, cas.ErrNotFound},
		{"List", func() error { return s.List(ctx, "", "", func(cas.Info) error { return nil }) }, nil},
		{"Delete", func() error { return s.Delete(ctx, "a") }, nil},
	}
	for _, call := range calls {
		before := requests()
		err := call.fn()
		if !errors.Is(err, call.want) || (call.want == nil && err != nil) {
			t.Errorf("%s: %v, want %v", call.name, err, call.want)
		}
		want := int64(1)
		if errors.Is(call.want, cas.ErrExists) {
			want = 2 // the lost create's HEAD
		}
		if got := requests() - before; got != want {
			t.Errorf("%s: %d requests, want exactly %d", call.name, got, want)
		}
	}
}
