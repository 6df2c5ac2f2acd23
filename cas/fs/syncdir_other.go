//go:build !windows

package fs

import (
	"errors"
	"os"
	"syscall"
)

// syncDir fsyncs directory dir, making a name just renamed or linked
// into it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	// Some file systems refuse fsync on directories; the rename is still atomic.
	if errors.Is(err, syscall.EINVAL) {
		return nil
	}
	return err
}
