package cairn_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/internal/s3test"
	"github.com/cairnlog/cairn/manifest"
)

// historyLen returns how many steps session's log shows, failing t if
// it cannot be read.
func historyLen(t *testing.T, ws *cairn.Workspace, session string) int {
	t.Helper()
	head, err := ws.ReadHead(context.Background(), session)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := head.Log(context.Background(), func(*cairn.Step) error { n++; return nil }); err != nil {
		t.Fatalf("log of %s: %v", session, err)
	}
	return n
}

// TestConcurrentPrunesKeepTheHigherBase: two prunes of one session at
// once, to its last 10 and its last 20 steps, both acknowledged, left the
// base at the lower of the two in 24 of 100 rounds: the base marker was
// one object each prune overwrote with the base it had computed, so the
// later write won, not the higher. An acknowledged prune was undone,
// and had gc deleted the steps it dropped in between, the history would
// have run into missing steps. Each prune now creates a marker of its own
// and the base is the highest.
func TestConcurrentPrunesKeepTheHigherBase(t *testing.T) {
	ctx := context.Background()
	rounds := 100
	if testing.Short() {
		rounds = 20
	}
	for i := range rounds {
		dir := t.TempDir()
		racePrunes(t, i, func() *cairn.Workspace {
			ws, err := cairn.Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			return ws
		})
	}
}

// racePrunes commits 30 steps to s, then prunes it to its last 10 and
// its last 20 steps at once, each prune on a workspace of its own, and
// checks that both are acknowledged and the history keeps 10 steps.
func racePrunes(t *testing.T, round int, open func() *cairn.Workspace) {
	t.Helper()
	ctx := context.Background()
	ws := open()
	defer ws.Close()
	commitN(t, ws, "s", "s", 1, 30)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for j, keep := range []uint64{10, 20} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := open()
			defer w.Close()
			_, errs[j] = w.Prune(ctx, "s", keep)
		}()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("round %d: prunes: %v, %v", round, errs[0], errs[1])
	}
	if n := historyLen(t, open(), "s"); n != 10 {
		t.Fatalf("round %d: after prunes to 10 and 20 steps, both acknowledged, the history has %d steps; want 10", round, n)
	}
}

// TestPrunePausedAtItsBaseWrite: a prune to 60 of 100 steps stopped at
// the put of its base marker, while another pruned to 3 steps and gc, 30
// minutes on, deleted what that dropped. Resumed, the first prune's put
// (no time check can catch a pause inside the put itself) set the base
// back to 41: the history ran into deleted steps. The base only rises now.
func TestPrunePausedAtItsBaseWrite(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	commitN(t, ws, "d", "d", 1, 100)
	p := newPause(store)
	p.put = func(key string) bool { return strings.HasPrefix(key, "steps/d/base") }
	done := make(chan error, 1)
	go func() {
		_, err := cairn.OpenStore(p).Prune(ctx, "d", 60)
		done <- err
	}()
	waitPaused(t, p, done)
	if _, err := ws.Prune(ctx, "d", 3); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		mustGC(t, ws, cairn.GCOptions{Grace: 0, Now: slotsAged})
	}
	close(p.release)
	if err := <-done; err != nil {
		t.Fatalf("the paused prune: %v", err)
	}
	fresh := cairn.OpenStore(store)
	if n := historyLen(t, fresh, "d"); n != 3 {
		t.Fatalf("history after the paused prune: %d steps; want the 3 the later prune kept", n)
	}
	mustVerify(t, fresh)
}

// TestBaseMarkers: each raise of the base creates a marker and deletes
// the ones below it, so a session keeps one (and the older overwritten
// marker, for older cairns, which still reads: a store an older cairn
// pruned keeps its base, and a lower value an older cairn writes there
// later does not lower it).
func TestBaseMarkers(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	ws := cairn.OpenStore(store)
	commitN(t, ws, "d", "d", 1, 20)
	// An older cairn's prune: only the overwritten marker.
	if err := store.Put(ctx, manifest.BaseKey("d"), []byte("5"), cas.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := historyLen(t, cairn.OpenStore(store), "d"); n != 16 {
		t.Fatalf("history under an older cairn's marker (base 5): %d steps; want 16", n)
	}
	for _, keep := range []uint64{12, 10, 8} {
		if _, err := ws.Prune(ctx, "d", keep); err != nil {
			t.Fatal(err)
		}
	}
	markers := func() []string {
		var keys []string
		if err := store.List(ctx, "steps/d/base", "", func(i cas.Info) error { keys = append(keys, i.Key); return nil }); err != nil {
			t.Fatal(err)
		}
		return keys
	}
	if got, want := markers(), []string{manifest.BaseKey("d"), manifest.BaseKeyAt("d", 13)}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("markers after three prunes: %v; want %v", got, want)
	}
	// An older cairn, having read the session long ago, writes base 6.
	if err := store.Put(ctx, manifest.BaseKey("d"), []byte("6"), cas.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := historyLen(t, cairn.OpenStore(store), "d"); n != 8 {
		t.Fatalf("history after an older cairn wrote a lower base: %d steps; want 8", n)
	}
	mustVerify(t, cairn.OpenStore(store))
}

// TestBaseMarkersS3 is TestBaseMarkers' rule on real S3 servers: the
// markers are empty objects created with If-None-Match, and two prunes
// racing leave the higher base.
func TestBaseMarkersS3(t *testing.T) {
	for _, srv := range s3test.Servers {
		t.Run(srv.Name, func(t *testing.T) {
			ctx := context.Background()
			b := srv.Start(t)
			for i := range 5 {
				prefix := fmt.Sprintf("base%d", i)
				open := func() *cairn.Workspace { return cairn.OpenStore(openMinIOStore(t, b, prefix)) }
				racePrunes(t, i, open)
				ws := open()
				if _, err := ws.Prune(ctx, "s", 5); err != nil {
					t.Fatal(err)
				}
				var markers []string
				raw := openMinIOStore(t, b, prefix)
				if err := raw.List(ctx, "steps/s/base", "", func(i cas.Info) error { markers = append(markers, i.Key); return nil }); err != nil {
					t.Fatal(err)
				}
				if want := []string{manifest.BaseKey("s"), manifest.BaseKeyAt("s", 26)}; fmt.Sprint(markers) != fmt.Sprint(want) {
					t.Fatalf("markers: %v; want %v", markers, want)
				}
			}
		})
	}
}
