package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRecordTooDeepSaidOfTheRecord: a step record (--record,
// --record-file) or a reply (--input) nested deeper than a record may
// hold is refused, exit 2, naming that flag, with nothing committed. A
// commit said it of the state it read ("the state (stdin): nested too
// deep", the state being {}), and a reply in the words and offsets of
// the record it is stored in ("commit h: step record: nested too deep:
// … at offset 520").
func TestRecordTooDeepSaidOfTheRecord(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{}`, "commit", "h", "-", "--status", "awaiting_input"); code != 0 {
		t.Fatal(errs)
	}
	deep := func(levels int) string { return strings.Repeat("[", levels) + strings.Repeat("]", levels) }
	file := filepath.Join(t.TempDir(), "record.json")
	if err := os.WriteFile(file, []byte(deep(600)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"commit", "s", "-", "--record", deep(600)}, "cairn commit: --record is nested too deep: more than 512 levels at offset 512"},
		{[]string{"commit", "s", "-", "--record-file", file}, "cairn commit: --record-file " + file + " is nested too deep: more than 512 levels at offset 512"},
		{[]string{"reply", "h", "--input", deep(512)}, "cairn reply: --input is nested too deep: more than 511 levels at offset 511"},
	} {
		_, errs, code := cli(t, store, `{}`, c.args...)
		if code != 2 || !strings.HasPrefix(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%s %s: exit %d, %q; want exit 2, %q…", c.args[0], c.args[len(c.args)-2], code, errs, c.want)
		}
	}
	if _, _, code := cli(t, store, "", "show", "s"); code != 1 {
		t.Errorf("a step of s was committed")
	}
	// As deep as a reply may be, it lands.
	if _, errs, code := cli(t, store, "", "reply", "h", "--input", deep(511)); code != 0 {
		t.Errorf("reply of 511 levels: exit %d, %q", code, errs)
	}
}
