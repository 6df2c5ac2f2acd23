package runner

import (
	"os"
	"path/filepath"
	"time"

	"github.com/cairnlog/cairn/internal/targetdir"
)

// tempPrefix begins the name of the temporary work directory of a run
// given no Config.Dir. A run holds a lock on its directory (targetdir.Lock) for
// as long as it lives; one killed before it removed the directory
// (SIGKILL, the OOM killer) leaves it, the session's state in it, and a
// later run on the machine removes it (sweepTempDirs). Runs of earlier
// versions named theirs "cairn-run-" and held no lock: those are never
// taken for dead.
const tempPrefix = "cairn-run."

// tempGrace: a directory younger than this may be one a run has just
// made and not yet locked; it is left alone.
const tempGrace = time.Minute

// makeTempDir makes a run's temporary work directory and locks it for
// the run. A directory that cannot be locked is used unlocked: a sweep
// cannot lock it either, so it does not take it for a dead run's.
func makeTempDir() (dir string, unlock func(), err error) {
	if dir, err = os.MkdirTemp("", tempPrefix+"*"); err != nil {
		return "", nil, err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	if unlock, err = targetdir.Lock(dir); err != nil {
		unlock = func() {}
	}
	return dir, unlock, nil
}

// removeTree removes dir and everything in it.
func removeTree(dir string) error { return os.RemoveAll(dir) }
