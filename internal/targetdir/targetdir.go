// Package targetdir makes and locks the directory a command writes a
// state into: a checkout's --dir and cairn run's work directory. Making
// it records what was made, so that a write that fails removes it again;
// locking it keeps two processes from filling one directory at once.
package targetdir

import (
	"errors"
	"os"
	"path/filepath"
)

// ErrLocked reports a directory another process holds locked (Lock).
var ErrLocked = errors.New("locked by another process")

// Make makes dir and the parents it lacks, and returns a function that
// removes again those it made, if they are empty: what a failed write
// into dir undoes.
func Make(dir string) (unmake func(), err error) {
	var missing []string // dir first, then each missing parent
	for p := filepath.Clean(dir); ; {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			break
		}
		missing = append(missing, p)
		parent := filepath.Dir(p)
		if parent == p {
			break
		}
		p = parent
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return func() {
		for _, p := range missing {
			if os.Remove(p) != nil {
				return
			}
		}
	}, nil
}
