//go:build unix

package rusage

import (
	"os"
	"runtime"
	"syscall"
	"time"
)

// SelfCPU returns this process's CPU time so far (user and system).
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return cpu(&ru)
}

// Children returns the peak RSS (bytes; the largest of any one child)
// and the total CPU time of this process's children waited for so far.
func Children() (maxRSS int64, cpuTime time.Duration) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) != nil {
		return 0, 0
	}
	return bytes(&ru), cpu(&ru)
}

// MaxRSS returns the peak RSS in bytes of the finished process ps, 0 if
// unknown.
func MaxRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru != nil {
		return bytes(ru)
	}
	return 0
}

func cpu(ru *syscall.Rusage) time.Duration {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// bytes is ru_maxrss in bytes: Darwin counts bytes, the others KiB.
func bytes(ru *syscall.Rusage) int64 {
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}
