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

// TestStepReadErrorsNameTheStep: Step.JSON and Step.Files returned the
// tree reader's errors as they were ("one value or file: limit exceeded:
// more than 1 bytes", "tree nesting: limit exceeded"), naming no step, where
// WriteJSON and Checkout say "read s@1: …" (docs/limits.md: a read that
// fails on a limit names the step). Their errors now name it too, and
// still match ErrLimit.
func TestStepReadErrorsNameTheStep(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	s, _ := ws.Session("s")
	js := stepOf(t, s, cairn.JSON([]byte(`{"a":"`+strings.Repeat("x", 5000)+`","b":[1,2,3]}`)))
	src := t.TempDir()
	deep := filepath.Join(src, "x", "y", "z")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(deep, "f"), []byte("f"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, _ := ws.Session("d")
	ds := stepOf(t, d, cairn.Dir(src))
	// Read once, so that the layouts' views are cached and what fails
	// next is the state's own read.
	if _, err := js.JSON(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ds.Files(ctx); err != nil {
		t.Fatal(err)
	}
	if err := ws.SetLimits(cairn.Limits{MaxValueBytes: 100}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.JSON(ctx); !errors.Is(err, cairn.ErrLimit) || !strings.Contains(err.Error(), "s@1") {
		t.Errorf("JSON of s@1 over MaxValueBytes: %v; want ErrLimit naming s@1", err)
	}
	if err := ws.SetLimits(cairn.Limits{MaxDepth: 2}); err != nil {
		t.Fatal(err)
	}
	if _, err := ds.Files(ctx); !errors.Is(err, cairn.ErrLimit) || !strings.Contains(err.Error(), "d@1") {
		t.Errorf("Files of d@1 over MaxDepth: %v; want ErrLimit naming d@1", err)
	}
}
