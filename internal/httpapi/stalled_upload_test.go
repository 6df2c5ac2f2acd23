package httpapi

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
)

// TestStalledUploadLetsOthersCommit: a client that sent most of a large
// body and then stopped sending (a dead network path, a suspended
// agent) held those bytes of the bodies' budget until BodyTimeout, 60 s
// by default: every other commit, to any session, whose body did not fit
// beside it waited that long. A body that sends nothing for
// StallTimeout is cut off now (408), and the others go on.
func TestStalledUploadLetsOthersCommit(t *testing.T) {
	const maxBody = 64 << 10
	srv := New(cairn.OpenStore(memStore()), Options{MaxBody: maxBody, StallTimeout: 200 * time.Millisecond})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	conn := startUpload(t, ts, "stalled", fmt.Sprintf("Content-Length: %d", maxBody), `{"state":"`+strings.Repeat("x", maxBody-20))
	settled(t, "the stalled upload did not take its bytes", func() bool { return bodiesFree(srv) < 16<<10 })
	commitBeside(t, ts, "a stalled upload")
	if code, b := uploadAnswer(t, conn); code != http.StatusRequestTimeout || !strings.Contains(b, "stopped arriving") {
		t.Fatalf("the stalled upload: %d %s; want 408 saying it stopped arriving", code, b)
	}
}

// TestStalledChunkedUploadSaysSo: a chunked body that stalled in the
// middle of a chunk was 408 "it did not arrive in full in time", the
// answer to a body slower than BodyTimeout, though it had stalled for
// StallTimeout: the chunks' reader hands over the bytes it read with the
// timeout, which went unrecognised. Every stalled body is now said to
// have stopped arriving, after how many bytes, however it is framed.
func TestStalledChunkedUploadSaysSo(t *testing.T) {
	srv := New(cairn.OpenStore(memStore()), Options{MaxBody: 64 << 10, StallTimeout: 500 * time.Millisecond})
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	part := `{"state":"` + strings.Repeat("x", 1000) // 1010 bytes
	for _, tc := range []struct{ name, framing, sent string }{
		{"Content-Length", "Content-Length: 5000", part},
		{"chunked, between chunks", "Transfer-Encoding: chunked", fmt.Sprintf("%x\r\n%s\r\n", len(part), part)},
		{"chunked, in a chunk's size", "Transfer-Encoding: chunked", fmt.Sprintf("%x\r\n%s\r\n13", len(part), part)},
		{"chunked, in a chunk", "Transfer-Encoding: chunked", fmt.Sprintf("%x\r\n%s", 5000, part)},
	} {
		conn := startUpload(t, ts, "stalled", tc.framing, tc.sent)
		want := "request body: it stopped arriving after 1010 bytes, nothing more of it came for 500ms"
		if code, b := uploadAnswer(t, conn); code != http.StatusRequestTimeout || !strings.Contains(b, want) {
			t.Errorf("a body stalled part-way, %s: %d %s; want 408 saying %q", tc.name, code, b, want)
		}
	}
}
