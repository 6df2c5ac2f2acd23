package cairn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestCompactionKeepsEveryStep commits random edits (appends, deletions,
// and values that come back after they died, which must be stored again
// once a merge dropped them) with a small fanout, so that packs of
// several levels are written, and checks that a fresh reader gets every
// step's state back exactly, through a writer that stays open and
// through a new writer each step.
func TestCompactionKeepsEveryStep(t *testing.T) {
	ctx := context.Background()
	for _, fresh := range []bool{false, true} {
		t.Run(fmt.Sprintf("new-writer-each-step=%v", fresh), func(t *testing.T) {
			backend := mem.New()
			open := func() *cairn.Workspace {
				ws := cairn.OpenStore(backend)
				ws.SetCompactionFanout(3)
				return ws
			}
			ws := open()
			rng := rand.New(rand.NewPCG(3, 4))
			var items, dead []string
			var docs [][]byte
			for n := 1; n <= 120; n++ {
				switch op := rng.IntN(10); {
				case op < 6 || len(items) == 0:
					items = append(items, fmt.Sprintf("item %d %s", n, strings.Repeat("x", rng.IntN(3000))))
				case op < 8:
					i := rng.IntN(len(items))
					dead = append(dead, items[i])
					items = append(items[:i], items[i+1:]...)
				case len(dead) > 0:
					i := rng.IntN(len(dead))
					items = append(items, dead[i])
				}
				doc, _ := json.Marshal(map[string]any{"items": items, "n": n})
				docs = append(docs, doc)
				if fresh {
					ws = open()
				}
				s, _ := ws.Session("c")
				if _, err := s.Commit(ctx, cairn.JSON(doc), cairn.CommitOptions{}); err != nil {
					t.Fatalf("commit %d: %v", n, err)
				}
				got, err := readStep(ctx, open(), n)
				if err != nil || string(got) != string(doc) {
					t.Fatalf("step %d read back %d bytes, %v; want the committed %d bytes", n, len(got), err, len(doc))
				}
			}
			r := open()
			for n, doc := range docs {
				if got, err := readStep(ctx, r, n+1); err != nil || string(got) != string(doc) {
					t.Fatalf("old step %d after compaction: %v", n+1, err)
				}
			}
			rep, err := r.Verify(ctx)
			if err != nil || len(rep.Problems) > 0 {
				t.Fatalf("verify: %v %v", err, rep.Problems)
			}
			levels := map[uint8]int{}
			repo := manifest.NewRepo(backend, 0)
			for n := uint64(1); n <= 120; n++ {
				st, err := repo.ReadStep(ctx, "c", n)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range st.Layout.Packs {
					if p.InStep && p.Number == n {
						levels[p.Level]++
					}
				}
			}
			t.Logf("%d steps, merges by level %v, %d objects checked by verify", rep.Steps, levels, rep.Objects)
			if levels[1] == 0 || levels[2] == 0 {
				t.Errorf("merges by level %v: the test needs packs of two levels at least", levels)
			}
			backend.List(ctx, "packs/", "", func(i cas.Info) error {
				t.Errorf("%s written: a merge rides in its step object", i.Key)
				return nil
			})
		})
	}
}

func readStep(ctx context.Context, ws *cairn.Workspace, n int) ([]byte, error) {
	st, err := ws.Resolve(ctx, fmt.Sprintf("c@%d", n))
	if err != nil {
		return nil, err
	}
	return st.JSON(ctx)
}

// TestCompactionScale measures, for long append sessions, the objects a
// fresh resume reads and the PUTs and bytes written per step, with and
// without compaction. It runs only with CAIRN_SCALE=1 (10,000 steps take
// minutes); pick cases with -run 'TestCompactionScale/10000-small-f16'.
// The 1,000-step bound on resume is also checked by TestAppendWorkload.
func TestCompactionScale(t *testing.T) {
	if os.Getenv("CAIRN_SCALE") != "1" {
		t.Skip("set CAIRN_SCALE=1 to measure 1k and 10k step sessions")
	}
	ctx := context.Background()
	for _, c := range []struct {
		steps, msg int // msg: bytes of filler per message
		name       string
	}{{1000, 4400, "4k"}, {1000, 32, "small"}, {10000, 32, "small"}} {
		for _, fanout := range []int{0, manifest.DefaultFanout} {
			t.Run(fmt.Sprintf("%d-%s-f%d", c.steps, c.name, fanout), func(t *testing.T) {
				backend := mem.New()
				ws := cairn.OpenStore(backend)
				ws.SetCompactionFanout(fanout)
				s, _ := ws.Session("scale")
				var msgs []string
				var appended int64
				prev := 0
				rng := rand.New(rand.NewPCG(9, 9))
				for n := 1; n <= c.steps; n++ {
					filler := make([]byte, c.msg/2)
					for i := range filler {
						filler[i] = byte(rng.Uint32())
					}
					msgs = append(msgs, fmt.Sprintf(`{"role":"user","content":"%d %x"}`, n, filler))
					doc := `{"messages":[` + strings.Join(msgs, ",") + `]}`
					if _, err := s.Commit(ctx, cairn.JSON([]byte(doc)), cairn.CommitOptions{}); err != nil {
						t.Fatal(err)
					}
					appended += int64(len(doc) - prev)
					prev = len(doc)
				}
				w := ws.Requests()
				var stored int64
				var objects int
				backend.List(ctx, "", "", func(i cas.Info) error { stored += i.Size; objects++; return nil })
				ws2 := cairn.OpenStore(backend)
				s2, _ := ws2.Session("scale")
				head, err := s2.Head(ctx)
				if err != nil {
					t.Fatal(err)
				}
				find := ws2.Requests()
				if _, err := head.JSON(ctx); err != nil {
					t.Fatal(err)
				}
				load := ws2.Requests().Sub(find)
				t.Logf("%d steps of %d B appends, fanout %d: resume read %d objects (+%d requests to find the head); %.4f PUT/step, %d GET while committing; %.3f B written per appended B (%d B appended, %d objects stored)",
					c.steps, appended/int64(c.steps), fanout, load.Get, find.Get+find.List, float64(w.Put)/float64(c.steps), w.Get, float64(w.BytesWritten)/float64(appended), appended, objects)
			})
		}
	}
}

// TestCompactionOnePut: the commit that compacts makes one PUT, its step
// object carrying the merged pack (manifest format 5). A pack an older
// version left at that step's pack key (packs/<s>/<n>, written before its
// step, which then crashed) is neither overwritten nor named.
func TestCompactionOnePut(t *testing.T) {
	ctx := context.Background()
	backend := mem.New()
	ws := cairn.OpenStore(backend)
	ws.SetCompactionFanout(3) // step 4 is the first to compact
	orphan := []byte("left by a commit of step 4 that crashed")
	if err := backend.Put(ctx, manifest.PackKey("c", 4), orphan, cas.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	s, _ := ws.Session("c")
	var docs, items []string
	for n := 1; n <= 6; n++ {
		items = append(items, fmt.Sprintf("%q", fmt.Sprint(n, strings.Repeat("x", 600))))
		doc := `{"items":[` + strings.Join(items, ",") + `]}`
		docs = append(docs, doc)
		before := ws.Requests()
		if _, err := s.Commit(ctx, cairn.JSON([]byte(doc)), cairn.CommitOptions{}); err != nil {
			t.Fatalf("commit %d: %v", n, err)
		}
		if used := ws.Requests().Sub(before); n > 1 && (used.Put != 1 || used.Get+used.List+used.Head != 0) {
			t.Errorf("commit %d made %+v, want one PUT", n, used)
		}
	}
	if got, _ := backend.Get(ctx, manifest.PackKey("c", 4), 0, -1); string(got) != string(orphan) {
		t.Fatalf("the orphan at the pack key was overwritten")
	}
	if n := inStepPacks(t, backend, "c", 4); n != 1 {
		t.Fatalf("step 4's layout names %d packs in step objects, want its own", n)
	}
	fresh := cairn.OpenStore(backend)
	for n, doc := range docs {
		if got, err := readStep(ctx, fresh, n+1); err != nil || string(got) != doc {
			t.Fatalf("step %d: %v", n+1, err)
		}
	}
	if rep, err := fresh.Verify(ctx); err != nil || len(rep.Problems) > 0 {
		t.Fatalf("verify: %v %v", err, rep.Problems)
	}
}

// inStepPacks returns how many packs held in step objects the layout of
// session@n names, after checking that one of them is n's own object.
func inStepPacks(t *testing.T, store cas.Store, session string, n uint64) int {
	t.Helper()
	st, err := manifest.NewRepo(store, 0).ReadStep(context.Background(), session, n)
	if err != nil {
		t.Fatal(err)
	}
	count, own := 0, false
	for _, p := range st.Layout.Packs {
		if p.InStep {
			count++
			own = own || p.Session == session && p.Number == n
		}
	}
	if count > 0 && !own {
		t.Fatalf("%s@%d's layout names packs in step objects but not its own", session, n)
	}
	return count
}
