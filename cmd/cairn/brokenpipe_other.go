//go:build !windows

package main

import (
	"errors"
	"syscall"
)

// brokenPipe reports whether err is a write to a pipe whose reader went
// away (EPIPE).
func brokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }
