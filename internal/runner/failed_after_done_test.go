package runner

import (
	"bytes"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// A command that marks its session done and then exits non-zero has
// nothing left to restart: the run ends as for any done session, the
// same whatever the restart budget. It used to announce a restart it
// never made (budget > 0) or, with --restart 0, fail saying it gave up
// "without a new step" right after one landed.
func TestRunFailedAfterDone(t *testing.T) {
	for _, restarts := range []int{0, 2} {
		ws, exe := setup(t, "donefail")
		var log bytes.Buffer
		var slept pauses
		res, err := Run(t.Context(), ws, Config{Session: "d", Command: []string{exe}, Restarts: restarts,
			Log: &log, sleep: slept.sleep})
		if err != nil {
			t.Errorf("restarts %d: %v\n%s", restarts, err, log.String())
		}
		if res.Starts != 1 || res.Restarts != 0 || res.Status != cairn.Done || len(slept) != 0 {
			t.Errorf("restarts %d: result %+v, pauses %v\n%s", restarts, res, slept, log.String())
		}
		if strings.Contains(log.String(), "restart 1") {
			t.Errorf("restarts %d: log announces a restart:\n%s", restarts, log.String())
		}
		if !strings.Contains(log.String(), "exited with status 3 at d@1") {
			t.Errorf("restarts %d: log does not say how the command ended:\n%s", restarts, log.String())
		}
	}
}
