// Package targetdir makes and locks the directory a command writes a
// state into: a checkout's --dir and cairn run's work directory. Making
// it records what was made, so that a write that fails removes it again;
// locking it keeps two processes from filling one directory at once.
package targetdir

import (
	"context"
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

// heldKey is the context key under which Held records a directory whose
// lock the caller holds.
type heldKey struct{}

// Held returns ctx saying that its caller holds dir's lock (Lock) and
// writes into dir itself: a checkout into dir under it (Step.Checkout)
// takes no lock of its own, which would meet the caller's.
func Held(ctx context.Context, dir string) context.Context {
	return context.WithValue(ctx, heldKey{}, dir)
}

// IsHeld reports whether ctx says (Held) that its caller holds the lock
// of dir, named by the same path or another.
func IsHeld(ctx context.Context, dir string) bool {
	held, ok := ctx.Value(heldKey{}).(string)
	if !ok {
		return false
	}
	a, err := os.Stat(held)
	if err != nil {
		return false
	}
	b, err := os.Stat(dir)
	return err == nil && os.SameFile(a, b)
}
