package main

import (
	"strings"
	"testing"
)

// Selector values that are no selector the user could mean: --label
// outcome= (an unset $O) exported nothing, exit 0, where --outcome ""
// is refused, though the two mean the same; a reward bound was read in
// Go's literal syntax, so --min-reward 1_0 selected rewards of 10 or
// more, 0x1p-2 meant 0.25 and inf passed as a bound no reward reaches.
// Each is now bad input, exit 2, in one line naming the flag.
func TestExportSelectorValuesInUsersWords(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{}`, "commit", "s", "-", "--record", `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"}],"reward":10}`); code != 0 {
		t.Fatal(errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--label", "outcome="}, `--label outcome=: want an outcome such as success or failure`},
		{[]string{"--min-reward", "1_0"}, `--min-reward "1_0": want a number`},
		{[]string{"--max-reward", "0x1p-2"}, `--max-reward "0x1p-2": want a number`},
		{[]string{"--min-reward", "inf"}, `--min-reward "inf": want a number`},
		{[]string{"--max-reward", "-Infinity"}, `--max-reward "-Infinity": want a number`},
	} {
		_, errs, code := cli(t, store, "", append([]string{"export", "--format", "openai-jsonl"}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2, one line saying %q", c.args, code, errs, c.want)
		}
	}
	// Numbers as a record writes them still select.
	for _, bound := range []string{"10", "1e1", "+10", "10.", "9.5", ".5", "-0", "5E-1"} {
		stdout, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--min-reward", bound)
		if code != 0 || strings.Count(stdout, "\n") != 1 {
			t.Errorf("--min-reward %s: exit %d, %d lines, stderr %q; want s's line", bound, code, strings.Count(stdout, "\n"), errs)
		}
	}
}
