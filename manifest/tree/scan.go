package tree

// The token scanners shared by the full parser (json.go) and the
// incremental one (doc.go), so that both accept exactly the same JSON.

// scanString scans the string token whose opening quote is at in[pos].
// It returns the offset just past the closing quote, or, if the token is
// malformed, the offset where it goes wrong and what is wrong.
func scanString(in []byte, pos int) (end int, problem string) {
	pos++ // opening quote
	for pos < len(in) {
		c := in[pos]
		switch {
		case c == '"':
			return pos + 1, ""
		case c == '\\':
			if pos+1 >= len(in) {
				return pos, "unterminated escape"
			}
			switch in[pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				pos += 2
			case 'u':
				if pos+6 > len(in) || !isHex4(in[pos+2:pos+6]) {
					return pos, "bad \\u escape"
				}
				pos += 6
			default:
				return pos, "bad escape"
			}
		case c < 0x20:
			return pos, "control character in string"
		default:
			pos++
		}
	}
	return pos, "unterminated string"
}

// scanNumber scans the number token that starts at in[pos], as
// scanString does.
func scanNumber(in []byte, pos int) (end int, problem string) {
	digits := func() int {
		n := 0
		for pos < len(in) && in[pos] >= '0' && in[pos] <= '9' {
			pos++
			n++
		}
		return n
	}
	if in[pos] == '-' {
		pos++
	}
	if pos < len(in) && in[pos] == '0' {
		pos++
	} else if digits() == 0 {
		return pos, "bad number"
	}
	if pos < len(in) && in[pos] == '.' {
		pos++
		if digits() == 0 {
			return pos, "bad number fraction"
		}
	}
	if pos < len(in) && (in[pos] == 'e' || in[pos] == 'E') {
		pos++
		if pos < len(in) && (in[pos] == '+' || in[pos] == '-') {
			pos++
		}
		if digits() == 0 {
			return pos, "bad number exponent"
		}
	}
	return pos, ""
}

func isHex4(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
