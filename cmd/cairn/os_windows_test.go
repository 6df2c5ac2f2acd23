package main

import (
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/windows"
)

// Windows has no FIFOs or device nodes in the file system: the tests
// that need one skip.

func mkfifo(t *testing.T, path string) error {
	t.Skip("no named pipes in the file system on Windows")
	return nil
}

func mknodNull(t *testing.T, path string) error {
	t.Skip("no device nodes on Windows")
	return nil
}

// bindUnixSocket: Windows has AF_UNIX sockets, but cairn's refusal of a
// socket in a directory is only tested on Unix.
func bindUnixSocket(t *testing.T, path string) error {
	t.Skip("Unix sockets as files are tested on Unix only")
	return nil
}

// signal0 stands in for kill(pid, 0): nil while pid runs,
// syscall.ESRCH once it has exited or does not exist.
func signal0(pid int) error {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err == windows.ERROR_INVALID_PARAMETER {
		return syscall.ESRCH
	}
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return err
	}
	const stillActive = 259 // STILL_ACTIVE: no exit code yet
	if code != stillActive {
		return syscall.ESRCH
	}
	return nil
}

// killPid kills pid (TerminateProcess).
func killPid(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
