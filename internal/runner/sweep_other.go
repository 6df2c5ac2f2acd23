//go:build !linux

package runner

// sweepTempDirs does nothing outside Linux: there a killed run's command
// may outlive it, still working in the directory it was given (see
// sweep_linux.go).
func sweepTempDirs() {}
