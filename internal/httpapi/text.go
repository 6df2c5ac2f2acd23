package httpapi

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/cairnlog/cairn/internal/jsontext"
	"github.com/cairnlog/cairn/internal/termtext"
)

// checkText refuses the JSON value of field name unless its strings are
// Unicode text: UTF-8 bytes (JSON is UTF-8, RFC 8259), and no \u escape
// of half a UTF-16 surrogate pair without its other half. encoding/json
// keeps a RawMessage's bytes as sent, so either would be stored as sent
// and served back as text that strict JSON readers refuse or that
// decodes to a string no UTF-8 writer can write. raw must be valid JSON.
func checkText(name string, raw json.RawMessage) error {
	if !utf8.Valid(raw) {
		return badRequest("%s: not valid UTF-8 text (JSON must be UTF-8)", name)
	}
	if at, esc := jsontext.LoneSurrogate(raw); at >= 0 {
		return badRequest("%s: the escape %s at byte %d is half of a UTF-16 surrogate pair without its other half: JSON strings must be Unicode text", name, esc, at)
	}
	return nil
}

// checkNames refuses a request body whose members are not exactly the
// request's fields, each at most once. encoding/json takes the last of
// two members of one name, and matches names regardless of case, so
// {"state":1,"State":2} committed 2 where another reader sees 1.
func checkNames(body []byte, fields []field) error {
	seen := make(map[string]bool, len(fields))
	for _, m := range jsontext.Members(body) {
		n := m.Name
		known := false
		for _, f := range fields {
			known = known || f.name == n
		}
		if !known {
			return badRequest("request body: unknown field %s (this request takes %s; names are case-sensitive)", termtext.Quote(n), fieldNames(fields))
		}
		if seen[n] {
			return badRequest("request body: field %s is given twice; give each field once", termtext.Quote(n))
		}
		seen[n] = true
	}
	return nil
}

func fieldNames(fields []field) string {
	var b bytes.Buffer
	for i, f := range fields {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f.name)
	}
	return b.String()
}
