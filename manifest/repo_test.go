package manifest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/cas/metered"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/manifest"
)

// putSteps creates step keys first..last of session with dummy bytes:
// head discovery looks at keys only.
func putSteps(t testing.TB, st cas.Store, session string, first, last uint64) {
	t.Helper()
	ctx := context.Background()
	for n := first; n <= last; n++ {
		if err := st.Put(ctx, manifest.StepKey(session, n), []byte{'x'}, cas.PutOptions{IfAbsent: true}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFindHead(t *testing.T) {
	ctx := context.Background()
	const steps = 10_000
	backend := mem.New()
	putSteps(t, backend, "long", 1, steps)
	// Neighbouring sessions whose keys share a prefix must not leak in.
	putSteps(t, backend, "long.x", 1, steps+50)
	putSteps(t, backend, "lon", 1, steps+70)
	m := metered.New(backend)
	repo := manifest.NewRepo(m, 0)

	find := func(session string) (uint64, metered.Counts) {
		t.Helper()
		before := m.Counts()
		head, err := repo.FindHead(ctx, session)
		if err != nil {
			t.Fatal(err)
		}
		return head, m.Counts().Sub(before)
	}

	// Without a hint: correct, one GET for the hint and a full listing.
	head, c := find("long")
	if head != steps {
		t.Fatalf("head without hint = %d, want %d", head, steps)
	}
	t.Logf("without a hint: %d GET, %d LIST pages for %d steps", c.Get, c.List, steps)

	// With a hint at most HintEvery behind: two requests.
	for _, behind := range []uint64{0, 1, 17, manifest.HintEvery - 1, manifest.HintEvery} {
		if err := repo.WriteHint(ctx, "long", steps-behind); err != nil {
			t.Fatal(err)
		}
		head, c := find("long")
		if head != steps {
			t.Fatalf("hint %d behind: head = %d, want %d", behind, head, steps)
		}
		if got := c.Get + c.List + c.Head + c.Put + c.Delete; got > 2 {
			t.Errorf("hint %d behind: %d requests (%+v), want <= 2", behind, got, c)
		}
	}

	// A session with no steps has head 0.
	if head, _ := find("none"); head != 0 {
		t.Errorf("empty session head = %d", head)
	}
}

// TestFindHeadBadHints: a hint is only a hint. One that is garbage, ahead
// of the real head, or names a pruned step still gives the right head.
func TestFindHeadBadHints(t *testing.T) {
	ctx := context.Background()
	backend := mem.New()
	putSteps(t, backend, "s", 1, 100)
	repo := manifest.NewRepo(backend, 0)
	for _, hint := range []string{"garbage", "", "-5", "18446744073709551615", "1000", "101", "  90\n"} {
		if err := backend.Put(ctx, manifest.HintKey("s"), []byte(hint), cas.PutOptions{}); err != nil {
			t.Fatal(err)
		}
		head, err := repo.FindHead(ctx, "s")
		if err != nil || head != 100 {
			t.Errorf("hint %q: head = %d, %v; want 100", hint, head, err)
		}
	}
	// Prune steps 1..60 and hint at a pruned step.
	for n := uint64(1); n <= 60; n++ {
		if err := backend.Delete(ctx, manifest.StepKey("s", n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := repo.WriteHint(ctx, "s", 30); err != nil {
		t.Fatal(err)
	}
	if head, err := repo.FindHead(ctx, "s"); err != nil || head != 100 {
		t.Errorf("hint at a pruned step: head = %d, %v; want 100", head, err)
	}
}

func TestWriteReadStep(t *testing.T) {
	ctx := context.Background()
	backend := mem.New()
	repo := manifest.NewRepo(backend, 0)
	m := full()
	m.Session, m.Number, m.Parent = "s", 1, nil
	m.Layout = manifest.Layout{Steps: []manifest.Range{{Session: "s", First: 1, Last: 1}}}
	var b pack.Builder
	b.Add(cas.Sum([]byte("blob")), []byte("blob"))
	st, entries, err := repo.WriteStep(ctx, m, &b)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || st.Blobs != 1 {
		t.Fatalf("entries = %v, blobs = %d", entries, st.Blobs)
	}
	// The slot is the fence.
	if _, _, err := repo.WriteStep(ctx, m, nil); !errors.Is(err, manifest.ErrSlotTaken) || !errors.Is(err, cas.ErrExists) {
		t.Fatalf("second write = %v, want ErrSlotTaken wrapping ErrExists", err)
	}
	// A fresh repo (no cache) reads it back and checks the pointer.
	got, err := manifest.NewRepo(backend, 0).ReadPointer(ctx, st.Pointer())
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != st.ID || got.Writer != m.Writer || !got.Time.Equal(m.Time) {
		t.Errorf("read back %+v", got)
	}
	bad := st.Pointer()
	bad.ID[0] ^= 1
	if _, err := manifest.NewRepo(backend, 0).ReadPointer(ctx, bad); !errors.Is(err, cas.ErrCorrupt) {
		t.Errorf("ReadPointer with a wrong hash = %v, want ErrCorrupt", err)
	}
	if _, err := repo.ReadStep(ctx, "s", 2); !errors.Is(err, cas.ErrNotFound) {
		t.Errorf("missing step = %v, want ErrNotFound", err)
	}
	// A step object stored under the wrong slot is corrupt.
	data, _ := backend.Get(ctx, manifest.StepKey("s", 1), 0, -1)
	if err := backend.Put(ctx, manifest.StepKey("s", 5), data, cas.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.ReadStep(ctx, "s", 5); !errors.Is(err, cas.ErrCorrupt) {
		t.Errorf("misplaced step = %v, want ErrCorrupt", err)
	}
	// A pack is not a step.
	pk, _ := (&pack.Builder{}).Build(pack.KindPack, nil)
	if err := backend.Put(ctx, manifest.StepKey("s", 6), pk, cas.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.ReadStep(ctx, "s", 6); !errors.Is(err, cas.ErrCorrupt) {
		t.Errorf("pack in a step slot = %v, want ErrCorrupt", err)
	}
}

func TestIndexBlob(t *testing.T) {
	ctx := context.Background()
	backend := mem.New()
	repo := manifest.NewRepo(backend, 0)
	raws := [][]byte{[]byte("one"), []byte("two two two two two two two two two two two two two two two two two two")}
	var b pack.Builder
	for _, r := range raws {
		b.Add(cas.Sum(r), r)
	}
	m := &manifest.Manifest{Session: "s", Number: 1, Time: time.Unix(0, 0).UTC(), Kind: manifest.StateJSON}
	if _, _, err := repo.WriteStep(ctx, m, &b); err != nil {
		t.Fatal(err)
	}
	ix := manifest.NewRepo(backend, 0).NewIndex()
	if err := ix.Load(ctx, manifest.Layout{Steps: []manifest.Range{{Session: "s", First: 1, Last: 1}}}); err != nil {
		t.Fatal(err)
	}
	if got, want := ix.Len(), len(raws); got != want {
		t.Fatalf("index has %d blobs, want %d", got, want)
	}
	for _, r := range raws {
		got, err := ix.Blob(ctx, cas.Sum(r))
		if err != nil || string(got) != string(r) {
			t.Errorf("Blob = %q, %v", got, err)
		}
	}
	if _, err := ix.Blob(ctx, cas.Sum([]byte("absent"))); !errors.Is(err, cas.ErrCorrupt) {
		t.Errorf("absent blob = %v, want ErrCorrupt", err)
	}
	if err := ix.Load(ctx, manifest.Layout{Steps: []manifest.Range{{Session: "s", First: 2, Last: 2}}}); !errors.Is(err, cas.ErrNotFound) {
		t.Errorf("loading a missing step = %v, want ErrNotFound", err)
	}
}
