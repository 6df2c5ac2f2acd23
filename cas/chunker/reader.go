package chunker

import (
	"errors"
	"io"
)

// errBadRead reports a reader that returned a count outside [0, len(p)].
var errBadRead = errors.New("chunker: reader returned an invalid count")

// maxEmptyReads is how many consecutive (0, nil) reads the Reader accepts
// before giving up with io.ErrNoProgress, as bufio does.
const maxEmptyReads = 100

// Reader cuts the bytes of an io.Reader into the same chunks Split would
// give for the whole stream, holding one buffer of max(2×Max, 64 KiB) bytes
// in memory.
type Reader struct {
	r          io.Reader
	c          cutter
	buf        []byte
	start, end int   // unconsumed bytes are buf[start:end]
	err        error // first error from r (io.EOF at the end), sticky
}

// NewReader returns a Reader that chunks r with params p. It panics if p is
// invalid (see Validate).
func (p Params) NewReader(r io.Reader) *Reader {
	c := p.mustCutter()
	return &Reader{r: r, c: c, buf: make([]byte, max(2*c.max, 64<<10))}
}

// Next returns the next chunk of the stream. At the end of the stream it
// returns nil, io.EOF. If the underlying reader fails, Next returns the
// chunks that are already determined and then that error.
//
// The returned slice points into the Reader's buffer: it is valid only until
// the next call to Next, which may overwrite it. Copy it to keep it.
func (c *Reader) Next() ([]byte, error) {
	if c.end-c.start < c.c.max && c.err == nil {
		c.fill()
	}
	avail := c.end - c.start
	if avail == 0 || (avail < c.c.max && c.err != io.EOF) {
		// Nothing left, or the chunk would depend on bytes a failed
		// reader never delivered.
		return nil, c.err
	}
	n := c.c.cut(c.buf[c.start:c.end])
	chunk := c.buf[c.start : c.start+n : c.start+n]
	c.start += n
	return chunk, nil
}

// fill moves the unconsumed bytes to the front of the buffer and reads until
// the buffer is full or r reports an error.
func (c *Reader) fill() {
	if c.start > 0 {
		c.end = copy(c.buf, c.buf[c.start:c.end])
		c.start = 0
	}
	empty := 0
	for c.end < len(c.buf) {
		n, err := c.r.Read(c.buf[c.end:])
		if n < 0 || n > len(c.buf)-c.end {
			c.err = errBadRead
			return
		}
		c.end += n
		if err != nil {
			c.err = err
			return
		}
		if n > 0 {
			empty = 0
		} else if empty++; empty >= maxEmptyReads {
			c.err = io.ErrNoProgress
			return
		}
	}
}
