package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// errReaderGone is what writes to stdout return once its reader went
// away (EPIPE): the command stops, and cairn exits 0 without a message.
var errReaderGone = errors.New("stdout reader went away")

// stdoutWriter is cairn's stdout. It remembers a closed pipe, so that
// later writes fail at once and run can exit quietly, and any other
// failed write, so that a command whose output was lost (a full disk)
// does not exit 0 even if it ignored the error.
type stdoutWriter struct {
	w    io.Writer
	gone bool
	err  error // the first write error other than EPIPE
}

func (s *stdoutWriter) Write(p []byte) (int, error) {
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

// spoolMemory is how much of a spooled output is held in memory; the
// rest goes to a temporary file.
const spoolMemory = 1 << 20

// spool holds a command's output until the command has done all its
// reading, so that a command that fails part-way (a limit, a damaged
// step) writes nothing rather than a shorter document that reads as
// whole. Its first spoolMemory bytes are kept in memory and the rest in
// a temporary file, so memory stays bounded however long the output;
// a command whose output is one state checks the state against the
// limits instead (Step.WriteJSON), and needs no spool.
type spool struct {
	mem  bytes.Buffer
	file *os.File
}

func (s *spool) Write(p []byte) (int, error) {
	if s.file == nil && s.mem.Len()+len(p) <= spoolMemory {
		return s.mem.Write(p)
	}
	if s.file == nil {
		f, err := os.CreateTemp("", "cairn-output-*")
		if err != nil {
			return 0, fmt.Errorf("keep the output past %d bytes in a temporary file (it is written once the command has read everything): %w", spoolMemory, err)
		}
		s.file = f
	}
	return s.file.Write(p)
}

// writeTo writes everything spooled to w.
func (s *spool) writeTo(w io.Writer) error {
	if _, err := w.Write(s.mem.Bytes()); err != nil {
		return err
	}
	if s.file == nil {
		return nil
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("read back the output kept in a temporary file: %w", err)
	}
	buf := make([]byte, 64<<10)
	for {
		n, rerr := s.file.Read(buf)
		if n > 0 {
			if _, err := w.Write(buf[:n]); err != nil {
				return err
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return fmt.Errorf("read back the output kept in a temporary file: %w", rerr)
		}
	}
}

// close removes the temporary file, if there is one.
func (s *spool) close() {
	if s.file != nil {
		s.file.Close()
		os.Remove(s.file.Name())
	}
}
