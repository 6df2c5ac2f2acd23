package main

import (
	"strings"
	"testing"
)

// TestLimitEnvRefusedNamingVariable: a $CAIRN_MAX_* that is negative
// (-1 meant as "unlimited"), zero, or not a whole number is a usage
// error (exit 2) naming the variable, before anything is read or
// written, never a silent default.
func TestLimitEnvRefusedNamingVariable(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "s", "-"); code != 0 {
		t.Fatalf("commit: exit %d: %s", code, errs)
	}
	for _, name := range []string{"CAIRN_MAX_OBJECT_BYTES", "CAIRN_MAX_VALUE_BYTES", "CAIRN_MAX_TOTAL_BYTES", "CAIRN_MAX_DEPTH"} {
		for _, v := range []string{"-1", "0", "lots", "1.5", "1e9"} {
			t.Run(name+"="+v, func(t *testing.T) {
				t.Setenv(name, v)
				for _, args := range [][]string{{"show", "s"}, {"commit", "s", "-"}, {"gc", "--dry-run"}} {
					out, errs, code := cli(t, store, `{"a":2}`, args...)
					if code != 2 || !strings.Contains(errs, "$"+name) || out != "" {
						t.Errorf("cairn %s with %s=%s: exit %d, stdout %q, stderr %q; want exit 2 naming $%s", strings.Join(args, " "), name, v, code, out, errs, name)
					}
				}
			})
		}
	}
	if out, _, _ := cli(t, store, "", "show", "s"); !strings.Contains(out, `"a":1`) && !strings.Contains(out, `"a": 1`) {
		t.Errorf("a refused commit wrote: show says %q", out)
	}
}
