package s3test

import "syscall"

// procAttr has the kernel kill the server if the test binary dies
// without cleaning up (the parent-death signal).
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
