// Package jsontext looks at JSON text that has already been found valid,
// for what encoding/json does not report: the members of an object
// exactly as written (names twice, names in another case), and \u
// escapes that are no Unicode text; and says what is wrong with text
// that is not valid (SyntaxWords, Problem) or nests too deep (Deeper). It is shared by the HTTP and MCP
// servers, which take JSON from untrusted clients, and by the JSON Patch
// decoder (manifest/tree), whose operations' members must be exact, and
// by the step record's check of its keys (cairn.ParseRecord).
// It also carries, for every JSON output, a file name that is not UTF-8
// (NameBytes), and a reader that stops reading input once it cannot be
// JSON (StopReader).
package jsontext

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Member is one member of a JSON object: its name, unescaped, and its
// value as written.
type Member struct {
	Name  string
	Value []byte
}

// Members returns the members of the JSON object b in order, duplicates
// included, or nil if b is not an object. b must be valid JSON. Values
// are slices of b.
func Members(b []byte) []Member {
	start := len(b) - len(bytes.TrimLeft(b, " \t\r\n"))
	if start == len(b) || b[start] != '{' {
		return nil
	}
	var ms []Member
	depth, key, value := 0, false, -1
	for i := start; i < len(b); i++ {
		switch c := b[i]; c {
		case '"':
			end := stringEnd(b, i)
			if depth == 1 && key {
				ms = append(ms, Member{Name: unquote(b[i:end])})
				key = false
			}
			i = end - 1
		case ':':
			if depth == 1 {
				value = i + 1
			}
		case '{', '[':
			depth++
			key = c == '{' && depth == 1
		case '}', ']':
			depth--
			if depth == 0 && value >= 0 {
				ms[len(ms)-1].Value = bytes.TrimSpace(b[value:i])
			}
		case ',':
			if depth == 1 {
				key = true
				ms[len(ms)-1].Value = bytes.TrimSpace(b[value:i])
				value = -1
			}
		}
	}
	return ms
}

// Elements returns the elements of the JSON array b in order, each as
// written, or nil if b is not an array. b must be valid JSON. Elements
// are slices of b.
func Elements(b []byte) [][]byte {
	start := len(b) - len(bytes.TrimLeft(b, " \t\r\n"))
	if start == len(b) || b[start] != '[' {
		return nil
	}
	var es [][]byte
	depth, from := 0, start+1
	for i := start; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = stringEnd(b, i) - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				if e := bytes.TrimSpace(b[from:i]); len(e) > 0 {
					es = append(es, e)
				}
				return es
			}
		case ',':
			if depth == 1 {
				es = append(es, bytes.TrimSpace(b[from:i]))
				from = i + 1
			}
		}
	}
	return es
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

// LoneSurrogate returns the offset and text of the first \u escape in
// the JSON text b that is half of a UTF-16 surrogate pair without its
// other half, or -1. Such an escape is valid JSON syntax but no Unicode
// text: encoding/json reads it as U+FFFD, Python's json into a str it
// cannot encode as UTF-8.
func LoneSurrogate(b []byte) (int, string) {
	for i := 0; ; {
		if i >= len(b) {
			return -1, "" // past a backslash that ends text that is no JSON
		}
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

// Deeper returns the offset of the first bracket in the JSON text b that
// opens an array or object more than limit levels deep, or -1. It reads
// any bytes, valid JSON or not, in one pass without recursion, so that a
// reader can refuse text too deep for its decoder, in its own words,
// before decoding it.
func Deeper(b []byte, limit int) int {
	d := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = stringEnd(b, i) - 1
		case '[', '{':
			if d++; d > limit {
				return i
			}
		case ']', '}':
			d = max(0, d-1) // stray closers of text that is no JSON open nothing
		}
	}
	return -1
}

// byteOrderMark is U+FEFF in UTF-8, which some editors and Windows
// tools put first in a file; JSON text must not start with it.
var byteOrderMark = []byte{0xEF, 0xBB, 0xBF}

// SyntaxWords says what encoding/json's syntax error se found in text.
// encoding/json names a byte that starts a character beyond ASCII as if
// it were Latin-1 ("invalid character 'â'" for a pasted '“'); it is said
// as the character, or as a byte order mark, or as a byte that is not
// UTF-8.
func SyntaxWords(se *json.SyntaxError, text []byte) string {
	msg := strings.TrimPrefix(se.Error(), "json: ")
	at := int(se.Offset) - 1
	if at < 0 || at >= len(text) || text[at] < utf8.RuneSelf {
		return msg
	}
	if at == 0 && bytes.HasPrefix(text, byteOrderMark) {
		return "it starts with a byte order mark (U+FEFF), which JSON does not allow: send UTF-8 text without one"
	}
	seen := "'" + string(rune(text[at])) + "'"
	r, n := utf8.DecodeRune(text[at:])
	if r == utf8.RuneError && n <= 1 {
		return strings.Replace(msg, "character "+seen, fmt.Sprintf("byte 0x%02x (not UTF-8)", text[at]), 1)
	}
	return strings.Replace(msg, seen, fmt.Sprintf("%q", r), 1)
}

// Problem says where and why text, which is not valid JSON, is not:
// "at byte N: " and what SyntaxWords says there (a byte order mark by
// name, a character as the character), as the CLI, the HTTP API and the
// MCP tools say it.
func Problem(text []byte) string {
	var v json.RawMessage
	var se *json.SyntaxError
	if err := json.Unmarshal(text, &v); errors.As(err, &se) {
		return fmt.Sprintf("at byte %d: %s", se.Offset, SyntaxWords(se, text))
	}
	return "it is not one JSON value"
}

// NameBytes returns the exact bytes of a file name that is not UTF-8,
// for a path_bytes member beside its path, or nil for a name that is
// UTF-8 (the member is then left out). A directory state may hold any
// name its file system allows; encoding/json writes the bytes of a
// string that are not UTF-8 as U+FFFD, so two names that differ only in
// them print the same, and a reader cannot name either file. A []byte is
// written as base64, exactly; path stays the text to show.
func NameBytes(name string) []byte {
	if utf8.ValidString(name) {
		return nil
	}
	return []byte(name)
}

// Decimal reports whether t is a number >= 0 written in decimal digits,
// with a fraction and an exponent if any ("30", "0.5", ".5", "1e-3"),
// as a person writes one and a JSON number reads: not what
// strconv.ParseFloat takes beyond it, a sign, hex ("0x1p3"), underscores
// ("1_0"), "Inf" or "NaN", which would read otherwise than they look.
func Decimal(t string) bool {
	mant, exp, hasExp := strings.Cut(strings.ToLower(t), "e")
	whole, frac, _ := strings.Cut(mant, ".")
	if whole+frac == "" || strings.Trim(whole+frac, "0123456789") != "" {
		return false
	}
	if hasExp {
		if exp != "" && (exp[0] == '+' || exp[0] == '-') {
			exp = exp[1:]
		}
		return exp != "" && strings.Trim(exp, "0123456789") == ""
	}
	return true
}

// Overflow returns the offset and text of the first number in the JSON
// text b whose magnitude no IEEE double holds (1e400, -1e400), or -1.
// Such a number is valid JSON syntax but not I-JSON (RFC 7493):
// encoding/json refuses it, Python's json reads it as infinity and
// writes back Infinity, which is no JSON. b must be valid JSON.
func Overflow(b []byte) (int, string) {
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			i = stringEnd(b, i) - 1
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(b) && strings.IndexByte("0123456789.eE+-", b[j]) >= 0 {
				j++
			}
			if _, err := strconv.ParseFloat(string(b[i:j]), 64); errors.Is(err, strconv.ErrRange) {
				return i, string(b[i:j])
			}
			i = j - 1
		}
	}
	return -1, ""
}

// IJSON says, as an error, what in the JSON text b is valid JSON but
// not I-JSON (RFC 7493), which every JSON reader takes alike: a number
// no double holds (Overflow), or a \u escape that is half a surrogate
// pair (LoneSurrogate: encoding/json reads U+FFFD, Python's json a
// string it cannot write as UTF-8), or an object with a member name
// twice (DuplicateName). A b that is one JSON string is
// also read as the text it holds when that text is JSON, as tool-call
// arguments given as text are. The words follow what holds b: "holds
// the number 1e400, …". nil if b is I-JSON, or not JSON at all.
func IJSON(b []byte) error {
	if !json.Valid(b) {
		return nil // encoding/json says what is wrong with it
	}
	texts := [][]byte{b}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '"' {
		var text string
		if json.Unmarshal(t, &text) == nil && json.Valid([]byte(text)) {
			texts = append(texts, []byte(text))
		}
	}
	for _, t := range texts {
		if at, n := Overflow(t); at >= 0 {
			return fmt.Errorf("holds the number %s, too large for a double (JSON readers refuse it or read it as infinity)", n)
		}
		if at, esc := LoneSurrogate(t); at >= 0 {
			return fmt.Errorf("holds %s, half of a UTF-16 surrogate pair without the other half: no Unicode text (JSON readers read it as U+FFFD, or cannot write it as UTF-8)", esc)
		}
		if name, ok := DuplicateName(t); ok {
			return fmt.Errorf("holds an object with the member %q twice (JSON readers keep one or the other, or refuse it)", name)
		}
	}
	return nil
}

// DuplicateName returns a member name that one object of the JSON text
// b, at any depth, has twice (as unescaped: "a" and "\u0061" are one
// name); ok is false if there is none. I-JSON forbids it: readers keep
// the first or the last, or refuse the text. b should be valid JSON
// (other text gives no panic, but no meaningful answer). It reads b in
// one pass without recursion.
func DuplicateName(b []byte) (name string, ok bool) {
	type level struct {
		obj, key bool            // an object, and a name comes next
		names    [][]byte        // its names, while few
		set      map[string]bool // then all of them
	}
	var stack []level
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '"':
			end := stringEnd(b, i)
			if end-1 <= i || b[end-1] != '"' {
				return "", false // text that is not JSON: a string never closed
			}
			if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].key {
				l := &stack[n-1]
				name := b[i+1 : end-1]
				if bytes.IndexByte(name, '\\') >= 0 {
					name = []byte(unquote(b[i:end]))
				}
				switch {
				case l.set != nil:
					if l.set[string(name)] {
						return string(name), true
					}
					l.set[string(name)] = true
				case slices.ContainsFunc(l.names, func(n []byte) bool { return bytes.Equal(n, name) }):
					return string(name), true
				case len(l.names) < 16:
					l.names = append(l.names, name)
				default:
					l.set = map[string]bool{string(name): true}
					for _, n := range l.names {
						l.set[string(n)] = true
					}
				}
				l.key = false
			}
			i = end - 1
		case '{', '[':
			stack = append(stack, level{obj: c == '{', key: c == '{'})
		case '}', ']':
			stack = stack[:max(0, len(stack)-1)]
		case ',':
			if n := len(stack); n > 0 && stack[n-1].obj {
				stack[n-1].key = true
			}
		}
	}
	return "", false
}
