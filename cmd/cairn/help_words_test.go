package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
)

// TestHelpNamesNoGoTypes: no command's --help shows a flag's value as a
// Go type name (--status string); each names what the value is
// (--status S, --branches leaves|all), as the usage line does.
func TestHelpNamesNoGoTypes(t *testing.T) {
	goType := regexp.MustCompile(`(?m)^\s+-{1,2}[a-z-]+ (string|int|int64|uint|uint64|float|float64|duration|value)$`)
	for name := range commands {
		var out, errb bytes.Buffer
		if code := run(context.Background(), []string{name, "--help"}, strings.NewReader(""), &out, &errb); code != 0 {
			t.Errorf("cairn %s --help: exit %d: %s", name, code, errb.String())
			continue
		}
		help := out.String() + errb.String()
		for _, m := range goType.FindAllString(help, -1) {
			t.Errorf("cairn %s --help: %q names a Go type, not what the value is", name, strings.TrimSpace(m))
		}
	}
}

// TestHelpUsageLineEndsInWords: a command's --help starts with its usage
// line, which ends in its last word, also for a command that takes no
// arguments (cairn mcp, cairn version).
func TestHelpUsageLineEndsInWords(t *testing.T) {
	for name := range commands {
		var out, errb bytes.Buffer
		run(context.Background(), []string{name, "--help"}, strings.NewReader(""), &out, &errb)
		first, _, _ := strings.Cut(out.String(), "\n")
		if !strings.HasPrefix(first, "usage: cairn "+name) || strings.TrimRight(first, " \t") != first {
			t.Errorf("cairn %s --help: usage line %q; want it to start with \"usage: cairn %s\" and end in a word", name, first, name)
		}
	}
}
