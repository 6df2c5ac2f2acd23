//go:build unix && !linux

package runner

import (
	"os"
	"syscall"
)

// procAttr starts the command in a process group of its own (if
// newGroup). Without Linux's parent-death signal, a command whose
// supervisor was SIGKILLed runs on until its next commit fails.
func procAttr(newGroup bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: newGroup}
}

// isTerminal reports whether f is a character device, near enough to a
// terminal here.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
