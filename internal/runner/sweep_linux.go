package runner

import (
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/cairnlog/cairn/internal/targetdir"
)

// sweepTempDirs removes the temporary work directories that runs of this
// user left in the system's temporary directory when they were killed:
// each holds a copy of a session's state, and no run would ever remove
// it. A directory is a dead run's when no process holds its lock and it
// is older than tempGrace (one younger may be a run's that has not
// locked it yet). Only on Linux, where a run's command dies with the run
// (its guard): elsewhere a killed run's command may still be working in
// its directory. Failures are ignored: the sweep is housekeeping.
func sweepTempDirs() {
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), tempPrefix+"*"))
	for _, dir := range matches {
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() || time.Since(fi.ModTime()) < tempGrace {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != uint32(os.Getuid()) {
			continue
		}
		unlock, err := targetdir.Lock(dir)
		if err != nil {
			continue // a live run's, or not ours to judge
		}
		removeTree(dir)
		unlock()
	}
}
