package jsontext

import "io"

// StopReader reads R as JSON text, and ends (io.EOF) after the read that
// brought a byte no JSON text may hold where it stands: outside a string
// anything but whitespace, a structural character or a byte of a number
// or of true, false and null (every byte of binary data from 0x80 up,
// a NUL, a letter of prose); inside a string a control character. So a
// reader of input that is no JSON (a binary file, /dev/zero, a stream
// that never ends) stops at once instead of reading it all; what it did
// read is invalid, and the parser that reads it next says why, at the
// same offset as of the whole input. It checks nothing else: valid
// text is read whole, as R gives it.
type StopReader struct {
	R        io.Reader
	inString bool
	escaped  bool
	stopped  bool
}

// jsonByte holds the bytes JSON text may hold outside strings.
var jsonByte = func() (t [256]bool) {
	for _, c := range []byte(" \t\r\n{}[],:-+.0123456789eEtrufalsn") {
		t[c] = true
	}
	return t
}()

// Read implements io.Reader.
func (s *StopReader) Read(p []byte) (int, error) {
	if s.stopped {
		return 0, io.EOF
	}
	n, err := s.R.Read(p)
	for _, c := range p[:n] {
		switch {
		case s.escaped:
			s.escaped = false
		case s.inString && c == '\\':
			s.escaped = true
		case c == '"':
			s.inString = !s.inString
		case s.inString && c < 0x20, !s.inString && !jsonByte[c]:
			// The whole read goes on (a byte order mark, a UTF-8
			// sequence after it: the parser's words may need them).
			s.stopped = true
			return n, nil
		}
	}
	return n, err
}
