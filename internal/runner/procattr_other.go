//go:build unix && !linux

package runner

import "syscall"

// procAttr starts the command in a process group of its own (if
// newGroup). Without Linux's parent-death signal, a command whose
// supervisor was SIGKILLed runs on until its next commit fails.
func procAttr(newGroup bool) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: newGroup}
}
