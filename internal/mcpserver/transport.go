package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cairnlog/cairn/internal/jsontext"
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
// a message, or would take as another message than the one sent: it
// reads a member given twice as the last, a fractional id as the
// integer below it, a null id as no id (and answers nothing), and a line
// with an id but neither a method nor a result as an answer to nothing
// (and drops it); its complaints about params name Go types. It returns
// nil for a line the SDK can take.
func check(line []byte) []byte {
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil || bytes.TrimSpace(line)[0] == '[' {
		return malformed(line)
	}
	members := jsontext.Members(line)
	var id, method, params json.RawMessage
	have := map[string]bool{}
	for _, m := range members {
		if have[m.Name] {
			return errorReply(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: member %q is given twice; give each member once", m.Name))
		}
		have[m.Name] = true
		switch m.Name {
		case "id":
			id = m.Value
		case "method":
			method = m.Value
		case "params":
			params = m.Value
		}
	}
	if !utf8.Valid(line) {
		return errorReply(usableID(id), jsonrpc.CodeParseError, "parse error: the line is not UTF-8 text (JSON must be UTF-8)")
	}
	if at, esc := jsontext.LoneSurrogate(line); at >= 0 {
		return errorReply(usableID(id), jsonrpc.CodeInvalidRequest, fmt.Sprintf(
			"invalid request: the escape %s at byte %d is half of a UTF-16 surrogate pair without its other half: JSON strings must be Unicode text", esc, at))
	}
	if _, ok := msg.(*jsonrpc.Request); !ok {
		if !have["result"] && !have["error"] {
			return errorReply(usableID(id), jsonrpc.CodeInvalidRequest, `invalid request: want a "method" (a request or notification), or a "result" or "error" (a response)`)
		}
		return nil // a response to a request of the server's
	}
	if have["id"] && usableID(id) == nil {
		return errorReply(nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: id %s: want a string or an integer (leave it out for a notification)", clip(id)))
	}
	if params == nil || string(params) == "null" {
		return nil
	}
	if params[0] != '{' {
		return errorReply(usableID(id), jsonrpc.CodeInvalidParams, fmt.Sprintf("invalid params: want a JSON object, not %s", clip(params)))
	}
	if string(method) == `"tools/call"` {
		for _, m := range jsontext.Members(params) {
			switch {
			case m.Name == "name" && m.Value[0] != '"':
				return errorReply(usableID(id), jsonrpc.CodeInvalidParams, fmt.Sprintf("invalid params: name: want the tool's name, a string, not %s", clip(m.Value)))
			case m.Name == "arguments" && m.Value[0] != '{' && string(m.Value) != "null":
				return errorReply(usableID(id), jsonrpc.CodeInvalidParams, fmt.Sprintf("invalid params: arguments: want a JSON object of the tool's arguments, not %s", clip(m.Value)))
			}
		}
	}
	return nil
}

// malformed returns the error reply for a line the SDK cannot decode.
func malformed(line []byte) []byte {
	if !json.Valid(line) {
		return errorReply(nil, jsonrpc.CodeParseError, "parse error: the line is not JSON")
	}
	if bytes.TrimSpace(line)[0] == '[' {
		// MCP dropped JSON-RPC batches (2025-06-18); the SDK ends the
		// session on one.
		return errorReply(nil, jsonrpc.CodeInvalidRequest, "invalid request: JSON-RPC batches are not taken; send one message a line")
	}
	var id json.RawMessage
	for _, m := range jsontext.Members(line) {
		if m.Name == "id" {
			id = m.Value
		}
	}
	return errorReply(usableID(id), jsonrpc.CodeInvalidRequest, `invalid request: want a JSON-RPC 2.0 message: an object with "jsonrpc":"2.0", a "method" and a string or integer "id" (none for a notification), or a response`)
}

// usableID returns id if it is a string or an integer (what MCP allows
// and what a client can match an answer to), else nil.
func usableID(id json.RawMessage) json.RawMessage {
	if len(id) == 0 {
		return nil
	}
	if id[0] == '"' {
		return id
	}
	digits := bytes.TrimPrefix(id, []byte("-"))
	if len(digits) == 0 || len(digits) > 19 {
		return nil
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return nil
		}
	}
	return id
}

// clip returns JSON text for a message, shortened if long.
func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:37]) + "..."
	}
	return string(b)
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
