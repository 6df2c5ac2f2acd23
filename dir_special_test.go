package cairn_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// A directory holding a FIFO is bad input, named by its path inside the
// directory, and nothing is written.
func TestDirWithFIFOIsInvalid(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o644)
	if err := mkfifo(t, filepath.Join(dir, "sub", "pipe")); err != nil {
		t.Skip(err)
	}
	ws := cairn.OpenStore(mem.New())
	s, _ := ws.Session("s")
	_, err := s.Commit(ctx, cairn.Dir(dir), cairn.CommitOptions{})
	if !errors.Is(err, cairn.ErrInvalid) {
		t.Errorf("err = %v, want ErrInvalid", err)
	}
	if err == nil || !strings.Contains(err.Error(), "sub/pipe") || strings.Contains(err.Error(), dir) {
		t.Errorf("err = %v; want it to name sub/pipe relative to the directory", err)
	}
	if _, err := s.Head(ctx); !errors.Is(err, cairn.ErrNotFound) {
		t.Errorf("head after a refused commit: %v", err)
	}
}
