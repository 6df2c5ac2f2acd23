package export_test

import (
	"strings"
	"testing"

	"github.com/cairnlog/cairn/internal/export"
)

// TestManifestHeadErrorsInUsersWords: a --heads manifest whose head has a
// field of the wrong type was refused with Go's decoder words ("cannot
// unmarshal number 1.5 into Go struct field StepRef.step of type
// uint64"), and one with a missing or malformed field as only "bad head
// f2@2". Each now names the head and the field, and what it wants.
func TestManifestHeadErrorsInUsersWords(t *testing.T) {
	id := strings.Repeat("a", 64)
	for _, c := range []struct{ heads, want string }{
		{`{"session":"f","step":1.5,"id":"` + id + `"}`, "head 1: step: want a step number (a whole number, 1 or more), got number 1.5"},
		{`{"session":"f","step":99999999999999999999,"id":"` + id + `"}`, "head 1: step: want a step number (a whole number, 1 or more), got number 99999999999999999999"},
		{`{"session":5,"step":1,"id":"` + id + `"}`, "head 1: session: want a session name, got number"},
		{`{"session":"f","step":1,"id":"` + id + `"},7`, "head 2: want an object of session, step and id, got number"},
		{`{"session":"f","step":1}`, "head 1 (f@1): id: want the step's hash, 64 hex digits"},
		{`{"session":"f","step":1,"id":"xyz"}`, "head 1 (f@1): id: want the step's hash, 64 hex digits"},
		{`{"session":"f","step":0,"id":"` + id + `"}`, "head 1 (f@0): step: want a step number (a whole number, 1 or more)"},
		{`{"step":1,"id":"` + id + `"}`, "head 1: session: want a session name"},
		{`{"session":"f","step":1,"id":"` + id + `","steps":"x"}`, "head 1: steps: want the trajectory's number of steps, 1 or more, got string"},
		{`{"session":"f","step":1,"id":"` + id + `","steps":-1}`, "head 1 (f@1): steps: want the trajectory's number of steps, 1 or more"},
	} {
		m := `{"version":1,"heads":[` + c.heads + `]}`
		err := export.ReadManifestHeads(strings.NewReader(m), func(export.ManifestHead) error { return nil })
		if err == nil || !strings.HasSuffix(err.Error(), c.want) || strings.Contains(err.Error(), "Go ") || strings.Contains(err.Error(), "StepRef") {
			t.Errorf("heads %s: %v; want it to end %q", c.heads, err, c.want)
		}
	}
}
