package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/jsontext"
	"github.com/cairnlog/cairn/internal/termtext"
)

// apiError is an error with an HTTP status and a code.
type apiError struct {
	status int
	code   string
	msg    string
	head   *uint64
}

func (e *apiError) Error() string { return e.msg }

func badRequest(format string, a ...any) error {
	return &apiError{status: http.StatusBadRequest, code: "bad_request", msg: fmt.Sprintf(format, a...)}
}

// badSession is the answer to a session name the server does not accept.
func badSession(name string) error {
	return badRequest("session %s: want %s", termtext.Quote(name), cairn.SessionNameRule)
}

type errorBody struct {
	Code  string  `json:"code"`
	Error string  `json:"error"`
	Head  *uint64 `json:"head,omitempty"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, errorBody{Code: code, Error: msg})
}

// writeErr maps an error onto a status and a JSON body.
func (s *Server) writeErr(w http.ResponseWriter, err error) {
	var ae *apiError
	var mbe *http.MaxBytesError
	var ce *cairn.ConflictError
	switch {
	case errors.As(err, &ae):
		if ae.status == http.StatusServiceUnavailable {
			w.Header().Set("Retry-After", retryAfter)
		}
		writeJSON(w, ae.status, errorBody{Code: ae.code, Error: ae.msg, Head: ae.head})
	case errors.As(err, &mbe):
		writeError(w, http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("request body exceeds the server's limit of %d bytes (cairn serve --max-body)", mbe.Limit))
	case errors.As(err, &ce):
		head := ce.Head
		writeJSON(w, http.StatusConflict, errorBody{Code: "conflict", Error: err.Error(), Head: &head})
	case errors.Is(err, cairn.ErrConflict):
		writeError(w, http.StatusConflict, "conflict", err.Error())
	case errors.Is(err, cairn.ErrNotFound):
		writeError(w, http.StatusNotFound, "not_found", notFoundWords(err))
	case errors.Is(err, cairn.ErrLimit):
		l := s.ws.Limits()
		writeError(w, http.StatusUnprocessableEntity, "limit", fmt.Sprintf(
			"%s; the server reads at most %d bytes per value (%s), %d bytes per object (%s) and %d levels of nesting (%s): raise them where the server runs to read this",
			oneLine(err), l.MaxValueBytes, cairn.EnvMaxValueBytes, l.MaxObjectBytes, cairn.EnvMaxObjectBytes, l.MaxDepth, cairn.EnvMaxDepth))
	case errors.Is(err, cairn.ErrInvalid):
		writeError(w, http.StatusBadRequest, "bad_request", err.Error())
	case errors.Is(err, cairn.ErrRefused):
		// The store answered, and refused (bad credentials, access
		// denied, no such bucket): this server is a gateway to it, and
		// works; the store will refuse the same until its configuration
		// or the store URL changes, so 502, not 500, and no Retry-After.
		writeError(w, http.StatusBadGateway, "store_refused", oneLine(err))
	case errors.Is(err, cairn.ErrUnavailable):
		// The store, not this server, is out of reach: no Retry-After,
		// which would promise more than the server knows.
		writeError(w, http.StatusServiceUnavailable, "unavailable", oneLine(err))
	case errors.Is(err, context.Canceled):
		// The client went away; nobody reads the answer.
	default:
		msg := oneLine(err)
		if hint := cairn.DamageHint(err); hint != "" {
			msg += " (" + hint + ")"
		}
		writeError(w, http.StatusInternalServerError, "internal", msg)
	}
}

// notFoundWords says a 404's reason, whose code (not_found) says "not
// found" already: the Reason of the cairn.NotFoundError err holds
// ("session x has no steps", not "session x not found: it has no steps";
// "step p@9: the session's head is step 2"), after what the call was if
// the handler said it (callError: "fork a@1 to b: step a@1: the session
// was removed; …"), as the Go API says it before the error. An error
// that holds none is said as it is.
func notFoundWords(err error) string {
	var nf *cairn.NotFoundError
	if !errors.As(err, &nf) || nf == nil {
		return oneLine(err)
	}
	var in *callError
	if errors.As(err, &in) {
		return in.call + ": " + nf.Reason()
	}
	return nf.Reason()
}

// callError is err, the failure of a call a handler made, with what the
// call was in the Go API's words ("fork a@1 to b", "reply to x"), which
// that API's error says before a cairn.NotFoundError it wraps: a 404
// says them before the reason (notFoundWords). Its text, and what it
// matches, are err's.
type callError struct {
	call string
	err  error
}

func (e *callError) Error() string { return e.err.Error() }
func (e *callError) Unwrap() error { return e.err }

func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", "; ") }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // states go back byte for byte
	_ = enc.Encode(v)
}

// field describes one member of a request body, in the API's words.
type field struct {
	name string
	want string // what a valid value is, e.g. "a step number >= 1"
}

// decode reads a JSON request body into v, refusing unknown fields and
// trailing data. fields lists the members v takes; errors name them and
// say what each wants, never the server's own types.
func decode(r *http.Request, v any, fields ...field) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return readError(err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bodyError(err, body, fields)
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("request body: data after the JSON object")
	}
	return checkNames(body, fields)
}

// readError turns an error reading a request body (not parsing it)
// into one in the API's words.
func readError(err error) error {
	var mbe *http.MaxBytesError
	var ae *apiError
	var stall *stalledError
	switch {
	case errors.As(err, &mbe), errors.As(err, &ae), errors.Is(err, context.Canceled): // ae: the bodies' budget (bodyGate)
		return err
	case errors.As(err, &stall) && stall.got == 0:
		return &apiError{status: http.StatusRequestTimeout, code: "timeout", msg: fmt.Sprintf("request body: it never arrived, nothing of it came for %v (send it at once, not in a trickle)", stall.after)}
	case errors.As(err, &stall):
		return &apiError{status: http.StatusRequestTimeout, code: "timeout", msg: fmt.Sprintf("request body: it stopped arriving after %d %s, nothing more of it came for %v (send it at once, not in a trickle)", stall.got, plural(stall.got, "byte", "bytes"), stall.after)}
	case errors.Is(err, os.ErrDeadlineExceeded):
		return &apiError{status: http.StatusRequestTimeout, code: "timeout", msg: "request body: it did not arrive in full in time (send it at once, not in a trickle)"}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("request body: it ended before all of it arrived (shorter than its Content-Length, or a chunked body cut off before its last chunk)")
	}
	// Not its JSON, which was not read yet: the bytes carrying it.
	return badRequest("request body: it could not be read, its framing is broken (%s): send it with a right Content-Length, or well-formed chunks", oneLine(err))
}

// bodyError turns an error of encoding/json, decoding body, into one in
// the API's words.
func bodyError(err error, body []byte, fields []field) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.name
	}
	switch {
	case errors.Is(err, io.EOF):
		return badRequest("request body is empty: want a JSON object with %s", strings.Join(names, ", "))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("request body is not valid JSON: it ends too early")
	case errors.As(err, &se) && strings.HasSuffix(se.Error(), "exceeded max depth"):
		// encoding/json stops at 10000 levels; the JSON is not invalid.
		return badRequest("request body: nested deeper than 10000 levels (at byte %d), too deep to read", se.Offset)
	case errors.As(err, &se):
		return badRequest("request body is not valid JSON at byte %d: %s", se.Offset, jsontext.SyntaxWords(se, body))
	case errors.As(err, &te):
		if te.Field == "" {
			return badRequest("request body: want a JSON object with %s, not %s", strings.Join(names, ", "), jsonValue(te.Value))
		}
		for _, f := range fields {
			if f.name == te.Field {
				v := jsonValue(te.Value)
				if n, ok := strings.CutPrefix(te.Value, "number "); ok && te.Type != nil && te.Type.Kind() == reflect.Uint64 {
					v += tooLarge(n) // a step number
				}
				return badRequest("%s: want %s, not %s", f.name, f.want, v)
			}
		}
		return badRequest("%s: %s is not allowed here", te.Field, jsonValue(te.Value))
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if n, err := strconv.Unquote(name); err == nil {
			name = termtext.Quote(n)
		}
		return badRequest("request body: unknown field %s (this request takes %s)", name, strings.Join(names, ", "))
	}
	return badRequest("request body is not valid JSON")
}

// jsonValue renders the Value of a json.UnmarshalTypeError ("number 1.5",
// "string", "object") for a message: "1.5", "a string", "an object".
func jsonValue(v string) string {
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return n
	}
	switch v {
	case "object", "array":
		return "an " + v
	case "bool":
		return "true or false"
	}
	return "a " + v
}

// tooLarge is what a message adds for text, a step number that did not
// parse, when it is a number past the largest step number: the CLI says
// such a number is too large, and so does the API, rather than only
// what it wants (">= 1", which the number is).
func tooLarge(text string) string {
	if _, err := strconv.ParseUint(text, 10, 64); errors.Is(err, strconv.ErrRange) {
		return fmt.Sprintf(" (too large: at most %d)", uint64(math.MaxUint64))
	}
	return ""
}
