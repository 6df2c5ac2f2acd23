package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestMemStoreRefused: mem:// is the Go API's in-memory store for tests.
// Each cairn invocation is its own process, so a commit to it was
// acknowledged ("s@1 …", exit 0) and gone when the command exited: the
// next command found no session. The command line refuses it as the bad
// value it is (exit 2), before anything is acknowledged, whether it
// comes from --store or $CAIRN_STORE.
func TestMemStoreRefused(t *testing.T) {
	for _, url := range []string{"mem://", "mem://x", "mem://b/p"} {
		for _, args := range [][]string{{"commit", "s", "-"}, {"sessions"}, {"export", "--format", "openai-jsonl"}} {
			out, errs, code := cli(t, url, `{}`, args...)
			if code != 2 || out != "" || !strings.Contains(errs, "--store "+url+": ") || !strings.Contains(errs, "in-memory") {
				t.Errorf("cairn --store %s %s: exit %d, out %q, err %q; want exit 2 refusing the in-memory store", url, strings.Join(args, " "), code, out, errs)
			}
		}
	}
	t.Setenv("CAIRN_STORE", "mem://")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"commit", "s", "-"}, strings.NewReader(`{}`), &out, &errb)
	if code != 2 || out.Len() != 0 || !strings.Contains(errb.String(), "$CAIRN_STORE mem://: ") {
		t.Errorf("CAIRN_STORE=mem:// cairn commit: exit %d, out %q, err %q; want exit 2 naming $CAIRN_STORE", code, out.String(), errb.String())
	}
}
