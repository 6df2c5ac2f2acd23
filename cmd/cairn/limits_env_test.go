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
	for _, name := range []string{"CAIRN_MAX_OBJECT_BYTES", "CAIRN_MAX_VALUE_BYTES", "CAIRN_MAX_TOTAL_BYTES", "CAIRN_MAX_DEPTH", "CAIRN_MAX_FORK_LEVELS"} {
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

// TestVerifyOverALimitSaysHowToRaiseIt: an object beyond a read limit
// is not known to be damaged, so verify says how to raise the limit
// (docs/limits.md: "a limit error is … one line naming the limit that
// stopped it and how to raise it"), in its text and --json alike. It
// used to say to restore the object from a backup.
func TestVerifyOverALimitSaysHowToRaiseIt(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "s", "-"); code != 0 {
		t.Fatalf("commit: exit %d: %s", code, errs)
	}
	t.Setenv("CAIRN_MAX_OBJECT_BYTES", "3")
	out, errs, code := cli(t, store, "", "verify")
	if code != 1 || !strings.Contains(out, "raise $CAIRN_MAX_OBJECT_BYTES if the store is trusted") ||
		strings.Contains(out, "backup") {
		t.Errorf("verify over a limit: exit %d, stdout %q, stderr %q; want exit 1 saying to raise $CAIRN_MAX_OBJECT_BYTES, no backup", code, out, errs)
	}
	out, _, code = cli(t, store, "", "verify", "--json")
	if code != 1 || !strings.Contains(out, `raise $CAIRN_MAX_OBJECT_BYTES if the store is trusted`) || strings.Contains(out, "backup") {
		t.Errorf("verify --json over a limit: exit %d, stdout %q", code, out)
	}
}

// TestDepthLimitSaysHowToRaiseIt: a state nested deeper than
// $CAIRN_MAX_DEPTH is a limit error that names the variable, as every
// other limit error does (docs/limits.md). show, checkout and diff said
// only "limit exceeded: JSON nesting deeper than 2".
func TestDepthLimitSaysHowToRaiseIt(t *testing.T) {
	store := t.TempDir()
	deep := func(leaf string) string {
		doc := `{"x":"` + leaf + strings.Repeat("y", 2000) + `"}`
		for i := 0; i < 6; i++ {
			doc = `{"k":` + doc + `,"pad":"` + strings.Repeat("p", 1500) + `"}`
		}
		return doc
	}
	for _, doc := range []string{deep("a"), deep("b")} {
		if _, errs, code := cli(t, store, doc, "commit", "s", "-"); code != 0 {
			t.Fatalf("commit: exit %d: %s", code, errs)
		}
	}
	t.Setenv("CAIRN_MAX_DEPTH", "2")
	for _, args := range [][]string{
		{"show", "s"},
		{"checkout", "s", "--dir", t.TempDir() + "/co"},
		{"diff", "s@1", "s@2"},
	} {
		_, errs, code := cli(t, store, "", args...)
		if code != 1 || !strings.Contains(errs, "raise $CAIRN_MAX_DEPTH if the store is trusted") {
			t.Errorf("cairn %s with CAIRN_MAX_DEPTH=2: exit %d, stderr %q; want exit 1 saying to raise $CAIRN_MAX_DEPTH", strings.Join(args, " "), code, errs)
		}
	}
}
