package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/castest"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// TestUsageGoesPastADamagedSession: one damaged session does not hide
// what the others cost. Usage failed whole ("du: mark live steps of d:
// corrupt object …") when one session's head or any step of its history
// was damaged, so cairn du listed nothing. It now measures the others
// (a fork of the damaged session included: its shared steps are intact),
// counts the damaged session's objects as live, not garbage, and names
// the session at the end in an *UnreadableError matching ErrCorrupt.
func TestUsageGoesPastADamagedSession(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		step uint64 // the damaged step of d, whose head is step 3
	}{{"head", 3}, {"history", 2}} {
		t.Run(c.name, func(t *testing.T) {
			store := mem.New()
			ws := cairn.OpenStore(store)
			for _, name := range []string{"a", "d"} {
				s, _ := ws.Session(name)
				for i := 1; i <= 3; i++ {
					doc := `{"` + name + `":` + strings.Repeat("1", i) + `}`
					if _, err := s.Commit(ctx, cairn.JSON([]byte(doc)), cairn.CommitOptions{}); err != nil {
						t.Fatal(err)
					}
				}
			}
			from, err := ws.Resolve(ctx, "d@1")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ws.Fork(ctx, from, "f"); err != nil {
				t.Fatal(err)
			}
			whole, err := cairn.OpenStore(store).Usage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			castest.Damage(t, store, manifest.StepKey("d", c.step))

			u, err := cairn.OpenStore(store).Usage(ctx)
			var ue *cairn.UnreadableError
			if !errors.As(err, &ue) || !errors.Is(err, cairn.ErrCorrupt) || strings.Join(ue.Sessions, " ") != "d" ||
				!strings.Contains(err.Error(), "1 session could not be read") || !strings.Contains(err.Error(), "session d") {
				t.Fatalf("Usage error: %v; want an UnreadableError naming session d", err)
			}
			if u == nil {
				t.Fatal("Usage returned no usage beside the damaged session")
			}
			var got []string
			for _, su := range u.Sessions {
				got = append(got, su.Session)
				for _, w := range whole.Sessions {
					if w.Session == su.Session && w.Steps != su.Steps {
						t.Errorf("session %s: %d steps, want %d", su.Session, su.Steps, w.Steps)
					}
				}
			}
			if strings.Join(got, " ") != "a f" {
				t.Errorf("sessions measured: %q; want a f", got)
			}
			if u.GarbageObjects != 0 || u.LiveObjects != whole.LiveObjects {
				t.Errorf("garbage %d objects, live %d; want 0 and %d: the damaged session's objects are not garbage",
					u.GarbageObjects, u.LiveObjects, whole.LiveObjects)
			}
			// Named, the damaged session is reported the same way, not
			// as a session that does not exist.
			if _, err := cairn.OpenStore(store).Usage(ctx, "d"); !errors.As(err, &ue) || errors.Is(err, cairn.ErrNotFound) {
				t.Errorf("Usage(d): %v; want the UnreadableError", err)
			}
			// gc still refuses: it must not sweep past what it cannot read.
			if _, err := cairn.OpenStore(store).GC(ctx, cairn.GCOptions{}); !errors.Is(err, cairn.ErrCorrupt) {
				t.Errorf("GC: %v; want ErrCorrupt", err)
			}
		})
	}
}
