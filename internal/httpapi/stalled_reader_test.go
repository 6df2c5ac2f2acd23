package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
)

// TestStalledReaderLetsGo: a client that asks for a large state and then
// stops reading it held its read slot for as long as it kept the
// connection open, so MaxReads such clients (a crashed or suspended
// agent, a stalled network path) left every other client 503 on every
// read, for ever. Each write of an answer now has SendTimeout to go out;
// past it the stalled client is cut off and its slot freed.
func TestStalledReaderLetsGo(t *testing.T) {
	// 32 MiB of state; the stalled client reads nothing, another asks
	// for a small state.
	_, ts, _ := bigRead(t, 32, 300*time.Millisecond, 4<<10)
	readSmallBeside(t, ts, "stopped reading", "once the stalled one is cut off")
}

// TestSendTimeoutSparesLiveClients: SendTimeout bounds each write, not
// the answer: a long-poll that waits past it, a client that reads a large
// state slowly but steadily, and a kept-alive connection idle past it
// between two requests all get their whole answers. SendTimeout is a
// second, so that a test process the machine leaves unscheduled for a
// moment (200 ms once cut the reader off under CI's load) is not taken
// for a client that stopped reading; the reader's pauses still make its
// whole read last longer than SendTimeout.
func TestSendTimeoutSparesLiveClients(t *testing.T) {
	const sendTimeout = time.Second
	ws := cairn.OpenStore(memStore())
	_, size := commitBomb(t, ws, "big", 8)
	ts := httptest.NewServer(New(ws, Options{SendTimeout: sendTimeout}))
	t.Cleanup(ts.Close)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	t.Cleanup(client.CloseIdleConnections)

	resp, err := client.Get(ts.URL + "/v1/sessions/big/wait?after=1&timeout=1.5")
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("a long-poll past SendTimeout: %v %v; want 204", resp, err)
	}
	resp.Body.Close()
	time.Sleep(sendTimeout * 3 / 2) // the kept-alive connection idles past SendTimeout

	resp, err = client.Get(ts.URL + "/v1/sessions/big/head")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var n int
	buf := make([]byte, 256<<10)
	start := time.Now()
	for {
		k, err := io.ReadFull(resp.Body, buf)
		n += k
		if err != nil {
			break
		}
		time.Sleep(60 * time.Millisecond) // slow, but never stalled for SendTimeout
	}
	took := time.Since(start)
	if n < size {
		t.Fatalf("a slow reader got %d bytes in %v, want the whole state of %d", n, took, size)
	}
	if took < sendTimeout {
		t.Fatalf("the slow read took %v, less than SendTimeout: it proves nothing", took)
	}
}
