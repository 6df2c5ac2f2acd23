package cairn_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/minio"
	"github.com/cairnlog/cairn/internal/s3test"
)

// overlapPrefixes are workspace prefixes of one bucket (or directories
// of one local directory) chosen to overlap: the whole bucket beside
// prefixed ones, one nested in another, one a string prefix of another,
// and nested ones named as the outer workspace's own key prefixes
// (steps/, packs/, pins/, sessions/, gc/), even as its session's.
var overlapPrefixes = []string{"", "a", "a/b", "ab", "steps", "steps/s", "packs", "packs/s", "pins/s", "sessions", "gc", "a/steps/s"}

// TestOverlappingPrefixes: workspaces whose prefixes overlap or nest
// never see each other's data (I7). Each gets the same sessions; then
// each in turn prunes one, removes another and runs gc twice (grace 0),
// and every workspace must still list only its own sessions, count only
// its own objects, read its own heads and verify clean. Verify of the
// workspace holding the others (the whole bucket, or the directory they
// nest in) used to count as sessions the names of nested workspaces'
// prefixes under its steps/ (steps/steps/..., steps/s/steps/...).
func TestOverlappingPrefixes(t *testing.T) {
	t.Run("local", func(t *testing.T) {
		root := t.TempDir()
		testOverlappingPrefixes(t, func(prefix string) *cairn.Workspace {
			ws, err := cairn.Open(context.Background(), filepath.Join(root, filepath.FromSlash(prefix)))
			if err != nil {
				t.Fatal(err)
			}
			return ws
		})
	})
	t.Run("minio", func(t *testing.T) {
		b := s3test.StartMinIO(t)
		testOverlappingPrefixes(t, func(prefix string) *cairn.Workspace {
			s, err := minio.Open(context.Background(), b.Name, prefix, minio.Options{
				Endpoint: b.Host, Region: b.Region, AccessKey: b.AccessKey, SecretKey: b.SecretKey,
			})
			if err != nil {
				t.Fatal(err)
			}
			return cairn.OpenStore(s)
		})
	})
}

func testOverlappingPrefixes(t *testing.T, open func(prefix string) *cairn.Workspace) {
	ctx := context.Background()
	doc := func(prefix string, i int) string {
		return fmt.Sprintf(`{"ws":%q,"i":%d,"pad":%q}`, prefix, i, strings.Repeat(prefix+" words ", 3000))
	}
	wss := map[string]*cairn.Workspace{}
	for _, p := range overlapPrefixes {
		ws := open(p)
		wss[p] = ws
		for _, name := range []string{"s", "r", "k"} {
			s, err := ws.Session(name)
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 5; i++ {
				stepOf(t, s, cairn.JSON([]byte(doc(p, i))))
			}
		}
	}
	// names: the sessions listed (a removed one keeps its marker); live:
	// those whose head reads.
	check := func(when string, sessions, live []string) {
		t.Helper()
		var objects, usages []int
		for _, p := range overlapPrefixes {
			ws := open(p) // a fresh workspace: nothing from memory
			names, err := ws.SessionNames(ctx)
			if err != nil || !slices.Equal(names, sessions) {
				t.Errorf("%s: sessions of %q: %v, %v; want %v", when, p, names, err, sessions)
			}
			for _, name := range live {
				head, err := ws.ReadHead(ctx, name)
				if err != nil {
					t.Errorf("%s: head of %s in %q: %v", when, name, p, err)
					continue
				}
				if got, err := head.JSON(ctx); err != nil || string(got) != doc(p, 5) {
					t.Errorf("%s: head of %s in %q: %.40s, %v", when, name, p, got, err)
				}
			}
			rep, err := ws.Verify(ctx)
			if err != nil || rep.Sessions != len(live) || len(rep.Problems) != 0 { // a removed session is checked, not counted
				t.Errorf("%s: verify of %q: %+v, %v", when, p, rep, err)
			}
			u, err := ws.Usage(ctx)
			if err != nil {
				t.Fatalf("%s: usage of %q: %v", when, p, err)
			}
			objects, usages = append(objects, u.Objects), append(usages, len(u.Sessions))
		}
		for i := range objects {
			if objects[i] != objects[0] || usages[i] != usages[0] {
				t.Errorf("%s: %q counts %d objects of %d sessions, %q %d of %d (the same sessions in each)",
					when, overlapPrefixes[i], objects[i], usages[i], overlapPrefixes[0], objects[0], usages[0])
			}
		}
	}
	check("before maintenance", []string{"k", "r", "s"}, []string{"k", "r", "s"})
	for _, p := range overlapPrefixes {
		ws := wss[p]
		if _, err := ws.Prune(ctx, "s", 2); err != nil {
			t.Fatalf("prune in %q: %v", p, err)
		}
		if _, err := ws.Remove(ctx, "r"); err != nil {
			t.Fatalf("remove in %q: %v", p, err)
		}
		for range 2 {
			if _, err := ws.GC(ctx, cairn.GCOptions{Grace: 0}); err != nil {
				t.Fatalf("gc in %q: %v", p, err)
			}
		}
	}
	check("after every workspace's prune, remove and gc", []string{"k", "r", "s"}, []string{"k", "s"})
}
