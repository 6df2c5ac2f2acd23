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
