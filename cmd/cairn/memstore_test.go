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

// TestMemStoreServes: serve and mcp keep one process for many requests,
// so an in-memory store lasts as long as their clients use it: it is not
// refused there.
func TestMemStoreServes(t *testing.T) {
	c, _, stderr := startMCP(t, "mem://")
	c.call("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "cairn-test", "version": "1"},
	})
	c.send(map[string]any{"method": "notifications/initialized"})
	doc := `{"n":1}`
	if cp := c.tool("checkpoint", map[string]any{"session": "m", "state_json": doc}); cp["step"] != 1.0 {
		t.Fatalf("checkpoint on mem:// = %v (%s)", cp, stderr)
	}
	if r := c.tool("resume", map[string]any{"session": "m"}); r["state_json"] != doc {
		t.Fatalf("resume on mem:// = %v (%s)", r, stderr)
	}
}
