package runner

import (
	"os"
	"syscall"
	"unsafe"
)

// procAttr starts the command in a process group of its own (if
// newGroup) and has the kernel kill it when the thread that started it
// ends: a SIGKILLed cairn run does not leave its command running. (The
// Go runtime ends a thread only when a goroutine locked to it exits,
// which nothing here does.)
func procAttr(newGroup bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: newGroup, Pdeathsig: syscall.SIGKILL}
}

// isTerminal reports whether f is a terminal (TCGETS succeeds on it).
func isTerminal(f *os.File) bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}
