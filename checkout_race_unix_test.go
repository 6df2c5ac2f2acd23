//go:build unix

package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestCheckoutsAtOnceNeverMix: two Step.Checkouts into one new directory
// at once, as two goroutines or two programs might, leave exactly one
// state there, whole, and the other is refused as ErrInvalid. Before,
// both found the directory empty, both wrote, both returned nil, and the
// directory held the two states' files mixed.
func TestCheckoutsAtOnceNeverMix(t *testing.T) {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	steps := map[string]*cairn.Step{}
	for _, name := range []string{"f", "g"} {
		src := t.TempDir()
		for i := range 200 {
			if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("%s%03d", name, i)), []byte(name), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s, err := ws.Session(name)
		if err != nil {
			t.Fatal(err)
		}
		if steps[name], err = s.Commit(ctx, cairn.Dir(src), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for round := range 20 {
		dir := filepath.Join(t.TempDir(), "out")
		errs := make(chan error, 2)
		for _, name := range []string{"f", "g"} {
			go func() { errs <- steps[name].Checkout(ctx, dir) }()
		}
		won := 0
		for range 2 {
			switch err := <-errs; {
			case err == nil:
				won++
			case !errors.Is(err, cairn.ErrInvalid):
				t.Fatalf("round %d: a checkout failed otherwise than as ErrInvalid: %v", round, err)
			}
		}
		des, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		prefixes := map[string]int{}
		for _, de := range des {
			prefixes[de.Name()[:1]]++
		}
		if won != 1 || len(prefixes) != 1 || len(des) != 200 {
			t.Fatalf("round %d: %d checkouts succeeded and left %v in the directory; want exactly one, its 200 files alone", round, won, prefixes)
		}
	}
}
