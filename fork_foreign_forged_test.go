package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestForkOfAForeignStepWithEditedFields: Fork and Diff refuse a step
// read through a workspace of another store (its objects are not in this
// one) by reading this store's step of the same name and comparing IDs;
// they took the name and the ID from the step's exported fields, which a
// caller may set. A foreign step given this store's step's ID passed, and
// the fork acknowledged a first step whose state lies in the other store:
// unreadable here. The step as read decides now: it is refused.
func TestForkOfAForeignStepWithEditedFields(t *testing.T) {
	ctx := context.Background()
	here := cairn.OpenStore(mem.New())
	there := cairn.OpenStore(mem.New())
	s, _ := here.Session("s")
	mine := stepOf(t, s, cairn.JSON([]byte(`{"here":1}`)))
	o, _ := there.Session("s")
	foreign := stepOf(t, o, cairn.JSON([]byte(`{"there":"`+strings.Repeat("t", 100000)+`"}`)))
	forged := *foreign
	forged.ID = mine.ID
	f, err := here.Fork(ctx, &forged, "f")
	if err == nil {
		_, rerr := f.JSON(ctx)
		t.Fatalf("fork of a foreign step given this store's ID: landed %s (read back: %v); want it refused", f, rerr)
	}
	if !errors.Is(err, cairn.ErrInvalid) {
		t.Errorf("fork of a foreign step given this store's ID: %v; want ErrInvalid", err)
	}
	if _, err := here.Diff(ctx, mine, &forged); !errors.Is(err, cairn.ErrInvalid) {
		t.Errorf("diff with a foreign step given this store's ID: %v; want ErrInvalid", err)
	}
}
