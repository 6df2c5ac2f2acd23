//go:build !windows

package retry

import "syscall"

// connErrors are the errnos of a reset, refused, aborted, broken or
// timed-out connection.
var connErrors = []error{syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.ECONNABORTED, syscall.EPIPE, syscall.ETIMEDOUT}
