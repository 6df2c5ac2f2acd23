package runner

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// procAttr starts the command in a console process group of its own (if
// newGroup), so that interrupt can send it a Ctrl-Break without reaching
// cairn itself. Windows has no parent-death signal, and a process group
// here groups only console events: a command whose supervisor was
// killed runs on until its next commit fails, and helpers it started
// are not killed with it.
func procAttr(newGroup bool) *syscall.SysProcAttr {
	if !newGroup {
		return nil
	}
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

// isTerminal reports whether f is a console.
func isTerminal(f *os.File) bool {
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(f.Fd()), &mode) == nil
}

// interrupt asks the command to end. Windows has no SIGTERM; the
// nearest is a Ctrl-Break console event (os.Interrupt in a Go program,
// SIGBREAK in C, Python and Node.js), which can be sent to a process
// group of its own. A command left in the console's group (its stdin is
// the console) got the console's own Ctrl-C or close event, the events
// that end cairn run on Windows, as cairn did, and is killed if it does
// not end within the grace period. When no console is shared (cairn run
// detached from one), nothing gentler than killing it is left.
func interrupt(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil || cmd.SysProcAttr.CreationFlags&windows.CREATE_NEW_PROCESS_GROUP == 0 {
		return
	}
	if err := windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(cmd.Process.Pid)); err != nil {
		cmd.Process.Kill()
	}
}

// kill kills the command (TerminateProcess); processes it started are
// not killed with it.
func kill(cmd *exec.Cmd) { cmd.Process.Kill() }

// endGroup does nothing on Windows: a console process group only routes
// console events, and nothing kills a group (see the package's docs).
func endGroup(*exec.Cmd) {}
