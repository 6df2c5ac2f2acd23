// Package rusage reads the CPU time and peak memory of this process and
// of finished child processes, for the benchmarks (getrusage on Unix).
// What an OS does not account reads as zero: Windows has no
// RUSAGE_CHILDREN, and a finished process's peak working set is gone
// with its handle once os/exec has waited for it.
package rusage
