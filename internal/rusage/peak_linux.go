package rusage

import (
	"os"
	"strconv"
	"strings"
)

// SelfPeakRSS returns this process's own peak RSS in bytes (VmHWM in
// /proc/self/status), 0 if unknown. Unlike the ru_maxrss a parent reads
// of a finished child (MaxRSS), it starts afresh at exec: Go starts a
// child with vfork, and the kernel carries the parent's high-water mark
// into the child's ru_maxrss, so a child of a parent that once held
// 300 MiB reports at least 300 MiB, whatever it used itself.
func SelfPeakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, "VmHWM:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}
