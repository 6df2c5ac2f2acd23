//go:build unix

package runner

import (
	"os/exec"
	"syscall"
)

// interrupt asks the command to end: SIGTERM, to its whole process
// group if it has one of its own.
func interrupt(cmd *exec.Cmd) { signalCommand(cmd, syscall.SIGTERM) }

// kill kills the command, and its whole process group if it has one of
// its own.
func kill(cmd *exec.Cmd) { signalCommand(cmd, syscall.SIGKILL) }

func signalCommand(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.SysProcAttr != nil && cmd.SysProcAttr.Setpgid {
		syscall.Kill(-cmd.Process.Pid, sig) // the whole group
	} else {
		cmd.Process.Signal(sig)
	}
}

// endGroup kills what is left of the process group of a command that has
// exited (processes it started and did not wait for), if it had a group of
// its own; with none left it does nothing.
func endGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr != nil && cmd.SysProcAttr.Setpgid && cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
