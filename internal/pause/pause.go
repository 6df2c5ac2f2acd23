// Package pause stops and continues processes, for the test harnesses
// that make a server or a cairn process hang (internal/s3test,
// internal/soak). Unix has SIGSTOP and SIGCONT; Windows has no way to
// pause another process short of suspending each of its threads, which
// nothing here needs, so there both return an error that
// errors.Is(err, errors.ErrUnsupported).
package pause
