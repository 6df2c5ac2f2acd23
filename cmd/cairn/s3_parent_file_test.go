package main

import (
	"strings"
	"testing"

	"github.com/cairnlog/cairn/internal/s3test"
)

// TestS3ParentIsFileSaidInWords: versitygw keeps objects as files, so a
// workspace whose prefix lies beneath an object of another (its prefix
// the other's session marker, sessions/x) cannot be written: the server
// refuses every put with ObjectParentIsFile (409). cairn passed the
// refusal on as it came: on s3:// the SDK's text ("operation error S3:
// PutObject, https response error StatusCode: 409, RequestID: …, api
// error ObjectParentIsFile: …") around a store key, on minio:// the
// server's sentence after one. It is now said in words, exit 1, saying
// the step was not written and not to remove what stands there (another
// workspace's object); the other workspace is untouched.
func TestS3ParentIsFileSaidInWords(t *testing.T) {
	b := s3test.StartVersityGW(t)
	s3Env(t, b, b.SecretKey)
	for _, scheme := range []string{"s3", "minio"} {
		t.Run(scheme, func(t *testing.T) {
			outer := s3URLs(b, b.Name, "parent-"+scheme)[scheme]
			inner := s3URLs(b, b.Name, "parent-"+scheme+"/sessions/x")[scheme]
			if _, errs, code := cli(t, outer, `{"n":1}`, "commit", "x", "-"); code != 0 {
				t.Fatalf("commit x: exit %d, %s", code, errs)
			}
			_, errs, code := cli(t, inner, `{"n":1}`, "commit", "y", "-")
			prefix := "cairn commit: the store " + inner + " refused the request: "
			want := "an object stands where a folder above this key belongs"
			// The store URL itself holds sessions/: the words after it
			// must name no store key.
			if code != 1 || !strings.HasPrefix(errs, prefix) || !strings.Contains(errs, want) ||
				!strings.HasSuffix(errs, "; the step was not written\n") || strings.Contains(errs, "remove it") ||
				storeWords.MatchString(strings.TrimPrefix(errs, prefix)) || sdkWords.MatchString(errs) || strings.Count(errs, "\n") != 1 {
				t.Errorf("commit beneath another workspace's object: exit %d, %q; want exit 1, %q…%q, the step not written, no store key or SDK text",
					code, errs, prefix, want)
			}
			if out, errs, code := cli(t, outer, `{"n":2}`, "commit", "x", "-"); code != 0 || !strings.HasPrefix(out, "x@2 ") {
				t.Errorf("commit x after: exit %d, %q, %s; want x@2", code, out, errs)
			}
		})
	}
}
