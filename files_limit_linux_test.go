package cairn_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestOutOfFilesSaidInWords: a local store's commit in a process that has
// every file open it may have (cairn serve under many connections) was an
// error of no kind that named the store's internals: "put
// steps/s/00000000000000000002: open /store/.tmp/put-…: too many open
// files", 500 "internal" through the HTTP API. It is ErrUnavailable now
// (503 "unavailable" through the API), said in words: the store, why, and
// that the step was not written.
func TestOutOfFilesSaidInWords(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ws, err := cairn.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	s, err := ws.Session("s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":1}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	open, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	var was syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &was); err != nil {
		t.Fatal(err)
	}
	low := was
	low.Cur = uint64(len(open) + 16)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	var held []*os.File // every descriptor left, as a crowd of connections holds them
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			break
		}
		held = append(held, f)
	}
	_, err = s.Commit(ctx, cairn.JSON([]byte(`{"n":2}`)), cairn.CommitOptions{})
	for _, f := range held {
		f.Close()
	}
	if rerr := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &was); rerr != nil {
		t.Fatal(rerr)
	}
	if err == nil {
		t.Fatal("a commit with no file to open succeeded")
	}
	if !errors.Is(err, cairn.ErrUnavailable) || !strings.Contains(err.Error(), "too many files are open") ||
		!strings.Contains(err.Error(), "step s@2 was not written") {
		t.Errorf("commit with no file to open: %v; want ErrUnavailable, saying too many files are open and that s@2 was not written", err)
	}
	for _, internal := range []string{dir + "/", "steps/", ".tmp", "put-"} {
		if strings.Contains(err.Error(), internal) {
			t.Errorf("commit with no file to open: %q names %q", err, internal)
		}
	}
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":2}`)), cairn.CommitOptions{}); err != nil {
		t.Fatalf("the commit once files could be opened again: %v", err)
	}
}
