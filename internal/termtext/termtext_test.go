package termtext

import "testing"

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain/path.txt":   "plain/path.txt",
		"日本語 é ✓":          "日本語 é ✓",
		"a\nb":             `a\nb`,
		"\x1b[31m":         `\x1b[31m`,
		"\u009b2J":         `\u009b2J`,
		"abc\u202eexe.txt": `abc\u202eexe.txt`,
		"bad\xffutf8":      `bad\xffutf8`,
		"line\u2028sep":    `line\u2028sep`,
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Clip("日本語日本語", 5); got != "日本..." {
		t.Errorf("clip cut a rune: %q", got)
	}
	if got := Clip(Printable("abcdef\x1b"), 9); got != "abcdef..." {
		t.Errorf("clip left half an escape: %q", got)
	}
}

// PrintableJSON escapes as JSON does, so the text still reads as the same
// JSON value.
func TestPrintableJSON(t *testing.T) {
	for in, want := range map[string]string{
		`"plain"`:        `"plain"`,
		"\"x\u009b31m\"": `"x\u009b31m"`,
		"\"a\u202eb\"":   `"a\u202eb"`,
		"\"bad\xff\"":    `"bad\ufffd"`,
	} {
		if got := PrintableJSON(in); got != want {
			t.Errorf("PrintableJSON(%q) = %q, want %q", in, got, want)
		}
	}
}
