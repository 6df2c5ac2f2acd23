package main

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"
)

// TestServeStopsOnStdinEOF: with --stop-on-stdin-eof, cairn serve stops
// as on SIGTERM when its standard input ends, as it does when the program
// that started it with a pipe for stdin exits, however it exits. Without
// it, a client library's private server outlived a program killed by a
// signal, serving on a token no one knows.
func TestServeStopsOnStdinEOF(t *testing.T) {
	store := t.TempDir()
	stdinR, stdinW := io.Pipe()
	var out, errb lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"--store", store, "serve", "--listen", "127.0.0.1:0", "--stop-on-stdin-eof"}, stdinR, &out, &errb)
	}()
	addr := regexp.MustCompile(`cairn serve: (http://\S+)`)
	var url string
	for url == "" {
		select {
		case code := <-done:
			t.Fatalf("cairn serve exited %d before listening: %s", code, errb.String())
		case <-time.After(10 * time.Millisecond):
		}
		if m := addr.FindStringSubmatch(out.String()); m != nil {
			url = m[1]
		}
	}
	// It serves while its stdin is open.
	resp, err := http.Get(url + "/v1/sessions")
	if err != nil {
		t.Fatalf("GET while stdin is open: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET while stdin is open: %s", resp.Status)
	}
	select {
	case code := <-done:
		t.Fatalf("cairn serve exited %d with its stdin open: %s", code, errb.String())
	default:
	}
	stdinW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("cairn serve exited %d at the end of its stdin, want 0: %s", code, errb.String())
	}
	if _, err := http.Get(url + "/v1/sessions"); err == nil {
		t.Fatalf("cairn serve still answers after it exited")
	}
}
