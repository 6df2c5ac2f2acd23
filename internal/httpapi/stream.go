package httpapi

import (
	"bytes"
	"net/http"
)

// streamAfter is how much of a response is held back before it is sent:
// an error before then still gets its own status and JSON body; a bigger
// response (a large state, a long log) streams out with bounded memory.
const streamAfter = 256 << 10

// streamer writes a 200 JSON response, holding back its first streamAfter
// bytes. Once it has sent them, the status can no longer change, so an
// error cuts the connection off: the client sees a broken body, never a
// complete-looking one.
type streamer struct {
	w    http.ResponseWriter
	buf  bytes.Buffer
	sent bool
}

func (s *streamer) Write(p []byte) (int, error) {
	if s.sent {
		return s.w.Write(p)
	}
	s.buf.Write(p)
	if s.buf.Len() < streamAfter {
		return len(p), nil
	}
	if err := s.flush(); err != nil {
		return 0, err
	}
	return len(p), nil
}

// flush sends the headers and what is held back.
func (s *streamer) flush() error {
	if !s.sent {
		s.sent = true
		s.w.Header().Set("Content-Type", "application/json")
		s.w.Header().Set("Cache-Control", "no-store")
		s.w.WriteHeader(http.StatusOK)
	}
	_, err := s.w.Write(s.buf.Bytes())
	s.buf = bytes.Buffer{}
	return err
}

// finish completes the response after the body was written with err: a
// nil err sends the rest, an error before anything was sent is returned
// for the caller to answer, and an error after that aborts the response.
func (s *streamer) finish(err error) error {
	if err == nil {
		_ = s.flush() // a client that went away reads nothing more
		return nil
	}
	if !s.sent {
		return err
	}
	panic(http.ErrAbortHandler)
}
