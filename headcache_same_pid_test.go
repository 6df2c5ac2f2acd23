package cairn_test

import (
	"context"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestHeadCacheHolderWithOurPid: the step that made a cached head stale
// was written by a writer that keeps no cache, with this process's pid
// on this host (another process in another pid namespace of the same
// host name, as two containers on the host's network; here, a workspace
// of this process without the cache). The commit used to take its own
// in-flight mark for the holder's and fail with a conflict; a stale
// cache costs a retry, so it must land above the holder's step.
func TestHeadCacheHolderWithOurPid(t *testing.T) {
	ctx := context.Background()
	store, cache := t.TempDir(), t.TempDir()
	commit := func(cached bool, doc string) (*cairn.Step, error) {
		ws, err := cairn.Open(ctx, store)
		if err != nil {
			t.Fatal(err)
		}
		if cached {
			ws.UseHeadCache(cache)
		}
		s, err := ws.Session("s")
		if err != nil {
			t.Fatal(err)
		}
		return s.Commit(ctx, cairn.JSON([]byte(doc)), cairn.CommitOptions{})
	}
	if _, err := commit(true, `{"n":1}`); err != nil {
		t.Fatal(err)
	}
	two, err := commit(false, `{"n":2}`)
	if err != nil {
		t.Fatal(err)
	}
	st, err := commit(true, `{"n":3}`)
	if err != nil {
		t.Fatalf("commit over a cache made stale by a writer without it: %v", err)
	}
	if st.Number != 3 || st.Parent == nil || st.Parent.ID != two.ID.String() {
		t.Errorf("commit made step %d with parent %v, want step 3 above step 2", st.Number, st.Parent)
	}
}
