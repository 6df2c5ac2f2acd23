package retry

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// connErrors are the errors of a reset, refused, aborted, broken or
// timed-out connection. Windows sockets report the WSAE codes (a write
// to a connection the peer reset fails with WSAECONNRESET or
// WSAECONNABORTED), which are not package syscall's ECONNRESET and the
// like, invented for Windows; both are listed.
var connErrors = []error{
	windows.WSAECONNRESET, windows.WSAECONNREFUSED, windows.WSAECONNABORTED, windows.WSAETIMEDOUT,
	syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.ECONNABORTED, syscall.EPIPE, syscall.ETIMEDOUT,
}
