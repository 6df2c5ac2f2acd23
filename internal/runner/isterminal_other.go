//go:build unix && !linux && !darwin && !ios && !dragonfly && !freebsd && !netbsd && !openbsd

package runner

import "os"

// isTerminal reports whether f is a character device, near enough to a
// terminal here.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
