package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestRemovedMidSessionNeedsOldObjects: a writer holds a session's head
// (step 32, started from the head cache, so the objects of its layout
// are not in its memory) while the session is removed and collected. Its
// next commit merges the 32 step objects into a pack (compaction), and
// their objects are gone. The slot above its head is the removal's
// tombstone, so the commit must fail as a commit that lost its slot to a
// removal does: the removal's conflict, "the session was removed", not
// "compact 32 objects: read steps/…: not found" naming a store key.
// Whether the merge finds local copies of the objects (and so gets as far
// as the step's put) or reads the store must not change the answer.
func TestRemovedMidSessionNeedsOldObjects(t *testing.T) {
	ctx := context.Background()
	for _, local := range []bool{false, true} {
		t.Run(fmt.Sprintf("local copies=%v", local), func(t *testing.T) {
			store, cache := t.TempDir(), t.TempDir()
			open := func(cached bool) *cairn.Workspace {
				ws, err := cairn.Open(ctx, store)
				if err != nil {
					t.Fatal(err)
				}
				if cached {
					ws.UseHeadCache(cache)
				}
				return ws
			}
			doc := func(n int) cairn.State {
				var b strings.Builder
				b.WriteString(`{"messages":[`)
				for i := 1; i <= n; i++ {
					if i > 1 {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, `"%s"`, strings.Repeat(string(rune('a'+i%26)), 2000+i))
				}
				b.WriteString(`]}`)
				return cairn.JSON([]byte(b.String()))
			}
			first := open(true)
			s, _ := first.Session("s")
			for n := 1; n <= 31; n++ {
				if _, err := s.Commit(ctx, doc(n), cairn.CommitOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			if !local {
				if err := os.RemoveAll(filepath.Join(cache, "objects")); err != nil {
					t.Fatal(err)
				}
			}
			// The writer: a fresh process, from the head cache.
			w := open(true)
			ws, _ := w.Session("s")
			if st, err := ws.Commit(ctx, doc(32), cairn.CommitOptions{}); err != nil || st.Number != 32 {
				t.Fatalf("commit 32: %v", err)
			}
			// Another process removes the session and collects it.
			other := open(false)
			if _, err := other.Remove(ctx, "s"); err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if _, err := other.GC(ctx, cairn.GCOptions{Grace: 0}); err != nil {
					t.Fatal(err)
				}
			}
			_, err := ws.Commit(ctx, doc(33), cairn.CommitOptions{})
			if !errors.Is(err, cairn.ErrConflict) || !strings.Contains(err.Error(), "the session was removed") {
				t.Fatalf("commit 33 after the session was removed and collected: %v; want the removal's conflict", err)
			}
			if strings.Contains(err.Error(), "steps/") || strings.Contains(err.Error(), "packs/") {
				t.Errorf("the removal's conflict names a store key: %v", err)
			}
		})
	}
}
