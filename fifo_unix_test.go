//go:build unix

package cairn_test

import (
	"syscall"
	"testing"
)

func mkfifo(t *testing.T, path string) error { return syscall.Mkfifo(path, 0o644) }
