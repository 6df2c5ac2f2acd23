package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxMessage bounds one inbound JSON-RPC message (one line), as the
// SDK's own stdio transport does.
const MaxMessage = mcp.DefaultMaxLineLength

// Transport returns the transport of `cairn mcp`: newline-delimited
// JSON-RPC over r and w, as the SDK's StdioTransport, except that a line
// that is not a JSON-RPC message (not JSON, no "jsonrpc":"2.0", a bad id,
// a batch) or longer than MaxMessage is answered with a JSON-RPC
// error and skipped. The SDK ends the whole session on such a line,
// dropping the answers of calls still running and saying why in Go's
// type names.
func Transport(r io.Reader, w io.Writer) mcp.Transport {
	out := &lockedWriter{w: w}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(filterLines(r, pw, out)) }()
	return &mcp.IOTransport{Reader: pr, Writer: out}
}

// lockedWriter serialises whole messages: the SDK's and the filter's.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// filterLines copies the valid messages of r, one a line, to to, and
// answers every other line on errs. It returns nil at the end of r.
func filterLines(r io.Reader, to io.Writer, errs io.Writer) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, tooLong, err := readLine(br, MaxMessage)
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			var reply []byte
			if tooLong {
				reply = errorReply(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message exceeds %d bytes", MaxMessage))
			} else {
				reply = check(line)
			}
			var werr error
			if reply != nil {
				_, werr = errs.Write(reply)
			} else {
				_, werr = to.Write(append(line, '\n'))
			}
			if werr != nil {
				return werr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readLine reads one line without its newline, holding at most limit
// bytes: the rest of a longer line is read and dropped (tooLong).
func readLine(br *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > limit+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), tooLong, err
	}
}

// check returns the error reply for a line that the SDK cannot take as
// a message (or batch of messages), or nil if it can.
func check(line []byte) []byte {
	// A good line (nearly every line) is decoded once here; only a bad
	// one is looked at again, to say what is wrong with it.
	if _, err := jsonrpc.DecodeMessage(line); err == nil && bytes.TrimSpace(line)[0] != '[' {
		return nil
	}
	if !json.Valid(line) {
		return errorReply(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON")
	}
	var id json.RawMessage
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(line, &probe) == nil && len(probe.ID) > 0 {
		var v any
		if json.Unmarshal(probe.ID, &v) == nil {
			switch v.(type) {
			case string, float64:
				id = probe.ID
			}
		}
	}
	if bytes.TrimSpace(line)[0] == '[' {
		// MCP dropped JSON-RPC batches (2025-06-18); the SDK ends the
		// session on one.
		return errorReply(nil, jsonrpc.CodeInvalidRequest, "invalid request: JSON-RPC batches are not taken; send one message a line")
	}
	return errorReply(id, jsonrpc.CodeInvalidRequest, `invalid request: want a JSON-RPC 2.0 message: an object with "jsonrpc":"2.0", a "method" and a string or number "id" (none for a notification), or a response`)
}

// errorReply is a JSON-RPC error response line with id (null if nil).
func errorReply(id json.RawMessage, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{code, msg}})
	return append(b, '\n')
}
