package rusage

import (
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// SelfCPU returns this process's CPU time so far (user and kernel).
func SelfCPU() time.Duration {
	var creation, exit, kernel, user windows.Filetime
	if windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &user) != nil {
		return 0
	}
	return ticks(kernel) + ticks(user)
}

// Children returns zero: Windows keeps no totals of a process's
// finished children.
func Children() (maxRSS int64, cpuTime time.Duration) { return 0, 0 }

// MaxRSS returns 0: the peak working set of a finished process is not
// kept in os.ProcessState.
func MaxRSS(ps *os.ProcessState) int64 { return 0 }

// ticks converts a FILETIME duration (100 ns units) to a Duration.
func ticks(ft windows.Filetime) time.Duration {
	return time.Duration(uint64(ft.HighDateTime)<<32|uint64(ft.LowDateTime)) * 100
}
