package s3compat_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/retry"
	"github.com/cairnlog/cairn/cas/s3compat"
	"github.com/cairnlog/cairn/cas/timeout"
)

func TestMapError(t *testing.T) {
	boom := errors.New("boom")
	for _, c := range []struct {
		r         s3compat.Reply
		err       error
		notFound  bool
		transient bool
	}{
		{s3compat.Reply{Code: "NoSuchKey", Status: 404}, boom, true, false},
		{s3compat.Reply{Status: 404}, boom, true, false}, // a HEAD has no body
		{s3compat.Reply{Code: "NoSuchBucket", Status: 404}, boom, false, false},
		{s3compat.Reply{Code: "SlowDown", Status: 503}, boom, false, true},
		{s3compat.Reply{Code: "XMinioServerNotInitialized"}, boom, false, true},
		{s3compat.Reply{Status: 500}, boom, false, true},
		{s3compat.Reply{Status: 429}, boom, false, true},
		{s3compat.Reply{Code: "NotImplemented", Status: 501}, boom, false, false},
		{s3compat.Reply{Code: "AccessDenied", Status: 403}, boom, false, false},
		{s3compat.Reply{Status: 503}, context.Canceled, false, false},
	} {
		err := s3compat.MapError("get", "k", c.err, c.r)
		if got := errors.Is(err, cas.ErrNotFound); got != c.notFound {
			t.Errorf("%+v: not found = %v, want %v", c.r, got, c.notFound)
		}
		if got := cas.IsTransient(err); got != c.transient {
			t.Errorf("%+v: transient = %v, want %v", c.r, got, c.transient)
		}
	}
	for _, r := range []s3compat.Reply{{Code: "PreconditionFailed"}, {Status: 412}, {Code: "ConditionalRequestConflict", Status: 409}} {
		if !r.Exists() {
			t.Errorf("%+v: not read as a lost conditional create", r)
		}
	}
}

func TestCleanPrefix(t *testing.T) {
	for in, want := range map[string]string{"": "", "/": "", "a": "a/", "/a/b/": "a/b/"} {
		if got, err := s3compat.CleanPrefix(in); err != nil || got != want {
			t.Errorf("CleanPrefix(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := s3compat.CleanPrefix("a/../b"); err == nil {
		t.Error("CleanPrefix accepted a dot-dot segment")
	}
}

func TestShowURL(t *testing.T) {
	for in, want := range map[string]string{
		"s3://":                 "s3://",
		"s3:///ws":              "s3:///ws",
		"minio://":              "minio://",
		"s3://b/ws?region=r":    "s3://b/ws?region=r",
		"minio://k:secret@h/b":  "minio://k:xxxxx@h/b",
		"minio://127.0.0.1:1/b": "minio://127.0.0.1:1/b",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := s3compat.ShowURL(u); got != want {
			t.Errorf("ShowURL(%s) = %q, want %q", in, got, want)
		}
	}
}

// TestPutRefusedNotStored: a put the server refused outright stored
// nothing (cas.NotStored); one worth retrying, a lost conditional create,
// another verb, or a reply with no status is not so marked.
func TestPutRefusedNotStored(t *testing.T) {
	boom := errors.New("boom")
	for _, c := range []struct {
		verb string
		r    s3compat.Reply
		want bool
	}{
		{"put", s3compat.Reply{Code: "AccessDenied", Status: 403}, true},
		{"put", s3compat.Reply{Code: "NoSuchBucket", Status: 404}, true},
		{"put", s3compat.Reply{Code: "EntityTooLarge", Status: 400}, true},
		{"put", s3compat.Reply{Code: "SlowDown", Status: 503}, false},
		{"put", s3compat.Reply{Status: 429}, false},
		{"put", s3compat.Reply{Status: 408}, false},
		{"put", s3compat.Reply{Code: "PreconditionFailed", Status: 412}, false},
		{"put", s3compat.Reply{Code: "OperationAborted", Status: 409}, false},
		{"put", s3compat.Reply{Code: "AccessDenied"}, false},
		{"get", s3compat.Reply{Code: "AccessDenied", Status: 403}, false},
	} {
		if got := cas.IsNotStored(s3compat.MapError(c.verb, "k", boom, c.r)); got != c.want {
			t.Errorf("%s %+v: NotStored = %v, want %v", c.verb, c.r, got, c.want)
		}
	}
}

// TestRefusedSaidInWords: a request the server refused outright is a
// cas.RefusedError naming the request and why in words, without the
// server's reply; a missing object, a retryable reply and a lost
// conditional create are not.
func TestRefusedSaidInWords(t *testing.T) {
	boom := errors.New("boom")
	for _, c := range []struct {
		r   s3compat.Reply
		why string // "": not a refusal
	}{
		{s3compat.Reply{Code: "SignatureDoesNotMatch", Status: 403}, "the credentials were not accepted (check AWS_ACCESS_KEY_ID"},
		{s3compat.Reply{Code: "InvalidAccessKeyId", Status: 403}, "the credentials were not accepted (check AWS_ACCESS_KEY_ID"},
		{s3compat.Reply{Code: "ExpiredToken", Status: 400}, "the credentials have expired"},
		{s3compat.Reply{Code: "AccessDenied", Status: 403}, "access denied ("},
		{s3compat.Reply{Status: 403}, "access denied ("}, // a HEAD has no body
		{s3compat.Reply{Code: "NoSuchBucket", Status: 404}, "the bucket does not exist ("},
		{s3compat.Reply{Code: "InvalidBucketName", Status: 400}, "the bucket's name is not valid"},
		{s3compat.Reply{Code: "PermanentRedirect", Status: 301}, "another region"},
		{s3compat.Reply{Status: 301}, "another region"},
		{s3compat.Reply{Code: "AuthorizationHeaderMalformed", Status: 400}, "another region"},
		{s3compat.Reply{Code: "EntityTooLarge", Status: 400}, "larger than the server accepts"},
		{s3compat.Reply{Code: "InvalidArgument", Status: 400}, "the server answered HTTP 400 InvalidArgument"},
		{s3compat.Reply{Status: 405}, "the server answered HTTP 405"},
		{s3compat.Reply{Code: "NoSuchKey", Status: 404}, ""},
		{s3compat.Reply{Code: "SlowDown", Status: 503}, ""},
		{s3compat.Reply{Status: 429}, ""},
		{s3compat.Reply{Code: "PreconditionFailed", Status: 412}, ""},
		{s3compat.Reply{Code: "NotImplemented", Status: 501}, "the server does not implement the request (HTTP 501 NotImplemented): cairn needs"},
		{s3compat.Reply{Status: 501}, "the server does not implement the request (HTTP 501)"},
	} {
		for _, verb := range []string{"get", "put", "list"} {
			err := s3compat.MapError(verb, "steps/s/head", boom, c.r)
			var re *cas.RefusedError
			switch {
			case c.why == "" && errors.As(err, &re):
				t.Errorf("%s %+v: a refusal: %+v", verb, c.r, re)
			case c.why == "":
			case !errors.As(err, &re):
				t.Errorf("%s %+v: no refusal in %v", verb, c.r, err)
			case re.Op != verb || re.Key != "steps/s/head" || !strings.Contains(re.Why, c.why) || !errors.Is(err, boom):
				t.Errorf("%s %+v: %+v; want op %s, why with %q, the cause kept", verb, c.r, re, verb, c.why)
			case strings.Contains(re.Why, "steps/") || strings.Contains(re.Why, "boom"):
				t.Errorf("%s %+v: why %q names the key or the reply", verb, c.r, re.Why)
			}
		}
	}
}

// TestUnavailableStaysRetried: a transport failure MapError says in
// words (cas.UnavailableError) is retried exactly as before: the retry
// wrapper reads the same cause through the words.
func TestUnavailableStaysRetried(t *testing.T) {
	dial := func(err error) error {
		return &url.Error{Op: "Get", URL: "http://h/b/k", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}}
	}
	for _, c := range []struct {
		err   error
		why   string
		retry bool
	}{
		{dial(syscall.ECONNREFUSED), "could not be reached (connection refused", true},
		{&url.Error{Op: "Get", URL: "http://h/b/k", Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Name: "h", Err: "no such host", IsNotFound: true}}}, `could not be reached (no such host "h"`, false},
		{&url.Error{Op: "Get", URL: "http://h/b/k", Err: &timeout.Error{Idle: time.Second}}, "did not answer within 1s", true},
		{&url.Error{Op: "Get", URL: "http://h/b/k", Err: &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}}, "did not answer (the connection was reset)", true},
	} {
		got := s3compat.MapError("get", "steps/s/head", c.err, s3compat.Reply{})
		var un *cas.UnavailableError
		if !errors.As(got, &un) || !strings.HasPrefix(un.Why, c.why) || un.Op != "get" || un.Key != "steps/s/head" {
			t.Errorf("%v: %#v; want an UnavailableError %q…", c.err, un, c.why)
		}
		if retry.IsTransient(got) != c.retry || retry.IsTransient(c.err) != c.retry {
			t.Errorf("%v: retried %v (before the words: %v), want %v", c.err, retry.IsTransient(got), retry.IsTransient(c.err), c.retry)
		}
	}
	if _, ok := s3compat.Unavailable(errors.New("api error AccessDenied")); ok {
		t.Error("a server's reply read as no answer")
	}
}

// TestServerErrorReplySaidInWords: a reply worth retrying (a server
// error, throttling) is a transient cas.UnavailableError that says which
// reply it was, and that the server did answer (a put so answered may
// have been stored). A code that only repeats the status, as minio-go
// makes one from a reply without an S3 error body, is not said twice.
func TestServerErrorReplySaidInWords(t *testing.T) {
	boom := errors.New("boom")
	for _, c := range []struct {
		r   s3compat.Reply
		why string
	}{
		{s3compat.Reply{Code: "InternalError", Status: 500}, "answered with a server error (HTTP 500 InternalError)"},
		{s3compat.Reply{Code: "SlowDown", Status: 503}, "answered with a server error (HTTP 503 SlowDown)"},
		{s3compat.Reply{Code: "502 Bad Gateway", Status: 502}, "answered with a server error (HTTP 502)"},
		{s3compat.Reply{Status: 429}, "answered that it is busy (HTTP 429)"},
		{s3compat.Reply{Code: "SlowDown"}, "answered with a server error (SlowDown)"},
	} {
		err := s3compat.MapError("put", "steps/s/head", boom, c.r)
		var un *cas.UnavailableError
		switch {
		case !errors.As(err, &un):
			t.Errorf("%+v: no cas.UnavailableError in %v", c.r, err)
		case un.Op != "put" || un.Key != "steps/s/head" || un.Why != c.why || !un.ServerError || !errors.Is(err, boom):
			t.Errorf("%+v: %+v; want put, why %q, ServerError, the cause kept", c.r, un, c.why)
		case !cas.IsTransient(err):
			t.Errorf("%+v: not transient", c.r)
		}
	}
	var re *cas.RefusedError
	if err := s3compat.MapError("get", "k", boom, s3compat.Reply{Code: "400 Bad Request", Status: 400}); !errors.As(err, &re) || re.Why != "the server answered HTTP 400" {
		t.Errorf("a 400 without an S3 error body: %v; want a refusal, \"the server answered HTTP 400\"", err)
	}
}

// TestListedFolders: a listing hands a folder marker "K/" over as K, not
// an object (Info.NotObject, Info.Apart), in key order; not where the
// object K was listed (MinIO keeps both), nor after a key that sorts
// between K and "K/", and skips other names that are no keys.
func TestListedFolders(t *testing.T) {
	names := []string{
		"a/1", "a/2/", // a folder at a/2
		"b/1", "b/1/", // the object b/1 and a folder beside it
		"c/1-x", "c/1/", // a key between c/1 and c/1/, and no c/1
		"d//e", "d/.x", "d/x/",
		"e/1/", "e/1/x", // a folder marker and an object under it
	}
	l := s3compat.Lister{Prefix: "", StartAfter: "a/1"}
	var got []string
	for _, n := range names {
		i, ok := s3compat.Listed(n, 1, time.Time{})
		if !ok || !l.Want(i) {
			continue
		}
		s := i.Key
		if i.NotObject != "" {
			if !i.Apart || i.NotObject != s3compat.Folder || i.Size != 0 {
				t.Errorf("%s: %+v", n, i)
			}
			s += " (folder)"
		}
		got = append(got, s)
	}
	want := "a/2 (folder),b/1,c/1-x,d/x (folder),e/1 (folder),e/1/x"
	if strings.Join(got, ",") != want {
		t.Errorf("listed %q; want %q", strings.Join(got, ","), want)
	}
}
