package main

import (
	"strings"
	"testing"
)

// TestStoreFileURLWithoutDirectory: --store file:// names no directory.
// A command that needs a store said "no store at " with an empty path,
// exit 1; it is bad input, said as the Go API says it.
func TestStoreFileURLWithoutDirectory(t *testing.T) {
	for _, args := range [][]string{{"sessions"}, {"log", "s"}} {
		_, errs, code := cli(t, "file://", "", args...)
		if code != 2 || !strings.Contains(errs, "names no directory") {
			t.Errorf("cairn --store file:// %s: exit %d, %q; want exit 2 saying it names no directory", strings.Join(args, " "), code, errs)
		}
	}
}
