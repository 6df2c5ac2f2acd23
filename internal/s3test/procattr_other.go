//go:build !linux

package s3test

import "syscall"

// procAttr: only Linux has a parent-death signal; elsewhere a test
// binary that dies without cleaning up leaves its server running.
func procAttr() *syscall.SysProcAttr { return nil }
