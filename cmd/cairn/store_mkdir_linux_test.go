package main

import (
	"os"
	"strings"
	"testing"
)

// TestStoreThatMakesNoDirectory: a local store on a file system that
// makes no directory (/proc, whose mkdir says "no such file or
// directory") made commit and gc say a store key and the path the
// system refused ("commit s@1: mark session s: put sessions/s: open
// /proc/self/sessions: no such file or directory"). The store refuses
// what a write needs: said as its refusal, in words, exit 1, as for a
// store this user may not write (TestStorePermissionSaidInWords).
func TestStoreThatMakesNoDirectory(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	const store = "/proc/self"
	if fi, err := os.Stat(store); err != nil || !fi.IsDir() {
		t.Skip("no /proc here:", err)
	}
	if err := os.Mkdir(store+"/sessions", 0o755); err == nil || !os.IsNotExist(err) {
		t.Skipf("mkdir in %s: %v; want it refused as no such file", store, err)
	}
	const why = " refused the request: a directory of its layout could not be made in it (no such file or directory): "
	for _, c := range []struct {
		args   []string
		stdin  string
		undone string
	}{
		{[]string{"commit", "s", "-"}, `{"n":1}`, "the marker of session s was not written; the step was not written"},
		{[]string{"gc"}, "", "gc's clock object was not written"},
	} {
		out, errs, code := cli(t, store, c.stdin, c.args...)
		want := "cairn " + c.args[0] + ": the store " + store + why + c.undone + "\n"
		if code != 1 || out != "" || errs != want || storeWords.MatchString(errs) {
			t.Errorf("%s: exit %d, %q %q; want exit 1 and %q", strings.Join(c.args, " "), code, out, errs, want)
		}
	}
}
