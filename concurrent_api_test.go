package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/fs"
)

// TestOneWinnerPerStep: goroutines committing to one session through
// one shared Session, and through Sessions of several Workspaces over
// the same store, while others read and call the workspaces' setters
// (SetLimits, SetCacheLimit, SetCompactionFanout, UseHeadCache): each
// step has exactly one acknowledged commit, every other commit is
// ErrConflict, and the chain holds each winner's state in order. Run
// with -race: a setter beside reads was a data race.
func TestOneWinnerPerStep(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const (
		workspaces = 3
		writers    = 3 // per workspace; two of them share one Session
		steps      = 40
	)
	var (
		mu     sync.Mutex
		winner = map[uint64]string{} // step number: the state acknowledged there
		wg     sync.WaitGroup
		done   = make(chan struct{})
	)
	wss := make([]*cairn.Workspace, workspaces)
	for i := range wss {
		store, err := fs.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		wss[i] = cairn.OpenStore(store)
		defer wss[i].Close()
	}
	for i, w := range wss {
		shared, err := w.Session("s")
		if err != nil {
			t.Fatal(err)
		}
		for g := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := shared
				if g == writers-1 {
					// A Session of its own: Forget makes Session return
					// a new one.
					w.Forget(shared)
					if s, err = w.Session("s"); err != nil {
						t.Error(err)
						return
					}
				}
				for k := 0; ; k++ {
					var opts cairn.CommitOptions
					if k%2 == 0 {
						h, err := s.Head(ctx)
						switch {
						case errors.Is(err, cairn.ErrNotFound):
							opts.Expect = cairn.ExpectHead(0)
						case err != nil:
							t.Errorf("head: %v", err)
							return
						case h.Number >= steps:
							return
						default:
							opts.Expect = cairn.ExpectHead(h.Number)
						}
					}
					doc := fmt.Sprintf(`{"w":%d,"g":%d,"k":%d}`, i, g, k)
					st, err := s.Commit(ctx, cairn.JSON([]byte(doc)), opts)
					if err != nil {
						if !errors.Is(err, cairn.ErrConflict) {
							t.Errorf("commit: %v; want success or ErrConflict", err)
							return
						}
						continue
					}
					mu.Lock()
					if prev, ok := winner[st.Number]; ok {
						t.Errorf("step %d acknowledged twice: %s and %s", st.Number, prev, doc)
					}
					winner[st.Number] = doc
					mu.Unlock()
					if st.Number >= steps {
						return
					}
				}
			}()
		}
	}
	// Readers and setters beside the writers, until they are done.
	var side sync.WaitGroup
	for i, w := range wss {
		side.Add(2)
		go func() {
			defer side.Done()
			for k := 0; ; k++ {
				select {
				case <-done:
					return
				default:
				}
				if err := w.SetLimits(cairn.Limits{MaxDepth: 64 + k%2}); err != nil {
					t.Errorf("SetLimits: %v", err)
				}
				w.SetCacheLimit(int64(1<<20 + k%2))
				w.SetCompactionFanout(4 + k%2)
				_ = w.Limits()
				_ = w.Requests()
			}
		}()
		go func() {
			defer side.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				h, err := w.ReadHead(ctx, "s")
				if errors.Is(err, cairn.ErrNotFound) {
					continue
				}
				if err == nil {
					_, err = h.JSON(ctx)
				}
				if err == nil {
					err = h.Log(ctx, func(*cairn.Step) error { return nil })
				}
				if err != nil {
					t.Errorf("read through workspace %d: %v", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	side.Wait()

	check := wss[0]
	n := uint64(0)
	err := func() error {
		h, err := check.ReadHead(ctx, "s")
		if err != nil {
			return err
		}
		want := h.Number
		return h.Log(ctx, func(st *cairn.Step) error {
			if st.Number != want {
				return fmt.Errorf("the chain goes to step %d after %d", st.Number, want+1)
			}
			want--
			n++
			doc, err := st.JSON(ctx)
			if err != nil {
				return err
			}
			if string(doc) != winner[st.Number] {
				return fmt.Errorf("%s holds %s; the commit acknowledged there was %s", st, doc, winner[st.Number])
			}
			return nil
		})
	}()
	if err != nil {
		t.Fatal(err)
	}
	if n != uint64(len(winner)) || n < steps {
		t.Errorf("the chain has %d steps, %d commits were acknowledged, want %d or more each", n, len(winner), steps)
	}
	if rep, err := check.Verify(ctx); err != nil || len(rep.Problems) > 0 {
		t.Errorf("verify: %v %+v", err, rep)
	}
}
