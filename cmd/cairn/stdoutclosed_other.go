//go:build !unix

package main

// stdoutClosed is startedWithStdoutClosed(), as main found it.
var stdoutClosed bool

// startedWithStdoutClosed reports whether cairn was started with its
// standard output closed; on this system a closed stdout makes writes
// fail, which the commands see.
func startedWithStdoutClosed() bool { return false }
