package httpapi

import (
	"testing"
	"time"
)

// TestSlowReadersLetOthersRead: a client that asks for a large state and
// takes it slowly, never leaving 64 KiB of it unread for SendTimeout,
// held its read slot until the whole answer had gone out: MaxReads such
// clients (2 KB a second each by default: for a 32 MiB state, hours)
// left every other client 503 on every read all that while. Once a read
// is refused for want of a slot, each answer being sent has SendTimeout
// from then to go out, and is cut off past it.
func TestSlowReadersLetOthersRead(t *testing.T) {
	srv, ts, conn := bigRead(t, 64, 5*time.Second, 0) // 64 MiB of state
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		// Slow, but never leaving 64 KiB unread for SendTimeout: the
		// whole state would take a minute or more.
		defer close(done)
		buf := make([]byte, 64<<10)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // a guard, not a measurement
			if _, err := conn.Read(buf); err != nil {
				return // cut off
			}
		}
	}()
	defer func() { close(stop); <-done }()
	settled(t, "the slow reader did not take the read slot", func() bool { return len(srv.reads) == 1 })
	readSmallBeside(t, ts, "reads slowly", "once the slow one has had SendTimeout to finish")
}
