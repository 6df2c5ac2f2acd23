package adk

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"google.golang.org/adk/session"
)

// TestResumeFromStore: a second service over the same directory (a fresh
// process, as far as caches go) sees every event and all scoped state, and
// carries the session on.
func TestResumeFromStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func() *Service { return openDir(t, dir) }
	a := open()
	created, err := a.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s/1 é", State: map[string]any{"k": "v", "app:a": 1.0}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		ev := &session.Event{ID: fmt.Sprint("e", i), Author: "user", Timestamp: time.Unix(int64(i), 0),
			Actions: session.EventActions{StateDelta: map[string]any{"n": float64(i), "temp:x": "gone", "user:u": float64(i)}}}
		if err := a.AppendEvent(ctx, created.Session, ev); err != nil {
			t.Fatal(err)
		}
	}
	// The handed-out session was updated in place, temp: keys included.
	if v, _ := created.Session.State().Get("temp:x"); v != "gone" {
		t.Fatalf("in-place state temp:x = %v", v)
	}
	if n := created.Session.Events().Len(); n != 5 {
		t.Fatalf("in-place events = %d", n)
	}

	b := open()
	got, err := b.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s/1 é"})
	if err != nil {
		t.Fatal(err)
	}
	st := map[string]any{}
	for k, v := range got.Session.State().All() {
		st[k] = v
	}
	if fmt.Sprint(st) != "map[app:a:1 k:v n:4 user:u:4]" {
		t.Fatalf("state = %v", st)
	}
	if n := got.Session.Events().Len(); n != 5 {
		t.Fatalf("events = %d", n)
	}
	if _, ok := got.Session.Events().At(4).Actions.StateDelta["temp:x"]; ok {
		t.Fatal("temp: key stored")
	}
	if err := b.AppendEvent(ctx, got.Session, &session.Event{ID: "e5", Author: "model", Timestamp: time.Unix(5, 0)}); err != nil {
		t.Fatal(err)
	}
	// a's session has not seen e5: appending with it is refused.
	e6 := &session.Event{ID: "e6", Author: "user", Timestamp: time.Unix(6, 0)}
	if err := a.AppendEvent(ctx, created.Session, e6); !errors.Is(err, ErrStaleSession) {
		t.Fatalf("append with a stale session = %v, want ErrStaleSession", err)
	}
	// Got again, it appends; a's cached head is still stale, so the
	// append loses the step slot, re-reads and lands on top.
	again, err := a.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s/1 é"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.AppendEvent(ctx, again.Session, e6); err != nil {
		t.Fatal(err)
	}
	got, err = open().Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s/1 é"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for ev := range got.Session.Events().All() {
		ids = append(ids, ev.ID)
	}
	if strings.Join(ids, ",") != "e0,e1,e2,e3,e4,e5,e6" {
		t.Fatalf("events = %v", ids)
	}
	// Every event is a step, all in the log.
	sess, _ := b.ws.Session(b.SessionName("app", "u", "s/1 é"))
	head, err := sess.Head(ctx)
	if err != nil || head.Number != 8 {
		t.Fatalf("head = %v, %v; want step 8 (create + 7 events)", head, err)
	}
}

// TestConcurrentAppends: two services appending to one session at once
// lose no event and no state change: an append on top of events the
// session it was given has not seen is refused as stale, storing nothing,
// and the writer gets the session again and appends its event to that.
func TestConcurrentAppends(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var svcs []*Service
	for i := 0; i < 2; i++ {
		ws, err := cairn.Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		svcs = append(svcs, New(ws))
	}
	created, err := svcs[0].Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s", State: map[string]any{"count": 0.0}})
	if err != nil {
		t.Fatal(err)
	}
	const per = 10
	var wg sync.WaitGroup
	errs := make(chan error, 2*per)
	for w, svc := range svcs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < per; {
				got, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"})
				if err != nil {
					errs <- err
					return
				}
				n, _ := got.Session.State().Get("count")
				ev := &session.Event{ID: fmt.Sprintf("w%d-%d", w, i), Author: "user",
					Actions: session.EventActions{StateDelta: map[string]any{"count": n.(float64) + 1}}}
				err = svc.AppendEvent(ctx, got.Session, ev)
				if errors.Is(err, ErrStaleSession) {
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				i++
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := svcs[0].Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: created.Session.ID()})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for ev := range got.Session.Events().All() {
		seen[ev.ID] = true
	}
	if len(seen) != 2*per || got.Session.Events().Len() != 2*per {
		t.Fatalf("stored %d events, %d distinct, want %d", got.Session.Events().Len(), len(seen), 2*per)
	}
	if n, _ := got.Session.State().Get("count"); n != float64(2*per) {
		t.Fatalf("count = %v after %d increments", n, 2*per)
	}
}

// TestDeleteAndRecreate: a deleted session is gone for Get, List and
// AppendEvent, and its id can be created again.
func TestDeleteAndRecreate(t *testing.T) {
	ctx := context.Background()
	ws, _ := cairn.Open(ctx, "mem://")
	s := New(ws)
	c, err := s.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "x", State: map[string]any{"k": 1.0}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, &session.DeleteRequest{AppName: "app", UserID: "u", SessionID: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendEvent(ctx, c.Session, &session.Event{ID: "e"}); err == nil {
		t.Fatal("append to a deleted session succeeded")
	}
	if l, _ := s.List(ctx, &session.ListRequest{AppName: "app"}); len(l.Sessions) != 0 {
		t.Fatalf("List after delete = %d sessions", len(l.Sessions))
	}
	c2, err := s.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Session.State().Get("k"); err == nil {
		t.Fatal("recreated session kept the deleted one's state")
	}
	if l, _ := s.List(ctx, &session.ListRequest{AppName: "app", UserID: "u"}); len(l.Sessions) != 1 {
		t.Fatalf("List after recreate = %d sessions", len(l.Sessions))
	}
}

func FuzzDecodeSessionDoc(f *testing.F) {
	for _, seed := range []string{
		`{"adk_session":1,"app":"a","user":"u","id":"s","created":"2026-01-01T00:00:00Z","updated":"2026-01-01T00:00:00Z","state":{"k":"v"},"events":[{"ID":"e","Author":"user"}]}`,
		`{"adk_session":1,"app":"a","user":"u","id":"s","deleted":true,"state":{},"events":[]}`,
		`{"adk_session":2}`,
		`{"adk_session":1,"app":"a","user":"u","id":"s","events":[{"Timestamp":"nope"}]}`,
		`[]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decodeSessionDoc(b)
		if err != nil {
			return
		}
		_, _ = d.decodeState()
		for _, raw := range d.Events {
			_, _ = decodeEvent(raw)
		}
		if _, err := d.encode(); err != nil {
			t.Fatalf("decoded document does not encode: %v", err)
		}
	})
}

func FuzzDecodeScopedDoc(f *testing.F) {
	for _, seed := range []string{`{"adk_state":1,"app":"a","user":"u","state":{"k":1}}`, `{"adk_state":1,"app":"a"}`, `{"adk_state":0}`, `1`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if d, err := decodeScopedDoc(b); err == nil {
			_, _ = decodeValues(d.State)
		}
	})
}

// TestManySessions: the service keeps a bounded number of documents in
// memory and stays correct when it forgets one.
func TestManySessions(t *testing.T) {
	ctx := context.Background()
	ws, _ := cairn.Open(ctx, "mem://")
	s := New(ws)
	n := maxEntries + 20
	var sessions []session.Session
	for i := 0; i < n; i++ {
		c, err := s.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: fmt.Sprint(i)})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, c.Session)
	}
	for i, sess := range sessions {
		if err := s.AppendEvent(ctx, sess, &session.Event{ID: fmt.Sprint("e", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.entries) > maxEntries {
		t.Fatalf("%d documents cached, want <= %d", len(s.entries), maxEntries)
	}
	l, err := s.List(ctx, &session.ListRequest{AppName: "app", UserID: "u"})
	if err != nil || len(l.Sessions) != n {
		t.Fatalf("List = %d sessions, %v; want %d", len(l.Sessions), err, n)
	}
	for i := range sessions {
		got, err := s.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: fmt.Sprint(i)})
		if err != nil || got.Session.Events().Len() != 1 {
			t.Fatalf("session %d: %v", i, err)
		}
	}
}

// openDir returns a new Service over the local store in dir, as a fresh
// process would open it; the workspace closes with the test.
func openDir(t *testing.T, dir string) *Service {
	t.Helper()
	ws, err := cairn.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return New(ws)
}

// memService returns a new Service over an in-memory workspace, and the
// workspace; it closes with the test.
func memService(t *testing.T) (*cairn.Workspace, *Service) {
	t.Helper()
	ws, err := cairn.Open(context.Background(), "mem://")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws, New(ws)
}
