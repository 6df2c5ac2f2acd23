package export

import (
	"bytes"
	"errors"
	"io"
	"os"
)

// lineMemBytes bounds what a lineGate holds of a line in memory; the
// rest of a longer line waits in a temporary file. A variable for tests.
var lineMemBytes = 4 << 20

// lineGate passes on to out only whole lines (Options.WholeLines): the
// start of a line waits, in memory up to lineMemBytes and beyond that in
// a temporary file, until its newline is written, then goes out with it.
// A line cut short by a failure is never written: close drops it.
// What it holds is one line at most, and in memory at most lineMemBytes,
// so a long trajectory's line, written a message at a time, costs disk,
// not memory, while it is built.
type lineGate struct {
	out   io.Writer
	mem   []byte
	spill *os.File // the line's start beyond mem, if any
	err   error    // out's, once it failed
}

func newLineGate(out io.Writer) *lineGate { return &lineGate{out: out} }

func (g *lineGate) Write(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n := len(p)
	if i := bytes.LastIndexByte(p, '\n'); i >= 0 {
		if err := g.release(p[:i+1]); err != nil {
			return 0, err
		}
		p = p[i+1:]
	}
	if err := g.hold(p); err != nil {
		return 0, err
	}
	return n, nil
}

// hold keeps p, the continuation of the line held.
func (g *lineGate) hold(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	if g.spill == nil && len(g.mem)+len(p) <= lineMemBytes {
		g.mem = append(g.mem, p...)
		return nil
	}
	if g.spill == nil {
		f, err := os.CreateTemp("", "cairn-export-line-*")
		if err != nil {
			return g.fail(err)
		}
		g.spill = f
		if _, err := f.Write(g.mem); err != nil {
			return g.fail(err)
		}
		g.mem = g.mem[:0]
	}
	if _, err := g.spill.Write(p); err != nil {
		return g.fail(err)
	}
	return nil
}

// release writes the line held and end, which completes it (and may
// hold more whole lines), to out.
func (g *lineGate) release(end []byte) error {
	if g.spill != nil {
		if _, err := g.spill.Seek(0, io.SeekStart); err != nil {
			return g.fail(err)
		}
		if _, err := io.Copy(g.out, g.spill); err != nil {
			return g.fail(err)
		}
		g.dropSpill()
	}
	if len(g.mem) > 0 {
		if _, err := g.out.Write(g.mem); err != nil {
			return g.fail(err)
		}
		g.mem = g.mem[:0]
		if cap(g.mem) > 1<<16 {
			g.mem = nil // a long line's buffer is not kept for the next
		}
	}
	if _, err := g.out.Write(end); err != nil {
		return g.fail(err)
	}
	return nil
}

func (g *lineGate) fail(err error) error {
	if g.err == nil {
		g.err = err
	}
	return err
}

func (g *lineGate) dropSpill() {
	if g.spill != nil {
		name := g.spill.Name()
		g.spill.Close()
		os.Remove(name)
		g.spill = nil
	}
}

// close drops a line left unfinished, and says so if it held one.
func (g *lineGate) close() error {
	cut := g.spill != nil || len(g.mem) > 0
	g.dropSpill()
	g.mem = nil
	if cut {
		return errLineCut
	}
	return nil
}

// errLineCut is close's when a line was left unfinished.
var errLineCut = errors.New("a line was left unfinished: it was not written")
