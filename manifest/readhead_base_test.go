package manifest_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
	"github.com/cairnlog/cairn/manifest/tree"
)

type noBlobs struct{}

func (noBlobs) Put(cas.ID, []byte) error { return errors.New("no blobs") }

// writeSteps writes steps first..last of session, each with a small
// inline JSON state and no parent: ReadHead reads only the newest.
func writeSteps(t *testing.T, repo *manifest.Repo, session string, first, last uint64) {
	t.Helper()
	root, err := tree.BuildJSON([]byte(`{"s":1}`), noBlobs{})
	if err != nil {
		t.Fatal(err)
	}
	for n := first; n <= last; n++ {
		m := &manifest.Manifest{Session: session, Number: n, Time: time.Unix(0, 0).UTC(), Kind: manifest.StateJSON, Root: root,
			Layout: manifest.Layout{Steps: []manifest.Range{{Session: session, First: n, Last: n}}}}
		if _, _, err := repo.WriteStep(context.Background(), m, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadHeadBaseAboveHead: ReadHead applies gc's rule to a base above
// the newest step. A removal's forms (a tombstone above the last step;
// an older cairn's base exactly one above it) return the newest step and
// no error; any other base above the head is a *BaseError wrapping
// cas.ErrCorrupt, with no step, and the head and base it saw.
func TestReadHeadBaseAboveHead(t *testing.T) {
	ctx := context.Background()
	for _, base := range []uint64{7, 99, 1 << 62} {
		repo := manifest.NewRepo(mem.New(), 0)
		writeSteps(t, repo, "d", 1, 5)
		if err := repo.WriteBase(ctx, "d", base); err != nil {
			t.Fatal(err)
		}
		st, head, b, err := repo.ReadHead(ctx, "d")
		var bad *manifest.BaseError
		if !errors.As(err, &bad) || !errors.Is(err, cas.ErrCorrupt) || st != nil || head != 5 || b != base {
			t.Errorf("base %d: ReadHead = %v, %d, %d, %v; want no step, head 5, the base, and a BaseError", base, st, head, b, err)
			continue
		}
		want := "session d: its base marker says step " + strconv.FormatUint(base, 10) + " but its newest step is 5, which is neither a removal nor a prune"
		if bad.Session != "d" || bad.Base != base || bad.Head != 5 || err.Error() != cas.ErrCorrupt.Error()+": "+want {
			t.Errorf("base %d: error %q (%+v), want %q", base, err, *bad, want)
		}
	}

	repo := manifest.NewRepo(mem.New(), 0)
	writeSteps(t, repo, "legacy", 1, 4)
	if err := repo.WriteBase(ctx, "legacy", 5); err != nil {
		t.Fatal(err)
	}
	writeSteps(t, repo, "fenced", 1, 4)
	if err := repo.Fence(ctx, "fenced", 5); err != nil { // tombstone at 5, base 6
		t.Fatal(err)
	}
	for name, want := range map[string]uint64{"legacy": 4, "fenced": 5} {
		st, head, base, err := repo.ReadHead(ctx, name)
		if err != nil || st == nil || head != want || base != want+1 {
			t.Errorf("%s: ReadHead = %v, %d, %d, %v; want step %d below base %d, no error", name, st, head, base, err, want, want+1)
		}
	}
}
