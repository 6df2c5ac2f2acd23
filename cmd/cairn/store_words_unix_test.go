//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestStorePermissionSaidInWords: a local store that refuses this user
// is said so, naming the store as given and what was not done, not a
// store key and the file the system refused ("commit x@1: mark session
// x: put sessions/x: mkdir /…/sessions: permission denied"). The words
// are the root package's, as for an S3 server's refusal (the local store
// marks the system's refusal as the store's: cas/fs
// TestRefusalOfThisUser), so the Go API, HTTP and MCP say the same; the
// CLI had words of its own. The binary runs as a user the store refuses:
// this one, or, when the tests run as root (whom nothing is refused),
// nobody.
func TestStorePermissionSaidInWords(t *testing.T) {
	bin := cairnBinary(t)
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--store", ro, "commit", "x", "-")
	cmd.Env = append(os.Environ(), "CAIRN_CACHE_DIR=off", "HOME="+dir)
	reachableBy(t, dir)(cmd)
	cmd.Stdin = strings.NewReader(`{}`)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	errs := errb.String()
	want := "cairn commit: the store " + ro + " refused the request: permission denied (this user must be able to read and write the store's files): "
	if code != 1 || !strings.HasPrefix(errs, want) || storeWords.MatchString(errs) || strings.Count(errs, "\n") != 1 {
		t.Errorf("commit to a read-only store: exit %d (%v), %q; want 1, %q…", code, err, errs, want)
	}
}
