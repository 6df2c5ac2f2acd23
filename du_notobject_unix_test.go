//go:build unix

package cairn_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/manifest"
)

// TestUsageGoesPastSomethingNotAnObject: a directory or a link where a
// step object belongs in a local store is one session's damage, as verify
// and sessions report it, and du measures the other sessions. Usage
// failed whole ("the store … holds a directory where step d@5 belongs"),
// so cairn du printed nothing but that, while an S3 folder marker at the
// same key was already passed over per session.
func TestUsageGoesPastSomethingNotAnObject(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		step  uint64 // the step of d, whose head is step 3
		place func(path string) error
		words string
	}{
		{"directory above the head", 5, func(p string) error { return os.Mkdir(p, 0o755) }, "a directory where step d@5 belongs"},
		{"directory in place of the head", 3, func(p string) error {
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.Mkdir(p, 0o755)
		}, "a directory where step d@3 belongs"},
		{"link in place of a step below the head", 2, func(p string) error {
			if err := os.Rename(p, p+".away"); err != nil {
				return err
			}
			return os.Symlink(filepath.Base(p)+".away", p)
		}, "step d@2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ws, err := cairn.Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"a", "d"} {
				s, _ := ws.Session(name)
				for i := 1; i <= 3; i++ {
					doc := `{"` + name + `":` + strings.Repeat("1", i) + `}`
					if _, err := s.Commit(ctx, cairn.JSON([]byte(doc)), cairn.CommitOptions{}); err != nil {
						t.Fatal(err)
					}
				}
			}
			whole, err := ws.Usage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ws.Close()
			if err := c.place(filepath.Join(dir, filepath.FromSlash(manifest.StepKey("d", c.step)))); err != nil {
				t.Fatal(err)
			}

			ws, err = cairn.Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			u, err := ws.Usage(ctx)
			var ue *cairn.UnreadableError
			if !errors.As(err, &ue) || strings.Join(ue.Sessions, " ") != "d" || !strings.Contains(err.Error(), c.words) {
				t.Fatalf("Usage error: %v; want an UnreadableError naming session d and saying %q", err, c.words)
			}
			if strings.Contains(err.Error(), "steps/") {
				t.Errorf("Usage error names a store key: %v", err)
			}
			if u == nil || len(u.Sessions) != 1 || u.Sessions[0].Session != "a" || u.Sessions[0].Steps != whole.Sessions[0].Steps {
				t.Fatalf("Usage measured %+v beside the damaged session; want session a as before", u)
			}
			if u.GarbageObjects != 0 {
				t.Errorf("garbage %d objects; want 0: the damaged session's objects are not garbage", u.GarbageObjects)
			}
		})
	}
}
