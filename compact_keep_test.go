package cairn_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestCompactionKeepsLargeFirstStep checks that compaction does not copy
// a large first step (a directory state's whole initial tree) into every
// level's pack, and that the layouts it writes instead stay complete:
// every step checks out, a fresh process resumes the head, gc keeps
// what they need and verify finds nothing wrong.
func TestCompactionKeepsLargeFirstStep(t *testing.T) {
	ctx := context.Background()
	backend := mem.New()
	ws := cairn.OpenStore(backend)
	const fanout = 4
	ws.SetCompactionFanout(fanout)
	s, _ := ws.Session("files")
	src := t.TempDir()
	big := make([]byte, manifest.KeepObjectBytes+(1<<20))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i+8 <= len(big); i += 8 {
		v := rng.Uint64()
		for k := range 8 {
			big[i+k] = byte(v >> (8 * k))
		}
	}
	if err := os.WriteFile(filepath.Join(src, "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	var steps []*cairn.Step
	var contents []string
	for n := 1; n <= 4*fanout*fanout; n++ {
		content := fmt.Sprintf("step %d: %x", n, rng.Uint64())
		if err := os.WriteFile(filepath.Join(src, "notes.txt"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		before := ws.Requests()
		st, err := s.Commit(ctx, cairn.Dir(src), cairn.CommitOptions{})
		if err != nil {
			t.Fatalf("step %d: %v", n, err)
		}
		if w := ws.Requests().Sub(before).BytesWritten; n > 1 && w > 1<<20 {
			t.Errorf("step %d wrote %d bytes: the large first step was copied", n, w)
		}
		steps, contents = append(steps, st), append(contents, content)
	}
	check := func(ws *cairn.Workspace, what string) {
		t.Helper()
		for i, st := range steps {
			st, err := ws.ReadStep(ctx, "files", st.Number)
			if err != nil {
				t.Fatalf("%s: step %d: %v", what, i+1, err)
			}
			out := filepath.Join(t.TempDir(), "out")
			if err := st.Checkout(ctx, out); err != nil {
				t.Fatalf("%s: checkout step %d: %v", what, i+1, err)
			}
			if b, _ := os.ReadFile(filepath.Join(out, "notes.txt")); string(b) != contents[i] {
				t.Errorf("%s: step %d has %q, want %q", what, i+1, b, contents[i])
			}
			if fi, err := os.Stat(filepath.Join(out, "big.bin")); err != nil || fi.Size() != int64(len(big)) {
				t.Errorf("%s: step %d: big.bin %v", what, i+1, err)
			}
		}
	}
	fresh := cairn.OpenStore(backend)
	check(fresh, "fresh process")
	if _, err := fresh.GC(ctx, cairn.GCOptions{Grace: 0, Now: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.GC(ctx, cairn.GCOptions{Grace: 0, Now: time.Now().Add(2 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	check(cairn.OpenStore(backend), "after gc")
	if rep, err := cairn.OpenStore(backend).Verify(ctx); err != nil || len(rep.Problems) > 0 {
		t.Errorf("verify: %v %+v", err, rep)
	}
	// The session keeps committing on top after a fresh resume.
	s2, _ := fresh.Session("files")
	if _, err := s2.Head(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Commit(ctx, cairn.Dir(src), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
}
