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
	"github.com/cairnlog/cairn/cas"
	_ "github.com/cairnlog/cairn/cas/minio" // minio:// stores (not s3://: TestOpenBadStoreURL needs it unlinked)
	"github.com/cairnlog/cairn/internal/s3test"
)

// keyOrSDK matches what an error about a refused request must not show:
// a store key, a 20-digit step number, the SDK's or the server's text.
var keyOrSDK = regexp.MustCompile(`steps/|packs/|pins/|sessions/|gc/state|[0-9]{20}|operation error|api error|StatusCode|RequestID|AccessDenied|NoSuchBucket|SignatureDoesNotMatch`)

// TestS3RefusalWords: through the Go API, a request a real S3 server
// refuses (wrong credentials, no such bucket, a put its policy denies)
// is an error that says so in words, names the store by its URL and
// what went undone, keeps the backend's error as a cause (errors.As
// finds cas.RefusedError), is cairn.ErrRefused and of none of the API's other kinds, and loses
// nothing: a refused commit keeps the session's head.
func TestS3RefusalWords(t *testing.T) {
	ctx := context.Background()
	b := s3test.StartMinIO(t)
	t.Setenv("AWS_ACCESS_KEY_ID", b.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", b.SecretKey)
	t.Setenv("AWS_REGION", b.Region)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("CAIRN_S3_ATTEMPTS", "1")

	// A proxy that answers a PUT of a step object as a policy that
	// denies writes would, and forwards everything else to the server.
	target, _ := url.Parse(b.Endpoint)
	rp := httputil.NewSingleHostReverseProxy(target)
	stepPut := regexp.MustCompile(`/steps/[^/]+/[0-9]{20}$`)
	px := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && stepPut.MatchString(r.URL.Path) {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied.</Message><Key>%s</Key></Error>`, r.URL.Path)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	defer px.Close()

	good := fmt.Sprintf("minio://%s/%s/api?secure=false", b.Host, b.Name)
	denied := fmt.Sprintf("minio://%s/%s/api?secure=false", strings.TrimPrefix(px.URL, "http://"), b.Name)
	noBucket := fmt.Sprintf("minio://%s/no-such-bucket-api/api?secure=false", b.Host)
	ws, err := cairn.Open(ctx, good)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ws.Session("s")
	if _, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":1}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}

	check := func(label string, err error, url, want string) {
		t.Helper()
		var refused *cas.RefusedError
		prefix := "the store " + url + " refused the request: "
		switch {
		case err == nil:
			t.Errorf("%s: no error", label)
		case !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), want) || keyOrSDK.MatchString(err.Error()):
			t.Errorf("%s: %q; want %q…%q and no store key or SDK text", label, err, prefix, want)
		case !errors.As(err, &refused):
			t.Errorf("%s: errors.As finds no cas.RefusedError in %q", label, err)
		case !errors.Is(err, cairn.ErrRefused):
			t.Errorf("%s: %q is not cairn.ErrRefused", label, err)
		}
		for _, k := range []error{cairn.ErrNotFound, cairn.ErrConflict, cairn.ErrCorrupt, cairn.ErrInvalid, cairn.ErrLimit, cairn.ErrUnavailable, cairn.ErrMaybeWritten} {
			if errors.Is(err, k) {
				t.Errorf("%s: %q is %v", label, err, k)
			}
		}
	}
	for _, c := range []struct {
		label, url, secret, want string
	}{
		{"wrong credentials", good, "wrong-" + b.SecretKey, "the credentials were not accepted"},
		{"no bucket", noBucket, b.SecretKey, "the bucket does not exist"},
	} {
		t.Setenv("AWS_SECRET_ACCESS_KEY", c.secret)
		bad, err := cairn.Open(ctx, c.url)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := bad.Session("s")
		_, err = s.Commit(ctx, cairn.JSON([]byte(`{"n":2}`)), cairn.CommitOptions{})
		check(c.label+": commit", err, c.url, c.want)
		if err != nil && !strings.HasSuffix(err.Error(), "; the step was not written") {
			t.Errorf("%s: commit: %q does not say the step was not written", c.label, err)
		}
		_, err = s.Head(ctx)
		check(c.label+": head", err, c.url, c.want+" (")
		_, err = bad.ReadStep(ctx, "s", 1)
		check(c.label+": read step", err, c.url, c.want)
		_, err = bad.SessionNames(ctx)
		check(c.label+": sessions", err, c.url, "could not list the sessions")
		bad.Close()
	}
	t.Setenv("AWS_SECRET_ACCESS_KEY", b.SecretKey)

	// Reads allowed, the step's put denied: the step was not written.
	dws, err := cairn.Open(ctx, denied)
	if err != nil {
		t.Fatal(err)
	}
	defer dws.Close()
	ds, _ := dws.Session("s")
	_, err = ds.Commit(ctx, cairn.JSON([]byte(`{"n":2}`)), cairn.CommitOptions{})
	check("denied put: commit", err, denied, "access denied (")
	t.Logf("denied put: %v", err)
	if err != nil && !strings.HasSuffix(err.Error(), ": step s@2 was not written") {
		t.Errorf("denied put: %q does not say step s@2 was not written", err)
	}

	// Nothing was lost: the head is step 1, and the next commit is 2.
	if h, err := s.Head(ctx); err != nil || h.Number != 1 {
		t.Fatalf("head after the refusals: %v, %v; want step 1", h, err)
	}
	if st, err := s.Commit(ctx, cairn.JSON([]byte(`{"n":2}`)), cairn.CommitOptions{}); err != nil || st.Number != 2 {
		t.Fatalf("commit after the refusals: %v, %v; want step 2", st, err)
	}
}
