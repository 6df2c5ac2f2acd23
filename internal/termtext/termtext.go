// Package termtext makes text read from a store (names, paths, questions,
// records) fit for a line of human output on a terminal: what could move
// the cursor, drive the terminal or forge another line is escaped, and a
// long text is cut without splitting a rune or an escape. Machine output
// (JSON) needs none of this: its encoder escapes control characters.
package termtext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Unsafe reports whether r must not be written raw to a terminal: C0 and
// C1 control characters, DEL, bidirectional marks and overrides, line and
// paragraph separators, and invalid UTF-8 (utf8.RuneError).
func Unsafe(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true // C0, DEL, C1 (0x9b is a CSI to many terminals)
	case r == utf8.RuneError:
		return true // invalid UTF-8 (or U+FFFD itself, shown escaped)
	case r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true // bidirectional marks and overrides
	case r == 0x2028, r == 0x2029:
		return true // line and paragraph separators
	}
	return false
}

// clean reports whether s holds no Unsafe rune.
func clean(s string) bool {
	for _, r := range s {
		if Unsafe(r) {
			return false
		}
	}
	return true
}

// Printable returns plain text s with every Unsafe rune written as a
// Go-style escape (\n, \x1b, \u202e); other text, any script, is kept.
func Printable(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x80 && Unsafe(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case Unsafe(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// PrintableJSON returns JSON text s with every Unsafe rune written as a
// \u escape, which means the same to a JSON reader (such runes can stand
// only inside strings); invalid UTF-8 becomes \ufffd.
func PrintableJSON(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if Unsafe(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Clip shortens s to at most n runes, marking the cut with "...", never
// cutting a rune or an escape (Printable's, PrintableJSON's) in two.
func Clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut := 0
	for i := range s {
		if cut == n-3 {
			out := s[:i]
			// An escape cut in two would read as other text: drop it.
			if j := strings.LastIndexByte(out, '\\'); j >= 0 && j >= len(out)-5 {
				out = out[:j]
			}
			return out + "..."
		}
		cut++
	}
	return s
}

// Quote returns s quoted as strconv.Quote does, for an error message that
// names what a client sent: a session name, a key, an argument's name.
// One past 128 bytes is shown by its first 32 characters and its length,
// not echoed whole (a request may carry a name of megabytes, and an
// agent reads its errors into its context).
func Quote(s string) string {
	if len(s) <= 128 {
		return strconv.Quote(s)
	}
	start, n := s, 0
	for i := range s {
		if n == 32 {
			start = s[:i]
			break
		}
		n++
	}
	q := strconv.Quote(start)
	return fmt.Sprintf("%s…\" (%d characters)", q[:len(q)-1], utf8.RuneCountInString(s))
}
