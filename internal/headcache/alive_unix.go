//go:build unix

package headcache

import (
	"os"
	"syscall"
)

// alive reports whether process pid exists (signal 0 reaches it).
func alive(pid int) bool {
	p, err := os.FindProcess(pid)
	return err == nil && p.Signal(syscall.Signal(0)) == nil
}
