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

// TestCheckoutIntoSymlinkToNothing: Step.Checkout into a path that is a
// symbolic link to nothing made the directory the link names, wherever
// that is, and wrote the state there, where mkdir of the path fails and
// cairn checkout --dir refuses it as bad input ("a symlink to nothing").
// Only a link to a directory is written through; a link to nothing is
// now ErrInvalid, and nothing is made at its target.
func TestCheckoutIntoSymlinkToNothing(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	s, _ := ws.Session("s")
	st := stepOf(t, s, cairn.JSON([]byte(`{"a":1}`)))
	base := t.TempDir()
	target := filepath.Join(base, "elsewhere")
	link := filepath.Join(base, "dangling")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	err := st.Checkout(ctx, link)
	if !errors.Is(err, cairn.ErrInvalid) || !strings.Contains(err.Error(), "symbolic link to nothing") {
		t.Errorf("checkout into a symlink to nothing: %v; want ErrInvalid saying so", err)
	}
	if _, err := os.Lstat(target); err == nil {
		t.Errorf("checkout made %s, the target of the link to nothing", target)
	}
}
