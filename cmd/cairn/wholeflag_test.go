package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// TestWholeFlagsSayWhatTheyAccept: a negative, malformed, too small or
// too large number given to any whole-number flag is exit 2 with one
// line saying what that flag accepts: prune --keep-last -1 said "want a
// whole number, 0 or more" (0 is refused too), and a number past 2^64
// only "out of range", naming no range at all.
func TestWholeFlagsSayWhatTheyAccept(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{}`, "commit", "s", "-"); code != 0 {
		t.Fatal(errs)
	}
	const big = "99999999999999999999"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"prune", "s", "--keep-last", "-1"}, `--keep-last "-1": want a whole number, 1 or more`},
		{[]string{"prune", "s", "--keep-last=-1"}, `--keep-last "-1": want a whole number, 1 or more`},
		{[]string{"prune", "s", "-keep-last", "+1"}, `-keep-last "+1": want a whole number, 1 or more`},
		{[]string{"prune", "s", "--keep-last", ""}, `--keep-last "": want a whole number, 1 or more`},
		{[]string{"prune", "s", "--keep-last", "0"}, `--keep-last "0": want a whole number, 1 or more (to drop every step: cairn rm)`},
		{[]string{"prune", "s", "--keep-last", big}, `--keep-last "` + big + `": out of range: want a whole number from 1 to 18446744073709551615`},
		{[]string{"commit", "s", "-", "--expect", "-1"}, `--expect "-1": want a whole number, 0 or more`},
		{[]string{"commit", "s", "-", "--expect", big}, `--expect "` + big + `": out of range: want a whole number from 0 to 18446744073709551615`},
		{[]string{"run", "--session", "s", "--restart", "-3", "--", "true"}, `--restart "-3": want a whole number, 0 or more`},
		{[]string{"run", "--session", "s", "--restart", big, "--", "true"}, `--restart "` + big + `": out of range: want a whole number from 0 to 18446744073709551615`},
		{[]string{"serve", "--max-body", "-1"}, `--max-body "-1": want a size in bytes from 1 to 9223372036854775807`},
		{[]string{"serve", "--max-body", "0"}, `--max-body "0": want a size in bytes from 1 to 9223372036854775807`},
		{[]string{"serve", "--max-conns", "0"}, `--max-conns "0": want a number of connections from 1 to 2147483647`},
		{[]string{"serve", "--max-body", "9223372036854775808"}, `--max-body "9223372036854775808": out of range: want a size in bytes from 1 to 9223372036854775807`},
		{[]string{"serve", "--max-body", big}, `--max-body "` + big + `": out of range: want a size in bytes from 1 to 9223372036854775807`},
	} {
		// On a flag it misreads, serve would serve: a deadline ends it.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var stderr bytes.Buffer
		code := run(ctx, append([]string{"--store", store}, c.args...), strings.NewReader(`{}`), io.Discard, &stderr)
		cancel()
		errs := stderr.String()
		if code != 2 || !strings.Contains(errs, c.want+"\n") || strings.Count(errs, "\n") != 1 {
			t.Errorf("cairn %q: exit %d, %q; want exit 2 saying %q", c.args, code, errs, c.want)
		}
	}
	// Without the flag, prune still says it is required.
	if _, errs, code := cli(t, store, "", "prune", "s"); code != 2 || !strings.Contains(errs, "--keep-last N with N >= 1 is required") {
		t.Errorf("prune without --keep-last: exit %d, %q", code, errs)
	}
}
