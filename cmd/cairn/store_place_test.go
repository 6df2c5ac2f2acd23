package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStoreAtFilesystemRoot: a store at the root of the filesystem
// (--store /, --store file:///, $CAIRN_STORE=/) is refused as the bad
// value it is, exit 2, said of the flag or variable; it was opened, and
// a command read / as a store (and its first commit would write there).
// Only commands that read are run: before the fix they touched / itself.
func TestStoreAtFilesystemRoot(t *testing.T) {
	for _, store := range []string{"/", "file:///", "//", "/tmp/.."} {
		for _, args := range [][]string{{"sessions"}, {"log", "s"}} {
			_, errs, code := cli(t, store, "", args...)
			want := "cairn " + args[0] + ": --store " + store + ": is the root of the filesystem, which cannot be a store"
			if code != 2 || !strings.HasPrefix(errs, want) || strings.Count(errs, "\n") != 1 {
				t.Errorf("cairn --store %s %s: exit %d, %q; want exit 2, %q…", store, strings.Join(args, " "), code, errs, want)
			}
		}
	}
	t.Setenv("CAIRN_STORE", "/")
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"sessions"}, strings.NewReader(""), &out, &errb)
	want := "cairn sessions: $CAIRN_STORE /: is the root of the filesystem, which cannot be a store"
	if code != 2 || !strings.HasPrefix(errb.String(), want) {
		t.Errorf("CAIRN_STORE=/ cairn sessions: exit %d, %q; want exit 2, %q…", code, errb.String(), want)
	}
}

// TestStoreInsideStore: a store directory inside another local store
// (--store A/steps/s, a session's directory of the store at A, or any
// directory under A) is refused, exit 2, naming the store it lies in;
// it was taken without a word, and its commits written among A's keys.
func TestStoreInsideStore(t *testing.T) {
	outer := filepath.Join(t.TempDir(), "a")
	if _, errs, code := cli(t, outer, `{"a":1}`, "commit", "s", "-"); code != 0 {
		t.Fatal(errs)
	}
	for _, inner := range []string{
		filepath.Join(outer, "steps", "s"),
		"file://" + filepath.Join(outer, "steps", "s"),
		filepath.Join(outer, "other"),
		filepath.Join(outer, "steps", "s", "deeper", "still"),
	} {
		for _, args := range [][]string{{"commit", "t", "-"}, {"sessions"}} {
			_, errs, code := cli(t, inner, `{"b":2}`, args...)
			want := "cairn " + args[0] + ": --store " + inner + ": is inside the store at " + outer + "; give a directory outside it\n"
			if code != 2 || errs != want {
				t.Errorf("cairn --store %s %s: exit %d, %q; want exit 2, %q", inner, strings.Join(args, " "), code, errs, want)
			}
		}
	}
	t.Setenv("CAIRN_STORE", filepath.Join(outer, "steps", "s"))
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"commit", "t", "-"}, strings.NewReader(`{"b":2}`), &out, &errb)
	if want := "cairn commit: $CAIRN_STORE " + filepath.Join(outer, "steps", "s") + ": is inside the store at " + outer + "; give a directory outside it\n"; code != 2 || errb.String() != want {
		t.Errorf("CAIRN_STORE inside a store: exit %d, %q; want exit 2, %q", code, errb.String(), want)
	}
	// Nothing was written inside the outer store, which still verifies.
	for _, p := range []string{filepath.Join(outer, "steps", "s", "steps"), filepath.Join(outer, "other"), filepath.Join(outer, "steps", "s", "deeper")} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s exists after the refused commits (%v)", p, err)
		}
	}
	if out, errs, code := cli(t, outer, "", "verify"); code != 0 {
		t.Errorf("verify of the outer store: exit %d %s %s", code, out, errs)
	}
	// A store beside another is fine.
	beside := filepath.Join(filepath.Dir(outer), "b")
	if _, errs, code := cli(t, beside, `{"b":2}`, "commit", "t", "-"); code != 0 {
		t.Errorf("a store beside another: exit %d %s", code, errs)
	}
}
