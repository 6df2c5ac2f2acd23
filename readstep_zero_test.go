package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestReadStepZeroIsInvalid: Workspace.ReadStep(s, 0) said "step s@0:
// not found", as if a step 0 might exist, where Session.Step(0) and
// Resolve("s@0") say it is bad input. It is now ErrInvalid, the same
// words.
func TestReadStepZeroIsInvalid(t *testing.T) {
	ws := cairn.OpenStore(mem.New())
	commitSmall(t, ws, "s", 1)
	_, err := ws.ReadStep(context.Background(), "s", 0)
	if !errors.Is(err, cairn.ErrInvalid) || errors.Is(err, cairn.ErrNotFound) || !strings.Contains(err.Error(), "numbered from 1") {
		t.Errorf("ReadStep(s, 0): %v; want ErrInvalid saying steps are numbered from 1", err)
	}
}
