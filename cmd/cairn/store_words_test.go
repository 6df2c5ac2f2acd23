package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestStoreThatIsAFile: a --store or $CAIRN_STORE naming a file is a bad
// value (exit 2) said as such for every command, the file untouched. It
// was "open fs store F: not a directory", exit 1.
func TestStoreThatIsAFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	writeFile(t, file, []byte("hello"))
	const rest = ": not a directory (a local store is a directory; s3:// and minio:// URLs name object stores)\n"
	for _, args := range [][]string{{"commit", "s", "-"}, {"show", "s"}, {"sessions"}, {"verify"}, {"gc"}} {
		_, errs, code := cli(t, file, `{}`, args...)
		if want := "cairn " + args[0] + ": --store " + file + rest; code != 2 || errs != want {
			t.Errorf("cairn --store FILE %s: exit %d, %q; want 2, %q", args[0], code, errs, want)
		}
	}
	t.Setenv("CAIRN_STORE", file)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"show", "s"}, strings.NewReader(""), &out, &errb)
	if want := "cairn show: $CAIRN_STORE " + file + rest; code != 2 || errb.String() != want {
		t.Errorf("CAIRN_STORE=FILE cairn show: exit %d, %q; want 2, %q", code, errb.String(), want)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "hello" {
		t.Errorf("the file is now %q, %v", b, err)
	}
}

// TestStorePermissionSaidInWords: a local store that refuses this user
// is said so, naming the store as given, not a store key and the file
// the system refused ("commit x@1: mark session x: put sessions/x: mkdir
// /…/sessions: permission denied"). A refused file outside the store (a
// --dir's) keeps its own error. Run as a user other than root it is also
// checked end to end.
func TestStorePermissionSaidInWords(t *testing.T) {
	store := t.TempDir()
	e := &env{store: store}
	inside := fmt.Errorf("commit x@1: mark session x: put sessions/x: %w",
		&iofs.PathError{Op: "mkdir", Path: filepath.Join(store, "sessions"), Err: iofs.ErrPermission})
	want := "permission denied on the store " + store + " (--store): this user must be able to read and write its files"
	if got := e.storeWords(inside); got.Error() != want {
		t.Errorf("a refused store file: %q; want %q", got, want)
	}
	outside := fmt.Errorf("commit x@1: %w", &iofs.PathError{Op: "open", Path: filepath.Join(t.TempDir(), "secret"), Err: iofs.ErrPermission})
	if got := e.storeWords(outside); got != outside {
		t.Errorf("a refused file outside the store: %q; want it as it was", got)
	}
	if other := errors.New("x"); e.storeWords(other) != other {
		t.Error("an error that is no refusal was changed")
	}

	if os.Geteuid() == 0 {
		return // root is refused nothing
	}
	ro := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	_, errs, code := cli(t, ro, `{}`, "commit", "x", "-")
	if want := "cairn commit: permission denied on the store " + ro + " (--store): this user must be able to read and write its files\n"; code != 1 || errs != want {
		t.Errorf("commit to a read-only store: exit %d, %q; want 1, %q", code, errs, want)
	}
}

// TestStoreOutOfSpaceSaidInWords: a local store whose disk is full is
// said so, naming the store, and whether the step may have landed; it
// was "commit s@1: the step may have been written …: put
// steps/s/00000000000000000001: write /…/steps/s/…: no space left on
// device" for a write that left nothing.
func TestStoreOutOfSpaceSaidInWords(t *testing.T) {
	store := t.TempDir()
	e := &env{store: store}
	full := &iofs.PathError{Op: "write", Path: filepath.Join(store, "steps", "s", "00000000000000000001"), Err: syscall.ENOSPC}
	notWritten := fmt.Errorf("commit s@1: write session s, step 1: put steps/s/00000000000000000001: %w", full)
	want := "the store " + store + " (--store) is out of space (no space left on device): the step was not written"
	if got := e.storeWords(notWritten); got.Error() != want {
		t.Errorf("a full store: %q; want %q", got, want)
	}
	maybe := fmt.Errorf("commit s@1: %w: %w", cairn.ErrMaybeWritten, full)
	got := e.storeWords(maybe)
	if want := "the store " + store + " (--store) is out of space (no space left on device): the step may have been written (cairn log shows the head)"; got.Error() != want {
		t.Errorf("a full store, the step perhaps landed: %q; want %q", got, want)
	}
	if !errors.Is(got, cairn.ErrMaybeWritten) {
		t.Error("the words lost what the error matched")
	}
	outside := fmt.Errorf("checkout: %w", &iofs.PathError{Op: "write", Path: filepath.Join(t.TempDir(), "out"), Err: syscall.ENOSPC})
	if got := e.storeWords(outside); got != outside {
		t.Errorf("a full disk outside the store: %q; want it as it was", got)
	}
}
