package main

import (
	"errors"
	"syscall"

	"golang.org/x/sys/windows"
)

// brokenPipe reports whether err is a write to a pipe whose reader went
// away. Windows says so with ERROR_NO_DATA ("The pipe is being closed")
// or ERROR_BROKEN_PIPE, never EPIPE, and raises no SIGPIPE.
func brokenPipe(err error) bool {
	return errors.Is(err, windows.ERROR_NO_DATA) || errors.Is(err, windows.ERROR_BROKEN_PIPE) || errors.Is(err, syscall.EPIPE)
}
