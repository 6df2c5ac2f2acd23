//go:build unix

package targetdir

import (
	"errors"
	"os"
	"syscall"
)

// Lock takes an exclusive lock on directory dir (flock(2) on the
// directory itself, so nothing is written into it) for as long as this
// process lives or until unlock; the kernel drops it when the process
// dies, however it dies. ErrLocked: another process holds it (or this
// one, through another call of Lock).
func Lock(dir string) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, err
	}
	return func() { f.Close() }, nil
}
