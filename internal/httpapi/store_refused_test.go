package httpapi

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
)

// refusingStore refuses every request once refuse is set, as a store
// does whose credentials it no longer accepts (cas.RefusedError, a put
// marked as storing nothing).
type refusingStore struct {
	cas.Store
	refuse atomic.Bool
}

func (s *refusingStore) refusal(op, key string) error {
	re := &cas.RefusedError{Op: op, Key: key, Why: "the credentials were not accepted (check them)", Err: fmt.Errorf("403 InvalidAccessKeyId")}
	if op == "put" {
		return fmt.Errorf("%s %s: %w", op, key, cas.NotStored(re))
	}
	return fmt.Errorf("%s %s: %w", op, key, re)
}

func (s *refusingStore) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	if s.refuse.Load() {
		return s.refusal("put", key)
	}
	return s.Store.Put(ctx, key, data, opts)
}

func (s *refusingStore) Get(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if s.refuse.Load() {
		return nil, s.refusal("get", key)
	}
	return s.Store.Get(ctx, key, off, n)
}

func (s *refusingStore) Stat(ctx context.Context, key string) (cas.Info, error) {
	if s.refuse.Load() {
		return cas.Info{}, s.refusal("stat", key)
	}
	return s.Store.Stat(ctx, key)
}

func (s *refusingStore) List(ctx context.Context, prefix, startAfter string, fn func(cas.Info) error) error {
	if s.refuse.Load() {
		return s.refusal("list", prefix)
	}
	return s.Store.List(ctx, prefix, startAfter, fn)
}

func (s *refusingStore) Delete(ctx context.Context, key string) error {
	if s.refuse.Load() {
		return s.refusal("delete", key)
	}
	return s.Store.Delete(ctx, key)
}

// TestStoreRefusedIsBadGateway: a request the store refused (bad
// credentials, access denied, a bucket that does not exist) was answered
// 500 "internal", which tells a client the server is broken and invites
// blind retries. It is 502 "store_refused" now, on every route, with the
// words that say which store refused, why and what went undone, and no
// Retry-After: the store will answer the same until its configuration
// changes.
func TestStoreRefusedIsBadGateway(t *testing.T) {
	ctx := context.Background()
	store := &refusingStore{Store: memStore()}
	s, _ := cairn.OpenStore(store).Session("s")
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":1}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	store.refuse.Store(true)
	srv := New(cairn.OpenStore(store), Options{PollInterval: 20 * time.Millisecond})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	c := &checker{t: t, spec: loadSpec(t), base: ts.URL, covered: map[string]bool{}}
	for _, r := range []struct{ method, path, body, undone string }{
		{"GET", "/v1/sessions", "", "could not list the sessions"},
		{"GET", "/v1/inbox", "", "could not list the sessions"},
		{"GET", "/v1/diff?a=s@1&b=s", "", "could not read"},
		{"POST", "/v1/sessions/s/steps", `{"state":{"n":2}}`, "the step was not written"},
		{"DELETE", "/v1/sessions/s", "", ""},
		{"GET", "/v1/sessions/s/head", "", "could not read"},
		{"GET", "/v1/sessions/s/steps/1", "", "could not read"},
		{"GET", "/v1/sessions/s/wait?after=1&timeout=1", "", "could not read"},
		{"GET", "/v1/sessions/s/log", "", "could not read"},
		{"POST", "/v1/sessions/s/fork", `{"to":"t"}`, ""},
		{"POST", "/v1/sessions/s/reply", `{"input":"yes"}`, ""},
	} {
		status, b, h := c.send(r.method, r.path, r.body, map[string][]string{"Content-Type": {"application/json"}}, "")
		if status != 502 || !strings.Contains(string(b), `"code":"store_refused"`) ||
			!strings.Contains(string(b), "the store refused the request: the credentials were not accepted (check them)") ||
			!strings.Contains(string(b), r.undone) || h.Get("Retry-After") != "" {
			t.Errorf("%s %s: %d %s (Retry-After %q); want 502 store_refused saying the store refused the request and %q", r.method, r.path, status, b, h.Get("Retry-After"), r.undone)
			continue
		}
		c.check(r.method, r.path, status, b)
	}
}
