//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCommitDirUnreadableIsBadInput: a --dir holding a file or a
// directory this user may not read cannot be committed as it stands:
// bad input, exit 2, as a --json-file that cannot be read is, naming
// the file, with nothing committed. It was exit 1, as a failure of the
// store. The binary runs as a user the files refuse: this one, or, when
// the tests run as root, nobody.
func TestCommitDirUnreadableIsBadInput(t *testing.T) {
	bin := cairnBinary(t)
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	if err := os.Mkdir(store, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(store, 0o777); err != nil { // past the umask
		t.Fatal(err)
	}
	secret, closed := filepath.Join(dir, "secret"), filepath.Join(dir, "closed")
	for _, d := range []string{secret, filepath.Join(closed, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(secret, "a.txt"), []byte("readable"))
	writeFile(t, filepath.Join(secret, "key"), []byte("secret"))
	if err := os.Chmod(filepath.Join(secret, "key"), 0o000); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(closed, "sub"), 0o000); err != nil {
		t.Fatal(err)
	}
	reach := reachableBy(t, dir)
	if err := os.Chmod(store, 0o777); err != nil {
		t.Fatal(err)
	}
	for state, file := range map[string]string{secret: filepath.Join(secret, "key"), closed: filepath.Join(closed, "sub")} {
		cmd := exec.Command(bin, "--store", store, "commit", "s", "--dir", state)
		cmd.Env = append(os.Environ(), "CAIRN_CACHE_DIR=off", "HOME="+dir)
		reach(cmd)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		code, errs := cmd.ProcessState.ExitCode(), errb.String()
		if code != 2 || !strings.Contains(errs, file) || !strings.Contains(errs, "permission denied") || strings.Count(errs, "\n") != 1 {
			t.Errorf("commit --dir %s: exit %d (%v), %q; want exit 2 naming %s, permission denied", state, code, err, errs, file)
		}
	}
	if _, errs, code := cli(t, store, "", "log", "s"); code != 1 || !strings.Contains(errs, "session s not found: it has no steps") {
		t.Errorf("a step was committed: log exit %d, %q", code, errs)
	}
}

// reachableBy returns how to run a command as a user that files of this
// one refuse: this user, or, when the tests run as root (whom nothing
// is refused), nobody, who must then reach dir (the binary, if built
// there, too): its parents up to the temporary directory are opened to
// all.
func reachableBy(t *testing.T, dir string) func(cmd *exec.Cmd) {
	t.Helper()
	if os.Geteuid() != 0 {
		return func(*exec.Cmd) {}
	}
	for d := dir; d != "/" && d != "."; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if d == os.TempDir() {
			break
		}
	}
	return func(cmd *exec.Cmd) {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
}

// TestCheckoutUnwritableDirIsBadInput: cairn checkout into a --dir this
// user may not write (a new directory under a read-only one, or an empty
// read-only one) is bad input, exit 2, said of the flag, as export says
// of an --out it cannot write. It was exit 1, "checkout s@1: mkdir …:
// permission denied", as a failure of the store.
func TestCheckoutUnwritableDirIsBadInput(t *testing.T) {
	bin := cairnBinary(t)
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	reach := reachableBy(t, dir)
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	// The store is this user's (nobody's, as root): it may read it.
	commit := exec.Command(bin, "--store", store, "commit", "s", "-")
	commit.Env = append(os.Environ(), "CAIRN_CACHE_DIR=off", "HOME="+dir)
	commit.Stdin = strings.NewReader(`{"a":1}`)
	reach(commit)
	if out, err := commit.CombinedOutput(); err != nil {
		t.Fatalf("commit: %v: %s", err, out)
	}
	for _, target := range []string{filepath.Join(ro, "new"), ro} {
		cmd := exec.Command(bin, "--store", store, "checkout", "s", "--dir", target)
		cmd.Env = append(os.Environ(), "CAIRN_CACHE_DIR=off", "HOME="+dir)
		reach(cmd)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		err := cmd.Run()
		code, errs := cmd.ProcessState.ExitCode(), errb.String()
		if want := "cairn checkout: --dir " + target + ": cannot write it: permission denied\n"; code != 2 || errs != want {
			t.Errorf("checkout --dir %s: exit %d (%v), %q; want exit 2, %q", target, code, err, errs, want)
		}
	}
}
