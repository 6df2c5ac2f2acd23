//go:build unix

package main

import "golang.org/x/sys/unix"

// stdoutClosed is startedWithStdoutClosed(), as main found it.
var stdoutClosed bool

// startedWithStdoutClosed reports whether cairn was started with its
// standard output closed (cairn serve >&-). The Go runtime opens
// /dev/null read-write in place of a closed standard descriptor, before
// main runs, so writes to it vanish without an error; a shell's
// > /dev/null opens it write-only. Call it before anything else opens
// a file.
func startedWithStdoutClosed() bool {
	fl, err := unix.FcntlInt(1, unix.F_GETFL, 0)
	if err != nil || fl&unix.O_ACCMODE != unix.O_RDWR {
		return false
	}
	var out, null unix.Stat_t
	if unix.Fstat(1, &out) != nil || unix.Stat("/dev/null", &null) != nil {
		return false
	}
	return out.Mode&unix.S_IFMT == unix.S_IFCHR && out.Rdev == null.Rdev
}
