package main

import (
	"strings"
	"testing"

	"github.com/cairnlog/cairn/internal/hitl"
)

// TestReplyLimitIsTheValue: a reply's 512 KiB are its JSON value's, as the
// HTTP API counts them and as it is stored (whitespace after it is not).
// cairn reply --input - counted the newline that ends a file or an echo
// too: an answer of exactly 512 KiB read from answer.json was refused as
// over the limit, though the API took the same value.
func TestReplyLimitIsTheValue(t *testing.T) {
	store := t.TempDir()
	ask := func() {
		t.Helper()
		if _, errs, code := cli(t, store, `{}`, "commit", "h", "-", "--status", "awaiting_input", "--record", `{"question":"ok?"}`); code != 0 {
			t.Fatal(errs)
		}
	}
	value := `"` + strings.Repeat("a", hitl.MaxInput-2) + `"`
	ask()
	if _, errs, code := cli(t, store, value+"\n", "reply", "h", "--input", "-"); code != 0 {
		t.Fatalf("a reply of %d bytes and a newline: exit %d, %s", len(value), code, errs)
	}
	ask()
	over := `"` + strings.Repeat("a", hitl.MaxInput-1) + `"`
	_, errs, code := cli(t, store, over+"\n", "reply", "h", "--input", "-")
	if code != 2 || !strings.Contains(errs, "--input is over the limit of 524288 bytes (512 KiB) for a reply") {
		t.Fatalf("a reply of %d bytes: exit %d, %s", len(over), code, errs)
	}
	// Whitespace past any bound is no value within it.
	_, errs, code = cli(t, store, value+strings.Repeat(" ", 1<<20), "reply", "h", "--input", "-")
	if code != 2 || !strings.Contains(errs, "over the limit") {
		t.Fatalf("a reply with 1 MiB of spaces after it: exit %d, %s", code, errs)
	}
}
