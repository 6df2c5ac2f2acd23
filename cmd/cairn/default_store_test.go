package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFreshDefaultStoreIsNotMade: on a fresh machine, every command that
// only reads or maintains a store — gc among them — finds the default
// store simply empty and leaves it unmade (README: a store is made by its
// first commit), gc --json included; the first commit makes it.
func TestFreshDefaultStoreIsNotMade(t *testing.T) {
	data := t.TempDir()
	t.Setenv("CAIRN_STORE", "")
	t.Setenv("XDG_DATA_HOME", data)
	t.Setenv("CAIRN_CACHE_DIR", "off")
	store := filepath.Join(data, "cairn")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sessions"}, "no sessions\n"},
		{[]string{"inbox"}, "no session awaits input\n"},
		{[]string{"du"}, "total: 0 objects"},
		{[]string{"verify"}, "verified 0 sessions"},
		{[]string{"gc", "--dry-run"}, "would delete 0 objects"},
		{[]string{"gc"}, "deleted 0 objects"},
		{[]string{"gc", "--grace", "0s", "--verbose"}, "deleted 0 objects"},
		{[]string{"gc", "--json"}, `"dry_run":false`},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), c.args, strings.NewReader(""), &out, &errb)
		if code != 0 || !strings.Contains(out.String(), c.want) {
			t.Errorf("cairn %s on a fresh default store: exit %d, stdout %q, stderr %q; want exit 0 and %q",
				strings.Join(c.args, " "), code, out.String(), errb.String(), c.want)
		}
		if _, err := os.Stat(store); !os.IsNotExist(err) {
			t.Fatalf("cairn %s made the default store %s (stat: %v)", strings.Join(c.args, " "), store, err)
		}
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"commit", "s", "-"}, strings.NewReader(`{}`), &out, &errb); code != 0 {
		t.Fatalf("first commit: exit %d: %s", code, errb.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"gc"}, strings.NewReader(""), &out, &errb); code != 0 || !strings.Contains(out.String(), "1 live step") {
		t.Fatalf("gc after the first commit: exit %d, %q, %s", code, out.String(), errb.String())
	}
	if _, err := os.Stat(filepath.Join(store, "gc", "state")); err != nil {
		t.Errorf("gc of a made store kept no state: %v", err)
	}
}
