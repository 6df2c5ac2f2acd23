package httpapi

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
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
