//go:build unix

package pause

import (
	"os"
	"syscall"
)

// Stop pauses p (SIGSTOP).
func Stop(p *os.Process) error { return p.Signal(syscall.SIGSTOP) }

// Continue resumes p after Stop (SIGCONT).
func Continue(p *os.Process) error { return p.Signal(syscall.SIGCONT) }
