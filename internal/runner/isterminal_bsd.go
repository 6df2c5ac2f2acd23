//go:build darwin || ios || dragonfly || freebsd || netbsd || openbsd

package runner

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether f is a terminal (TIOCGETA succeeds on it).
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TIOCGETA)
	return err == nil
}
