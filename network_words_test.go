package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/s3test"
)

// TestUnansweredStepPutMayHaveBeenWritten: a commit whose step put gets
// no answer from the store (a server that reads the request and never
// replies, on every attempt) says so in words, names the store and that
// the step may have been written, and is both cairn.ErrUnavailable and
// cairn.ErrMaybeWritten; the session's next commit builds on the head.
// It was the SDK's text around the step's key ("put steps/s/000…02: …
// no answer from the store for 1s …").
func TestUnansweredStepPutMayHaveBeenWritten(t *testing.T) {
	ctx := context.Background()
	b := s3test.StartMinIO(t)
	t.Setenv("AWS_ACCESS_KEY_ID", b.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", b.SecretKey)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))

	// A proxy that holds every PUT of a step object unanswered until the
	// test ends, and forwards everything else to the server.
	target, _ := url.Parse(b.Endpoint)
	rp := httputil.NewSingleHostReverseProxy(target)
	stepPut := regexp.MustCompile(`/steps/[^/]+/[0-9]{20}$`)
	hold := make(chan struct{})
	px := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && stepPut.MatchString(r.URL.Path) {
			select {
			case <-hold:
			case <-r.Context().Done():
			}
			return
		}
		rp.ServeHTTP(w, r)
	}))
	defer px.Close()
	defer close(hold)

	good := fmt.Sprintf("minio://%s/%s/net?secure=false", b.Host, b.Name)
	held := fmt.Sprintf("minio://%s/%s/net?secure=false&timeout=1s&attempts=2", strings.TrimPrefix(px.URL, "http://"), b.Name)
	gws, err := cairn.Open(ctx, good)
	if err != nil {
		t.Fatal(err)
	}
	gs, _ := gws.Session("s")
	if _, err := gs.Commit(ctx, cairn.JSON([]byte(`{"n":1}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}

	hws, err := cairn.Open(ctx, held)
	if err != nil {
		t.Fatal(err)
	}
	hs, _ := hws.Session("s")
	_, err = hs.Commit(ctx, cairn.JSON([]byte(`{"n":2}`)), cairn.CommitOptions{})
	want := "the store " + held + " did not answer within 1s (set the timeout with ?timeout= or $CAIRN_S3_TIMEOUT), after 2 attempts: step s@2 may have been written (it may have reached the store before the answer was lost); the session's next commit reads its head again"
	if !errors.Is(err, cairn.ErrUnavailable) || !errors.Is(err, cairn.ErrMaybeWritten) {
		t.Errorf("commit: %v; want ErrUnavailable and ErrMaybeWritten", err)
	}
	if err == nil || err.Error() != want || keyOrSDK.MatchString(err.Error()) {
		t.Errorf("commit: %q; want %q, and no store key or SDK text", err, want)
	}

	// The step did not land (the proxy never passed it on): the next
	// commit is step 2.
	if st, err := gs.Commit(ctx, cairn.JSON([]byte(`{"n":2}`)), cairn.CommitOptions{}); err != nil || st.Number != 2 {
		t.Fatalf("commit after the unanswered put: %v, %v; want step 2", st, err)
	}
}
