package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/hitl"
)

// TestRunReplyStartsTheCountAfresh: "a step that lands in between starts
// the count (and the pause) afresh". A command that failed, then asked a
// human (a step), was answered (a step) and failed once more was counted
// as failing twice in a row: a --wait run with --restart 1 gave up on a
// session that had just moved on by two steps, after its human answered,
// and a longer one paused as long as after failures in a row.
func TestRunReplyStartsTheCountAfresh(t *testing.T) {
	ws, exe := setup(t, "askfail")
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	s, _ := ws.Session("a")
	// The human answers once the run waits for it.
	log := &waitLog{waiting: make(chan struct{})}
	go func() {
		select {
		case <-ctx.Done():
			return
		case <-log.waiting:
		}
		if _, err := hitl.Reply(ctx, s, json.RawMessage(`"yes"`)); err != nil {
			t.Error(err)
		}
	}()
	var slept pauses
	res, err := Run(ctx, ws, Config{Session: "a", Command: []string{exe}, Restarts: 1, Wait: true,
		PollInterval: 10 * time.Millisecond, Backoff: time.Second, MaxBackoff: time.Minute, Log: log, sleep: slept.sleep})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	if res.Status != cairn.Done || res.Head != 3 || res.Starts != 4 || res.Restarts != 2 {
		t.Fatalf("result %+v\n%s", res, log.String())
	}
	if want := (pauses{time.Second, time.Second}); !slices.Equal(slept, want) {
		t.Fatalf("pauses %v, want %v\n%s", slept, want, log.String())
	}
	if !strings.Contains(log.String(), "at a@2; restart 2 in 1s (1 of 1 without a new step)") {
		t.Fatalf("log:\n%s", log.String())
	}
}

// waitLog is a run's log that closes waiting once the run says it waits
// for a reply.
type waitLog struct {
	mu      sync.Mutex
	b       bytes.Buffer
	waiting chan struct{}
}

func (l *waitLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Write(p)
	if bytes.Contains(p, []byte("waiting for a reply")) {
		select {
		case <-l.waiting:
		default:
			close(l.waiting)
		}
	}
	return len(p), nil
}

func (l *waitLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
