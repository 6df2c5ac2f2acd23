//go:build unix

package main

import (
	"syscall"
	"testing"
)

// Special files and process probes the tests use; os_windows_test.go
// has what Windows offers instead.

func mkfifo(t *testing.T, path string) error { return syscall.Mkfifo(path, 0o644) }

// mknodNull makes a character device at path with Linux's numbers for
// the null device (major 1, minor 3).
func mknodNull(t *testing.T, path string) error {
	return syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|3)
}

// bindUnixSocket leaves a Unix socket at path until the test ends.
func bindUnixSocket(t *testing.T, path string) error {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return err
	}
	t.Cleanup(func() { syscall.Close(fd) })
	return syscall.Bind(fd, &syscall.SockaddrUnix{Name: path})
}

// signal0 is kill(pid, 0): nil while pid exists (a zombie too),
// syscall.ESRCH once it is gone.
func signal0(pid int) error { return syscall.Kill(pid, 0) }

// killPid sends pid SIGKILL.
func killPid(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
