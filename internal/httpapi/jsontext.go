package httpapi

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// memberNames returns the member names of the JSON object b, in order,
// duplicates included; nil if b is not an object. b must be valid JSON.
func memberNames(b []byte) []string {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	var names []string
	depth, key := 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '"':
			end := stringEnd(b, i)
			if depth == 1 && key {
				names = append(names, unquote(b[i:end]))
				key = false
			}
			i = end - 1
		case '{', '[':
			depth++
			key = c == '{' && depth == 1
		case '}', ']':
			depth--
		case ',':
			key = depth == 1
		}
	}
	return names
}

// stringEnd returns the index just past the JSON string that starts at
// b[start] (a quote).
func stringEnd(b []byte, start int) int {
	i := start + 1
	for {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			return len(b)
		}
		i += q
		n := 0 // backslashes before the quote
		for n < i-start-1 && b[i-1-n] == '\\' {
			n++
		}
		i++
		if n%2 == 0 {
			return i
		}
	}
}

func unquote(s []byte) string {
	if bytes.IndexByte(s, '\\') < 0 {
		return string(s[1 : len(s)-1])
	}
	var v string
	_ = json.Unmarshal(s, &v)
	return v
}

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
	if at, esc := loneSurrogate(raw); at >= 0 {
		return badRequest("%s: the escape %s at byte %d is half of a UTF-16 surrogate pair without its other half: JSON strings must be Unicode text", name, esc, at)
	}
	return nil
}

// loneSurrogate returns the offset and text of the first \u escape in
// the JSON text b that is a surrogate outside a high-low pair, or -1.
func loneSurrogate(b []byte) (int, string) {
	for i := 0; ; {
		k := bytes.IndexByte(b[i:], '\\')
		if k < 0 {
			return -1, ""
		}
		i += k
		if i+1 >= len(b) || b[i+1] != 'u' {
			i += 2 // \" \\ \/ \b \f \n \r \t
			continue
		}
		r := hex4(b, i+2)
		switch {
		case r >= 0xd800 && r < 0xdc00:
			if i+12 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
				if lo := hex4(b, i+8); lo >= 0xdc00 && lo < 0xe000 {
					i += 12
					continue
				}
			}
			return i, string(b[i:min(i+6, len(b))])
		case r >= 0xdc00 && r < 0xe000:
			return i, string(b[i:min(i+6, len(b))])
		}
		i += 6
	}
}

// hex4 is the value of the four hex digits at b[i:], or -1.
func hex4(b []byte, i int) rune {
	if i+4 > len(b) {
		return -1
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// checkNames refuses a request body whose members are not exactly the
// request's fields, each at most once. encoding/json takes the last of
// two members of one name, and matches names regardless of case, so
// {"state":1,"State":2} committed 2 where another reader sees 1.
func checkNames(body []byte, fields []field) error {
	seen := make(map[string]bool, len(fields))
	for _, n := range memberNames(body) {
		known := false
		for _, f := range fields {
			known = known || f.name == n
		}
		if !known {
			return badRequest("request body: unknown field %q (this request takes %s; names are case-sensitive)", n, fieldNames(fields))
		}
		if seen[n] {
			return badRequest("request body: field %q is given twice; give each field once", n)
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
