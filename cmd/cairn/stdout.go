package main

import (
	"errors"
	"fmt"
	"io"
)

// errReaderGone is what writes to stdout return once its reader went
// away (EPIPE): the command stops, and cairn exits 0 without a message.
var errReaderGone = errors.New("stdout reader went away")

// errStdoutClosed is what writes to stdout return when cairn was
// started with it closed (cairn log s >&-): the Go runtime puts
// /dev/null in its place, and without this the output vanished and the
// command exited 0, where a Unix tool says it could not write.
var errStdoutClosed = errors.New("standard output is closed (started with >&-): what the command prints has nowhere to go")

// stdoutWriter is cairn's stdout. It remembers a closed pipe, so that
// later writes fail at once and run can exit quietly, and any other
// failed write, so that a command whose output was lost (a full disk)
// does not exit 0 even if it ignored the error.
type stdoutWriter struct {
	w      io.Writer
	gone   bool
	closed bool  // started with stdout closed: every write fails
	err    error // the first write error other than EPIPE
}

func (s *stdoutWriter) Write(p []byte) (int, error) {
	if s.closed {
		if s.err == nil {
			s.err = errStdoutClosed
		}
		return 0, errStdoutClosed
	}
	if s.gone {
		return 0, errReaderGone
	}
	n, err := s.w.Write(p)
	if brokenPipe(err) {
		s.gone = true
		return n, fmt.Errorf("write stdout: %w", errReaderGone)
	}
	if err != nil && s.err == nil {
		s.err = err
	}
	return n, err
}

func (s *stdoutWriter) readerGone() bool { return s.gone }

// underlying returns the writer stdout wraps, to hand to a child process
// (an *os.File is passed on directly, without a copying pipe).
func underlying(w io.Writer) io.Writer {
	if s, ok := w.(*stdoutWriter); ok {
		return s.w
	}
	return w
}
