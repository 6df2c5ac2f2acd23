package cairn_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestClosedWorkspaceRefusesEveryCall: after Close, every method that
// returns an error, of the workspace and of a Session or Step read from
// it before, fails with ErrClosed (an ErrInvalid) saying the workspace
// is closed, makes no request and writes nothing. Close did nothing, so
// a program that used a workspace after closing it never learned.
func TestClosedWorkspaceRefusesEveryCall(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	s, _ := ws.Session("j")
	for i := range 2 {
		if _, err := s.Commit(ctx, cairn.JSON(fmt.Appendf(nil, `{"n":%d}`, i)), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, _ := ws.Session("d")
	dst, err := d.Commit(ctx, cairn.Dir(dir), cairn.CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	head, err := s.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !cairn.SessionHolds(s) {
		t.Fatal("a session that committed holds nothing: nothing to test")
	}
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	if cairn.SessionHolds(s) || cairn.SessionHolds(d) {
		t.Error("after Close a session still holds its head, index or document")
	}
	before := ws.Requests()
	none := func(*cairn.Step) error { return nil }
	calls := map[string]func() error{
		"Workspace.Session":      func() error { _, err := ws.Session("j"); return err },
		"Workspace.SessionNames": func() error { _, err := ws.SessionNames(ctx); return err },
		"Workspace.Resolve":      func() error { _, err := ws.Resolve(ctx, "j@1"); return err },
		"Workspace.EachSession":  func() error { return ws.EachSession(ctx, func(string) error { return nil }) },
		"Workspace.EachHead":     func() error { return ws.EachHead(ctx, "", none) },
		"Workspace.ReadHead":     func() error { _, err := ws.ReadHead(ctx, "j"); return err },
		"Workspace.ReadStep":     func() error { _, err := ws.ReadStep(ctx, "j", 1); return err },
		"Workspace.ForkOrigin":   func() error { _, err := ws.ForkOrigin(ctx, "j"); return err },
		"Workspace.FirstStep":    func() error { _, err := ws.FirstStep(ctx, "j"); return err },
		"Workspace.Fork":         func() error { _, err := ws.Fork(ctx, head, "k"); return err },
		"Workspace.Diff":         func() error { _, err := ws.Diff(ctx, head, head); return err },
		"Workspace.Usage":        func() error { _, err := ws.Usage(ctx); return err },
		"Workspace.Verify":       func() error { _, err := ws.Verify(ctx); return err },
		"Workspace.GC":           func() error { _, err := ws.GC(ctx, cairn.GCOptions{DryRun: true}); return err },
		"Workspace.Prune":        func() error { _, err := ws.Prune(ctx, "j", 1); return err },
		"Workspace.Remove":       func() error { _, err := ws.Remove(ctx, "j"); return err },
		"Workspace.SetLimits":    func() error { return ws.SetLimits(cairn.Limits{}) },
		"Session.Commit": func() error {
			_, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":9}`)), cairn.CommitOptions{})
			return err
		},
		"Session.Head":    func() error { _, err := s.Head(ctx); return err },
		"Session.Step":    func() error { _, err := s.Step(ctx, 1); return err },
		"Session.Log":     func() error { return s.Log(ctx, none) },
		"Step.JSON":       func() error { _, err := head.JSON(ctx); return err },
		"Step.WriteJSON":  func() error { return head.WriteJSON(ctx, io.Discard) },
		"Step.Files":      func() error { _, err := dst.Files(ctx); return err },
		"Step.Checkout":   func() error { return dst.Checkout(ctx, filepath.Join(t.TempDir(), "out")) },
		"Step.ParentStep": func() error { _, err := head.ParentStep(ctx); return err },
		"Step.Log":        func() error { return head.Log(ctx, none) },
	}
	// Every exported method that can fail is in the table: a new one
	// must say what it does after Close.
	for _, v := range []any{ws, s, head} {
		typ := reflect.TypeOf(v)
		for i := range typ.NumMethod() {
			m := typ.Method(i)
			if m.Name == "Close" || m.Type.NumOut() == 0 || m.Type.Out(m.Type.NumOut()-1) != reflect.TypeFor[error]() {
				continue
			}
			name := typ.Elem().Name() + "." + m.Name
			if _, ok := calls[name]; !ok {
				t.Errorf("%s is not tested after Close", name)
			}
		}
	}
	for name, call := range calls {
		err := call()
		if !errors.Is(err, cairn.ErrClosed) || !errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), "the workspace is closed") {
			t.Errorf("%s after Close: %v; want ErrClosed (an ErrInvalid) saying the workspace is closed", name, err)
		}
	}
	if got := ws.Requests(); got != before {
		t.Errorf("calls after Close made requests: %+v, before %+v", got, before)
	}
	if h, err := cairn.OpenStore(store).ReadHead(ctx, "j"); err != nil || h.Number != 2 {
		t.Errorf("head of j after the refused calls: %v, %v; want j@2", h, err)
	}
	if err := ws.Close(); err != nil {
		t.Errorf("Close a second time: %v; want nil", err)
	}
}

// TestCloseConcurrently: Close is idempotent and safe from many
// goroutines at once (run with -race).
func TestCloseConcurrently(t *testing.T) {
	ws := cairn.OpenStore(mem.New())
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := ws.Close(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}

// TestCloseRacingCommits: Close while commits, reads and logs run on
// other goroutines (run with -race). A call in flight ends as it would
// have; every later one fails with ErrClosed, having written nothing:
// each session's head in the store is exactly its last acknowledged
// commit, and every acknowledged step reads back as committed.
func TestCloseRacingCommits(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	const writers = 4
	acked := make([][]string, writers)
	var wg sync.WaitGroup
	started := make(chan struct{}, writers)
	var closed atomic.Bool
	for w := range writers {
		wg.Add(2)
		name := fmt.Sprintf("s%d", w)
		go func() {
			defer wg.Done()
			var once sync.Once
			ready := func() { once.Do(func() { started <- struct{}{} }) }
			defer ready() // even if it fails early: Close must come
			s, err := ws.Session(name)
			if err != nil {
				t.Error(err)
				return
			}
			for i := 0; ; i++ {
				doc := fmt.Sprintf(`{"w":%d,"i":%d,"pad":"%s"}`, w, i, strings.Repeat("x", i%7*100))
				after := closed.Load()
				_, err := s.Commit(ctx, cairn.JSON([]byte(doc)), cairn.CommitOptions{})
				if after && err == nil {
					t.Errorf("commit %s begun after Close returned succeeded", name)
					return
				}
				if err != nil {
					if !errors.Is(err, cairn.ErrClosed) {
						t.Errorf("commit %s racing Close: %v; want success or ErrClosed", name, err)
					}
					return
				}
				acked[w] = append(acked[w], doc)
				if i == 3 {
					ready()
				}
			}
		}()
		go func() {
			defer wg.Done()
			for {
				after := closed.Load()
				st, err := ws.ReadHead(ctx, name)
				if err == nil {
					_, err = st.JSON(ctx)
				}
				if err == nil {
					err = st.Log(ctx, func(*cairn.Step) error { return nil })
				}
				if errors.Is(err, cairn.ErrClosed) {
					return
				}
				if after {
					t.Errorf("read %s begun after Close returned: %v; want ErrClosed", name, err)
					return
				}
				if err != nil && !errors.Is(err, cairn.ErrNotFound) {
					t.Errorf("read %s racing Close: %v", name, err)
					return
				}
			}
		}()
	}
	for range writers {
		<-started
	}
	if err := ws.Close(); err != nil {
		t.Fatal(err)
	}
	closed.Store(true)
	wg.Wait()
	check := cairn.OpenStore(store)
	for w, docs := range acked {
		name := fmt.Sprintf("s%d", w)
		h, err := check.ReadHead(ctx, name)
		if err != nil || h.Number != uint64(len(docs)) {
			t.Fatalf("head of %s: %v, %v; want step %d, its last acknowledged commit", name, h, err, len(docs))
		}
		for n, doc := range docs {
			st, err := check.ReadStep(ctx, name, uint64(n+1))
			if err != nil {
				t.Fatal(err)
			}
			got, err := st.JSON(ctx)
			if err != nil || !bytes.Equal(got, []byte(doc)) {
				t.Fatalf("%s@%d: %s, %v; want %s", name, n+1, got, err, doc)
			}
		}
	}
}

// TestCloseInsideACall: Close called from a callback of a call in flight
// (Log's fn) neither deadlocks nor cuts the call short; calls its
// callback begins afterwards fail with ErrClosed.
func TestCloseInsideACall(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	s, _ := ws.Session("s")
	for i := range 3 {
		if _, err := s.Commit(ctx, cairn.JSON(fmt.Appendf(nil, `{"n":%d}`, i)), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	seen := 0
	err := s.Log(ctx, func(st *cairn.Step) error {
		seen++
		if seen == 1 {
			return ws.Close()
		}
		_, err := st.JSON(ctx)
		return err
	})
	if !errors.Is(err, cairn.ErrClosed) || seen != 2 {
		t.Fatalf("Log whose callback closed the workspace: %v after %d steps; want ErrClosed from the second step's read", err, seen)
	}
	if cairn.SessionHolds(s) {
		t.Error("once the call in flight at Close ended, the session still holds its head")
	}
}
