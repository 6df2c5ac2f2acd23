//go:build !unix

package pause

import (
	"errors"
	"fmt"
	"os"
	"runtime"
)

var errCannot = fmt.Errorf("cannot pause a process on %s: %w", runtime.GOOS, errors.ErrUnsupported)

// Stop would pause p; this OS cannot, so it fails with errors.ErrUnsupported.
func Stop(p *os.Process) error { return errCannot }

// Continue would resume p; nothing was paused.
func Continue(p *os.Process) error { return errCannot }
