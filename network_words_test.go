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
	"sync/atomic"
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

// TestStepPutServerErrorMayHaveBeenWritten: a commit whose step put is
// stored and then answered with a server error (as some S3 servers do)
// says so in words: the store, the server error, and that the step may
// have been written; it is cairn.ErrUnavailable and
// cairn.ErrMaybeWritten, and the session's next commit builds on the
// step that landed. It was the SDK's text around the step's key ("put
// steps/s/000…02: operation error S3: PutObject, … StatusCode: 500 …").
func TestStepPutServerErrorMayHaveBeenWritten(t *testing.T) {
	ctx := context.Background()
	b := s3test.StartMinIO(t)
	t.Setenv("AWS_ACCESS_KEY_ID", b.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", b.SecretKey)

	// A proxy that passes every request on to the server and answers the
	// first PUT of a step object, once the server has stored it, with 500.
	target, _ := url.Parse(b.Endpoint)
	rp := httputil.NewSingleHostReverseProxy(target)
	stepPut := regexp.MustCompile(`/steps/[^/]+/[0-9]{20}$`)
	var failed atomic.Bool
	px := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPut || !stepPut.MatchString(r.URL.Path) || failed.Swap(true) {
			rp.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		rp.ServeHTTP(rec, r)
		if rec.Code != http.StatusOK {
			t.Errorf("the proxied step put: HTTP %d", rec.Code)
		}
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>We encountered an internal error.</Message><Key>%s</Key></Error>`, r.URL.Path)
	}))
	defer px.Close()

	good := fmt.Sprintf("minio://%s/%s/s5xx?secure=false", b.Host, b.Name)
	failing := fmt.Sprintf("minio://%s/%s/s5xx?secure=false&attempts=1", strings.TrimPrefix(px.URL, "http://"), b.Name)
	gws, err := cairn.Open(ctx, good)
	if err != nil {
		t.Fatal(err)
	}
	gs, _ := gws.Session("s")
	if _, err := gs.Commit(ctx, cairn.JSON([]byte(`{"n":1}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}

	fws, err := cairn.Open(ctx, failing)
	if err != nil {
		t.Fatal(err)
	}
	fs, _ := fws.Session("s")
	_, err = fs.Commit(ctx, cairn.JSON([]byte(`{"n":2}`)), cairn.CommitOptions{})
	want := "the store " + failing + " answered with a server error (HTTP 500 InternalError): step s@2 may have been written (a server error does not say whether the object was stored); the session's next commit reads its head again"
	if !errors.Is(err, cairn.ErrUnavailable) || !errors.Is(err, cairn.ErrMaybeWritten) {
		t.Errorf("commit: %v; want ErrUnavailable and ErrMaybeWritten", err)
	}
	if err == nil || err.Error() != want || keyOrSDK.MatchString(err.Error()) {
		t.Errorf("commit: %q; want %q, and no store key or SDK text", err, want)
	}

	// The step landed: the session's next commit builds on it.
	if st, err := fs.Commit(ctx, cairn.JSON([]byte(`{"n":3}`)), cairn.CommitOptions{}); err != nil || st.Number != 3 {
		t.Fatalf("commit after the answered put: %v, %v; want step 3", st, err)
	}
}
