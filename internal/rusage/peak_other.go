//go:build !linux

package rusage

// SelfPeakRSS returns 0 where this process's own peak RSS, apart from
// what it may have inherited at its start, is not known: callers fall
// back on MaxRSS.
func SelfPeakRSS() int64 { return 0 }
