package cairn_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/fs"
	"github.com/cairnlog/cairn/internal/workload"
	"github.com/cairnlog/cairn/manifest"
)

// gateStore holds the first request that match picks until its context
// is done, telling entered when it holds it, so that a test cancels a
// call in the middle of its work, at a known request, with no timing.
// A put it holds is stored first if land is set (an answer lost), else
// not (a request given up on).
type gateStore struct {
	cas.Store
	match   func(op, key string) bool
	land    bool
	entered chan struct{}
	once    sync.Once
}

func (g *gateStore) hold(ctx context.Context, op, key string) bool {
	if !g.match(op, key) {
		return false
	}
	held := false
	g.once.Do(func() { held = true })
	if held {
		close(g.entered)
		<-ctx.Done()
	}
	return held
}

func (g *gateStore) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	if g.match("put", key) && g.land {
		if err := g.Store.Put(ctx, key, data, opts); err != nil {
			return err
		}
	}
	if g.hold(ctx, "put", key) {
		return ctx.Err()
	}
	return g.Store.Put(ctx, key, data, opts)
}

func (g *gateStore) Get(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if g.hold(ctx, "get", key) {
		return nil, ctx.Err()
	}
	return g.Store.Get(ctx, key, off, n)
}

// cancelAt runs call with a context that is cancelled, from another
// goroutine, once call's request matching match is in flight.
func cancelAt(t *testing.T, store cas.Store, land bool, match func(op, key string) bool, call func(ctx context.Context, ws *cairn.Workspace) error) error {
	t.Helper()
	g := &gateStore{Store: store, match: match, land: land, entered: make(chan struct{})}
	ws := cairn.OpenStore(g)
	defer ws.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-g.entered
		cancel()
	}()
	err := call(ctx, ws)
	select {
	case <-g.entered:
	default:
		t.Fatalf("the call made no request the test meant to cancel it at (it returned %v)", err)
	}
	return err
}

func isSpill(op, key string) bool {
	_, _, _, ok := manifest.ParseSpillKey(key)
	return ok
}

// dirState writes a directory state: small files, then one large
// enough to be stored in a pack of its own (a spill pack), so that a
// commit puts, and a checkout gets, that pack after the small files.
func dirState(t *testing.T, seed uint64) string {
	t.Helper()
	dir := t.TempDir()
	writeTestFile(t, filepath.Join(dir, "a.txt"), []byte("first\n"))
	writeTestFile(t, filepath.Join(dir, "b.txt"), []byte("second\n"))
	big, err := os.Create(filepath.Join(dir, "z.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(big, workload.Large(seed, manifest.SpillThreshold+4096, false)); err != nil {
		t.Fatal(err)
	}
	if err := big.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestCancelledMidway: a commit and a checkout cancelled from another
// goroutine while they run (at a request a gate in the store holds)
// return an error matching context.Canceled and leave nothing
// half-done: no step, or the whole step (ErrMaybeWritten said so); no
// partial checkout directory; and the store verifies clean.
func TestCancelledMidway(t *testing.T) {
	bg := context.Background()
	// A local store, not mem://: its large packs stay on disk, not in
	// this test process's memory, whose peak a later test's child
	// process inherits (TestLargeStateBoundedMemory).
	store, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	setup := cairn.OpenStore(store)
	defer setup.Close()
	s, err := setup.Session("s")
	if err != nil {
		t.Fatal(err)
	}
	first := dirState(t, 1)
	if _, err := s.Commit(bg, cairn.Dir(first), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	second := dirState(t, 2)
	headIs := func(t *testing.T, want uint64) {
		t.Helper()
		h, err := setup.ReadHead(bg, "s")
		if err != nil || h.Number != want {
			t.Fatalf("head after the cancelled call: %v, %v; want s@%d", h, err, want)
		}
		if rep, err := setup.Verify(bg); err != nil || len(rep.Problems) > 0 {
			t.Fatalf("verify after the cancelled call: %v %+v", err, rep)
		}
	}

	t.Run("commit, at its large file's pack", func(t *testing.T) {
		err := cancelAt(t, store, false, func(op, key string) bool { return op == "put" && isSpill(op, key) },
			func(ctx context.Context, ws *cairn.Workspace) error {
				_, err := mustSession(t, ws, "s").Commit(ctx, cairn.Dir(second), cairn.CommitOptions{})
				return err
			})
		if !errors.Is(err, context.Canceled) || errors.Is(err, cairn.ErrMaybeWritten) {
			t.Fatalf("commit cancelled before its step's put: %v; want context.Canceled, not ErrMaybeWritten", err)
		}
		headIs(t, 1)
	})
	t.Run("commit, at its step's put, not landed", func(t *testing.T) {
		err := cancelAt(t, store, false, func(op, key string) bool { return op == "put" && key == manifest.StepKey("s", 2) },
			func(ctx context.Context, ws *cairn.Workspace) error {
				_, err := mustSession(t, ws, "s").Commit(ctx, cairn.Dir(second), cairn.CommitOptions{})
				return err
			})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("commit cancelled during its step's put: %v; want context.Canceled", err)
		}
		headIs(t, 1)
	})
	t.Run("commit, at its step's put, landed", func(t *testing.T) {
		err := cancelAt(t, store, true, func(op, key string) bool { return op == "put" && key == manifest.StepKey("s", 2) },
			func(ctx context.Context, ws *cairn.Workspace) error {
				_, err := mustSession(t, ws, "s").Commit(ctx, cairn.Dir(second), cairn.CommitOptions{})
				return err
			})
		if !errors.Is(err, context.Canceled) || !errors.Is(err, cairn.ErrMaybeWritten) {
			t.Fatalf("commit cancelled after its step's put landed: %v; want context.Canceled and ErrMaybeWritten", err)
		}
		headIs(t, 2)
		// The step that landed is whole: its state is the one committed.
		h, _ := setup.ReadHead(bg, "s")
		out := filepath.Join(t.TempDir(), "out")
		if err := h.Checkout(bg, out); err != nil {
			t.Fatal(err)
		}
		sameFiles(t, out, second)
	})
	t.Run("checkout", func(t *testing.T) {
		for _, existing := range []bool{false, true} {
			out := filepath.Join(t.TempDir(), "out")
			if existing {
				if err := os.Mkdir(out, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			err := cancelAt(t, store, false, func(op, key string) bool { return op == "get" && isSpill(op, key) },
				func(ctx context.Context, ws *cairn.Workspace) error {
					st, err := ws.ReadStep(bg, "s", 2)
					if err != nil {
						t.Fatal(err)
					}
					return st.Checkout(ctx, out)
				})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("checkout cancelled midway: %v; want context.Canceled", err)
			}
			des, err := os.ReadDir(out)
			switch {
			case existing && (err != nil || len(des) > 0):
				t.Errorf("the empty directory a cancelled checkout wrote into holds %d entries (%v); want none", len(des), err)
			case !existing && !errors.Is(err, os.ErrNotExist):
				t.Errorf("a cancelled checkout left %s behind (%d entries, %v); want nothing", out, len(des), err)
			}
		}
	})
}

// sameFiles fails unless directories got and want hold the same files.
func sameFiles(t *testing.T, got, want string) {
	t.Helper()
	for _, name := range []string{"a.txt", "b.txt", "z.bin"} {
		a, err := os.ReadFile(filepath.Join(got, name))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(want, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from the state committed", name)
		}
	}
}
