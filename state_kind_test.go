package cairn_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestWrongKindIsInvalid: asking a directory state for JSON, a JSON
// state for its files, or a diff of one with the other is the caller's
// mistake: ErrInvalid, as the HTTP API and the CLI say it, not an
// unclassified error that reads as a failure of the store.
func TestWrongKindIsInvalid(t *testing.T) {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	sd, _ := ws.Session("d")
	d := stepOf(t, sd, cairn.Dir(dir))
	sj, _ := ws.Session("j")
	j := stepOf(t, sj, cairn.JSON([]byte(`{"a":1}`)))
	calls := map[string]func() error{
		"JSON of a directory":      func() error { _, err := d.JSON(ctx); return err },
		"WriteJSON of a directory": func() error { return d.WriteJSON(ctx, &nopWriter{}) },
		"Files of JSON":            func() error { _, err := j.Files(ctx); return err },
		"Diff of JSON and a dir":   func() error { _, err := ws.Diff(ctx, j, d); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, cairn.ErrInvalid) {
			t.Errorf("%s = %v, want ErrInvalid", name, err)
		}
	}
}

type nopWriter struct{}

func (*nopWriter) Write(p []byte) (int, error) { return len(p), nil }
