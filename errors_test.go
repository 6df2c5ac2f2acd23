package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestErrorKinds: every failure a caller can cause or meet is told apart
// with errors.Is and the cairn package alone, whatever layer below
// detected it; the messages stay those of the cause.
func TestErrorKinds(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	s, err := ws.Session("s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":1}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	corrupt := mem.New()
	{
		w := cairn.OpenStore(corrupt)
		c, _ := w.Session("c")
		if _, err := c.Commit(ctx, cairn.JSON([]byte(`{"a":1}`)), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
		key := manifest.StepKey("c", 1)
		b, _ := corrupt.Get(ctx, key, 0, -1)
		b[len(b)/2] ^= 0xff
		if err := corrupt.Put(ctx, key, b, cas.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		err  func() error
		want error
	}{
		{"bad session name", func() error { _, err := ws.Session("../x"); return err }, cairn.ErrInvalid},
		{"bad name to ReadHead", func() error { _, err := ws.ReadHead(ctx, "a/b"); return err }, cairn.ErrInvalid},
		{"bad step reference", func() error { _, err := ws.Resolve(ctx, "s@zero"); return err }, cairn.ErrInvalid},
		{"bad status", func() error { _, err := cairn.ParseStatus("sleeping"); return err }, cairn.ErrInvalid},
		{"bad store url", func() error { _, err := cairn.Open(ctx, "ftp://x"); return err }, cairn.ErrInvalid},
		{"state not JSON", func() error {
			_, err := s.Commit(ctx, cairn.JSON([]byte(`{"a":`)), cairn.CommitOptions{})
			return err
		}, cairn.ErrInvalid},
		{"missing session", func() error { _, err := ws.ReadHead(ctx, "none"); return err }, cairn.ErrNotFound},
		{"missing step", func() error { _, err := s.Step(ctx, 9); return err }, cairn.ErrNotFound},
		{"du of a missing session", func() error { _, err := ws.Usage(ctx, "none"); return err }, cairn.ErrNotFound},
		{"expected head", func() error {
			_, err := s.Commit(ctx, cairn.JSON([]byte(`{}`)), cairn.CommitOptions{Expect: cairn.ExpectHead(7)})
			return err
		}, cairn.ErrConflict},
		{"corrupt step", func() error { _, err := cairn.OpenStore(corrupt).ReadHead(ctx, "c"); return err }, cairn.ErrCorrupt},
		{"object over the limit", func() error {
			w := cairn.OpenStore(store)
			w.SetLimits(cairn.Limits{MaxObjectBytes: 8})
			_, err := w.ReadHead(ctx, "s")
			return err
		}, cairn.ErrLimit},
		{"request the store refused", func() error {
			_, err := cairn.OpenStore(refusingStore{store}).ReadHead(ctx, "s")
			return err
		}, cairn.ErrRefused},
	} {
		err := c.err()
		if !errors.Is(err, c.want) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.want)
			continue
		}
		for _, other := range []error{cairn.ErrNotFound, cairn.ErrConflict, cairn.ErrCorrupt, cairn.ErrInvalid, cairn.ErrLimit, cairn.ErrUnavailable, cairn.ErrRefused} {
			if other != c.want && errors.Is(err, other) {
				t.Errorf("%s: %v is also %v", c.name, err, other)
			}
		}
	}
}

// refusingStore refuses every read, as a store does whose credentials it
// does not accept.
type refusingStore struct{ cas.Store }

func (s refusingStore) Get(ctx context.Context, key string, off, n int64) ([]byte, error) {
	return nil, fmt.Errorf("get %s: %w", key, &cas.RefusedError{Op: "get", Key: key, Why: "access denied", Err: errors.New("403")})
}

func (s refusingStore) List(ctx context.Context, prefix, startAfter string, fn func(cas.Info) error) error {
	return fmt.Errorf("list %s: %w", prefix, &cas.RefusedError{Op: "list", Key: prefix, Why: "access denied", Err: errors.New("403")})
}
