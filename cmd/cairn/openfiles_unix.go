//go:build unix

package main

import "golang.org/x/sys/unix"

// openFileLimit returns how many files this process may have open at
// once (RLIMIT_NOFILE, whose soft limit the Go runtime raises to the
// hard one at start), or 0 if it cannot tell or there is no limit.
func openFileLimit() uint64 {
	var l unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &l) != nil || l.Cur == unix.RLIM_INFINITY {
		return 0
	}
	return uint64(l.Cur)
}
