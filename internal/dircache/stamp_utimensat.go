//go:build linux || freebsd || openbsd

package dircache

import (
	"os"

	"golang.org/x/sys/unix"
)

// stampNow sets the modification time of f, the file at path, to the
// filesystem's current time (UTIME_NOW: the clock and granularity the
// filesystem stamps files with, which may lag the process's clock) and
// returns it in ns.
func stampNow(f *os.File, path string) (int64, error) {
	now := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_NOW}}
	if err := unix.UtimesNanoAt(unix.AT_FDCWD, path, now, 0); err != nil {
		return 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.ModTime().UnixNano(), nil
}
