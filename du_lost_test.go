package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/castest"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestUsageGoesPastALostOrDamagedObject: du passes over a session the
// store's damage keeps from being read, whatever the damage, and measures
// the others. It did so only for damage found while walking manifests as
// corrupt: a step object lost from the middle of a history ("du: mark live
// steps of d: read session d, step 2: not found") and a step whose manifest
// is sound but whose blob data is damaged ("du d: corrupt object: session
// d, step 2: …", found while measuring logical bytes) made Usage fail
// whole, so cairn du printed no session and no totals.
func TestUsageGoesPastALostOrDamagedObject(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		damage func(t *testing.T, s cas.Store, key string)
		want   error
	}{
		{"lost", func(t *testing.T, s cas.Store, key string) {
			if err := s.Delete(ctx, key); err != nil {
				t.Fatal(err)
			}
		}, cas.ErrNotFound},
		{"blob data", func(t *testing.T, s cas.Store, key string) { castest.Damage(t, s, key) }, cairn.ErrCorrupt},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := mem.New()
			ws := cairn.OpenStore(store)
			for _, name := range []string{"a", "d"} {
				s, _ := ws.Session(name)
				for i := 1; i <= 3; i++ {
					// A state big enough that the middle of its step
					// object is blob data, not the manifest.
					doc := `{"` + name + `":"` + strings.Repeat(string(rune('a'+i)), 20000) + `"}`
					if _, err := s.Commit(ctx, cairn.JSON([]byte(doc)), cairn.CommitOptions{}); err != nil {
						t.Fatal(err)
					}
				}
			}
			whole, err := cairn.OpenStore(store).Usage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			c.damage(t, store, manifest.StepKey("d", 2))

			u, err := cairn.OpenStore(store).Usage(ctx)
			var ue *cairn.UnreadableError
			if !errors.As(err, &ue) || !errors.Is(err, c.want) || strings.Join(ue.Sessions, " ") != "d" ||
				!strings.Contains(err.Error(), "session d, step 2") || strings.Contains(err.Error(), "steps/") {
				t.Fatalf("Usage error: %v; want an UnreadableError naming session d, step 2, in words", err)
			}
			if u == nil {
				t.Fatal("Usage returned no usage beside the damaged session")
			}
			if len(u.Sessions) != 1 || u.Sessions[0].Session != "a" || u.Sessions[0] != whole.Sessions[0] {
				t.Errorf("sessions measured: %+v; want a's alone, as before the damage: %+v", u.Sessions, whole.Sessions[0])
			}
			if u.GarbageObjects != 0 {
				t.Errorf("garbage %d objects; want 0: the damaged session's objects are not garbage", u.GarbageObjects)
			}
			// gc must not sweep past a step it cannot read. (Damaged blob
			// data leaves every manifest readable: gc's mark is whole then.)
			if _, err := cairn.OpenStore(store).GC(ctx, cairn.GCOptions{}); c.name == "lost" && err == nil {
				t.Error("GC ran beside the lost step; want it refused")
			}
		})
	}
}
