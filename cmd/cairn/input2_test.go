package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe to read while a command writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRunWaitEndsWhenSessionRemoved: cairn run --wait, waiting for a
// reply, ends when the session is removed under it (it polled forever),
// with the removal's error and exit code.
func TestRunWaitEndsWhenSessionRemoved(t *testing.T) {
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"q":1}`, "commit", "w", "-", "--status", "awaiting_input", "--record", `{"question":"go on?"}`); code != 0 {
		t.Fatalf("commit: exit %d: %s", code, errs)
	}
	var stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"--store", store, "run", "--wait", "--session", "w", "--", "true"}, strings.NewReader(""), &lockedBuffer{}, &stderr)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stderr.String(), "waiting for a reply") {
		if time.Now().After(deadline) {
			t.Fatalf("cairn run --wait never waited:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, errs, code := cli(t, store, "", "rm", "w"); code != 0 {
		t.Fatalf("rm: exit %d: %s", code, errs)
	}
	select {
	case code := <-done:
		if code != 1 || !strings.Contains(stderr.String(), "cairn run: wait for a reply: head of w: not found: the session was removed") {
			t.Fatalf("cairn run --wait after rm: exit %d, want 1 saying the session was removed:\n%s", code, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("cairn run --wait still waits 20 s after its session was removed:\n%s", stderr.String())
	}
}
