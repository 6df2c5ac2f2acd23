package mcpserver

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestUnreadAnswersStopReading: a client that sends many small calls
// whose answers are large, and does not read its stdout, had every one
// of them started and its answer built: 300 resumes of a 1 MiB state
// held 2 GB and 300 goroutines, each answer waiting to be written. The
// transport now takes no further line while MaxCalls requests await
// their answers and readAhead bytes of lines wait behind them; once the
// client reads, every call is answered, in full.
func TestUnreadAnswersStopReading(t *testing.T) {
	store := mem.New()
	s0, err := cairn.OpenStore(store).Session("big")
	if err != nil {
		t.Fatal(err)
	}
	doc := `{"x":"` + strings.Repeat("abcdefgh", 8<<10) + `"}` // 64 KiB: each answer more than a pipe holds
	if _, err := s0.Commit(t.Context(), cairn.JSON([]byte(doc)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	s := startStdioOn(t, store, MaxInFlight)
	const calls = 10 * MaxCalls
	// Each line is of pad bytes, so that the lines read ahead (readAhead,
	// and what the reader's buffer holds) are a few.
	const pad = 16 << 10
	const ahead = (readAhead + 64<<10) / pad
	var sent atomic.Int64
	all := make(chan struct{})
	go func() {
		defer close(all)
		for i := range calls {
			if _, err := fmt.Fprintf(s.in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"resume","arguments":{"session":"big"},"_meta":{"pad":"%s"}}}`+"\n", i, strings.Repeat("p", pad)); err != nil {
				return
			}
			sent.Add(1)
		}
	}()
	// Nothing reads the answers: the transport must stop taking lines
	// (a line in the pipe, one held by the filter and those read ahead,
	// beyond MaxCalls).
	select {
	case <-all:
		t.Fatalf("all %d calls were taken while none of their answers was read; want at most about %d", sent.Load(), MaxCalls+ahead)
	case <-time.After(3 * time.Second):
	}
	if n := sent.Load(); n > MaxCalls+ahead+3 {
		t.Fatalf("%d calls were taken while none of their answers was read; want at most about %d", n, MaxCalls+ahead)
	}
	got := map[string]bool{}
	for range calls {
		r := s.next()
		if r.Error != nil || !strings.Contains(string(r.Result), "abcdefgh") {
			t.Fatalf("answer %.200s", r.raw)
		}
		got[string(r.ID)] = true
	}
	if len(got) != calls {
		t.Fatalf("%d distinct calls answered, want %d", len(got), calls)
	}
	<-all
}
