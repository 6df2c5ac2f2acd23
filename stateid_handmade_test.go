package cairn_test

import (
	"errors"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestStateIDOfHandmadeStep: StateIDOf of StateOf a step that was not
// read from a workspace (nil, the zero Step) returned the zero StateID
// with no error, so two such states compared equal, and equal to nothing
// a caller could tell from a real answer; committing the same state is
// refused with ErrInvalid. StateIDOf now refuses it the same way, as its
// doc says of a state that cannot be built.
func TestStateIDOfHandmadeStep(t *testing.T) {
	for name, st := range map[string]*cairn.Step{"nil": nil, "the zero Step": {}, "a Step with fields only": {Session: "s", Number: 1}} {
		id, err := cairn.StateIDOf(cairn.StateOf(st))
		if !errors.Is(err, cairn.ErrInvalid) {
			t.Errorf("StateIDOf(StateOf(%s)) = %v, %v; want ErrInvalid", name, id, err)
		}
	}
}
