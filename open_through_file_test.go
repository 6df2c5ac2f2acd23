package cairn_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestOpenThroughAFile: Open of a local store whose path runs through a
// file (or a loop of symbolic links) succeeded, and the first commit
// then failed saying "mark session s: put sessions/s: open …: not a
// directory", the store's own key and no word of what to fix. As a path
// naming a file is refused by Open, such a path now is too, before any
// request, naming the path; it is ErrInvalid, as both are: the store URL
// is bad input (the CLI already says so, exit 2).
func TestOpenThroughAFile(t *testing.T) {
	ctx := context.Background()
	d := t.TempDir()
	file := filepath.Join(d, "file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop2", filepath.Join(d, "loop1")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop1", filepath.Join(d, "loop2")); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{file, filepath.Join(file, "store"), filepath.Join(d, "loop1", "store")} {
		ws, err := cairn.Open(ctx, path)
		if err == nil {
			s, _ := ws.Session("s")
			_, err = s.Commit(ctx, cairn.JSON([]byte(`1`)), cairn.CommitOptions{})
			ws.Close()
			t.Errorf("Open(%s) succeeded; its first commit: %v", path, err)
			continue
		}
		if !errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), "sessions/") {
			t.Errorf("Open(%s): %v; want ErrInvalid naming the path", path, err)
		}
	}
}
