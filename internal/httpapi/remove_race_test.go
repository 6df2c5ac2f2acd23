package httpapi

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/manifest"
)

// beforeStepPut runs hook once, just before the first put of key (a
// commit's step: after the commit read its head, before its write), and
// closes fenced when another put of fence (a removal's tombstone)
// returns.
type beforeStepPut struct {
	cas.Store
	mu         sync.Mutex
	key, fence string
	hooked     bool
	hook       func()
	fenced     chan struct{}
}

func (s *beforeStepPut) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	s.mu.Lock()
	first := key == s.key && s.hook != nil && !s.hooked
	s.hooked = s.hooked || first
	hook, fence := s.hook, key == s.fence && !first
	s.mu.Unlock()
	if first {
		hook()
	}
	err := s.Store.Put(ctx, key, data, opts)
	if fence {
		close(s.fenced)
	}
	return err
}

// TestCommitRacingRemoveSaysRemoved: a DELETE of a session that lands
// between a commit's read of the head and its write of the next step
// must answer the commit with a 409 saying the session was removed, not
// one about a conflict with another writer. It did say so when the
// tombstone took the commit's slot; but when this server's view of the
// head was one behind (another process had committed the step the
// commit wanted, then the session was removed above it), the answer was
// "another writer already wrote this step", though retrying could only
// meet the removal.
func TestCommitRacingRemoveSaysRemoved(t *testing.T) {
	store := &beforeStepPut{Store: memStore()}
	ws := cairn.OpenStore(store)
	srv := New(ws, Options{})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	c := &checker{t: t, spec: loadSpec(t), base: ts.URL, covered: map[string]bool{}}
	// another process, writing past the hook.
	other := cairn.OpenStore(store.Store)
	commitOther := func(name, doc string) {
		sess, _ := other.Session(name)
		if _, err := sess.Commit(context.Background(), cairn.JSON([]byte(doc)), cairn.CommitOptions{}); err != nil {
			t.Error(err)
		}
	}
	for _, tc := range []struct {
		name, body string
		fresh      bool // step 1 is another process's: the server reads the head at the commit
		behind     bool // another process commits step 2 before the removal
	}{
		{name: "s", body: `{"state":{"n":2}}`},
		{name: "t", body: `{"state":{"n":2},"expect":1}`},
		{name: "u", body: `{"state":{"n":2}}`, fresh: true},
		{name: "v", body: `{"patch":[{"op":"add","path":"/m","value":1}]}`, fresh: true},
		{name: "w", body: `{"state":{"n":2}}`, behind: true},
		{name: "x", body: `{"patch":[{"op":"add","path":"/m","value":1}]}`, behind: true},
	} {
		if tc.fresh {
			commitOther(tc.name, `{"n":1}`)
		} else {
			c.do("POST", "/v1/sessions/"+tc.name+"/steps", `{"state":{"n":1}}`, 201)
		}
		fence := manifest.StepKey(tc.name, 2)
		if tc.behind {
			fence = manifest.StepKey(tc.name, 3)
		}
		deleted := make(chan int, 1)
		store.mu.Lock()
		store.key, store.fence, store.hooked, store.fenced = manifest.StepKey(tc.name, 2), fence, false, make(chan struct{})
		store.hook = func() {
			if tc.behind {
				commitOther(tc.name, `{"n":"other"}`)
			}
			// The DELETE runs beside the commit: it waits for the
			// commit's session only after its tombstone is down.
			go func() {
				status, _ := c.raw("DELETE", "/v1/sessions/"+tc.name, "", "", "")
				deleted <- status
			}()
			<-store.fenced
		}
		store.mu.Unlock()
		status, b := c.raw("POST", "/v1/sessions/"+tc.name+"/steps", tc.body, "", "")
		if d := <-deleted; d != 200 {
			t.Fatalf("%s: DELETE during the commit: %d", tc.name, d)
		}
		got := c.check("POST", "/v1/sessions/"+tc.name+"/steps", status, b)
		msg, _ := got["error"].(string)
		if status != 409 || !strings.Contains(msg, "the session was removed") || strings.Contains(msg, "another writer") {
			t.Errorf("commit %s %s racing a DELETE: %d %s; want a 409 saying the session was removed", tc.name, tc.body, status, b)
		}
	}
}
