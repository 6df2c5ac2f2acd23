package manifest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest/tree"
)

// TestWriterCacheFollowsLayout: a writer's memory must not grow with its
// session's length (issue 14, target 5). The object cache holds what the
// writer wrote so that its next merge reads nothing back; once a merge
// replaced an object in the chain's layout, the object must leave the
// cache. Before, every step object the writer ever wrote stayed cached up
// to the cache's 256 MiB bound: 770 MiB peak RSS at 100,000 steps.
func TestWriterCacheFollowsLayout(t *testing.T) {
	ctx := context.Background()
	repo := NewRepo(mem.New(), 0)
	ix := repo.NewIndex()
	var head *Step
	const steps, fanout, window = 600, 8, 5
	var msgs []string
	for n := 1; n <= steps; n++ {
		// A windowed chat: one new message a step, the oldest dropped,
		// so merges find both live and dead blobs.
		msgs = append(msgs, fmt.Sprintf(`{"step":%d,"text":"%s"}`, n, strings.Repeat("x", 200+n%50)))
		if len(msgs) > window {
			msgs = msgs[1:]
		}
		doc := []byte(`{"messages":[` + strings.Join(msgs, ",") + `]}`)
		st, err := repo.Commit(ctx, head, ix, CommitInput{
			Session: "s", Fanout: fanout,
			Build: func(sink tree.Sink, _ func(cas.ID) bool) (StateKind, tree.Ref, error) {
				root, err := tree.BuildJSON(doc, sink)
				return StateJSON, root, err
			},
		})
		if err != nil {
			t.Fatalf("step %d: %v", n, err)
		}
		head = st
	}
	named := map[string]bool{}
	for _, k := range LayoutKeys(head.Layout) {
		named[k] = true
	}
	repo.cache.mu.Lock()
	defer repo.cache.mu.Unlock()
	var stray []string
	for _, k := range repo.cache.objs.Keys() {
		if !named[k] {
			stray = append(stray, k)
		}
	}
	if len(stray) > 0 {
		t.Errorf("after %d steps the writer's cache holds %d objects (%d bytes), %d of them no longer in the head's layout of %d objects, e.g. %s",
			steps, repo.cache.objs.Len(), repo.cache.objs.Cost(), len(stray), len(named), stray[0])
	}
	if got := repo.cache.objs.Len(); got > len(named) {
		t.Errorf("cache holds %d objects, the head's layout names %d", got, len(named))
	}
}
