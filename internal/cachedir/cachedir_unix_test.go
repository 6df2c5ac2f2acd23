//go:build unix

package cachedir

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestReadNamedPipe: a named pipe where a cache file was (a crafted run
// record, say) is no cache file. Opening it waited for a writer for
// ever: cairn run hung before it ran anything, deaf to SIGTERM.
func TestReadNamedPipe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.run")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Read(path, 1<<16)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("read of a named pipe: no error")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("read of a named pipe still waiting after 5s")
	}
}
