package main

import "testing"

// TestJSONFileAndRecordFileBothStdin: --json-file - with --record-file -
// read the record from stdin first and then said the state was empty
// ("--json-file - (stdin): invalid JSON: offset 0: empty"), as if the
// user had given no state; as with - and --patch -, the two cannot both
// come from stdin, and that is what is said.
func TestJSONFileAndRecordFileBothStdin(t *testing.T) {
	store := t.TempDir()
	out, errs, code := cli(t, store, `{"a":1}`, "commit", "s", "--json-file", "-", "--record-file", "-")
	if want := "cairn commit: --record-file - and the state cannot both come from stdin\n"; code != 2 || out != "" || errs != want {
		t.Errorf("exit %d, out %q, err %q; want 2, %q", code, out, errs, want)
	}
}
