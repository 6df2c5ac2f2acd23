package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/internal/s3test"
)

// sdkWords matches what an S3 refusal must not show the user besides a
// store key: the SDK's and the server's own text.
var sdkWords = regexp.MustCompile(`operation error|api error|StatusCode|RequestID|HostID|SignatureDoesNotMatch|InvalidAccessKeyId|NoSuchBucket|AccessDenied|\*[a-z]+\.[A-Z]`)

// s3Env points the AWS variables at b's server with the given secret,
// and away from this machine's AWS configuration.
func s3Env(t *testing.T, b *s3test.Bucket, secret string) {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", b.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	t.Setenv("AWS_REGION", b.Region)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("CAIRN_S3_ATTEMPTS", "1")
}

// s3URLs are the two store URLs of one prefix of a bucket on server b.
func s3URLs(b *s3test.Bucket, bucket, prefix string) map[string]string {
	return map[string]string{
		"s3":    fmt.Sprintf("s3://%s/%s?endpoint=%s", bucket, prefix, b.Endpoint),
		"minio": fmt.Sprintf("minio://%s/%s/%s?secure=false", b.Host, bucket, prefix),
	}
}

// TestS3RefusalSaidInWords: an S3 server that refuses cairn's requests
// (wrong credentials, a bucket that does not exist) is said so in words,
// naming the store as given and what went undone, exit 1, and the store
// loses nothing. It was the SDK's text around a store key: "commit s:
// find head of s: get steps/s/head: operation error S3: GetObject, https
// response error StatusCode: 403, …, api error SignatureDoesNotMatch: …".
func TestS3RefusalSaidInWords(t *testing.T) {
	for _, srv := range s3test.Servers {
		t.Run(srv.Name, func(t *testing.T) {
			b := srv.Start(t)
			for _, scheme := range []string{"s3", "minio"} {
				store := s3URLs(b, b.Name, "words-"+scheme)[scheme]
				missing := s3URLs(b, "no-such-bucket-"+srv.Name, "words")[scheme]
				t.Run(scheme, func(t *testing.T) { testS3Refusal(t, b, store, missing) })
			}
		})
	}
}

func testS3Refusal(t *testing.T, b *s3test.Bucket, store, missing string) {
	s3Env(t, b, b.SecretKey)
	if _, errs, code := cli(t, store, `{"n":1}`, "commit", "s", "-"); code != 0 {
		t.Fatalf("commit with the right credentials: exit %d, %s", code, errs)
	}
	commands := [][]string{
		{"commit", "s", "-"},
		{"log", "s"},
		{"show", "s"},
		{"show", "s@1"},
		{"checkout", "s", "--dir", filepath.Join(t.TempDir(), "out")},
		{"sessions"},
	}
	check := func(label, url, want string) {
		t.Helper()
		for _, args := range commands {
			_, errs, code := cli(t, url, `{"n":2}`, args...)
			prefix := "cairn " + args[0] + ": the store " + url + " refused the request: "
			if args[0] == "commit" && !strings.HasSuffix(errs, "; the step was not written\n") {
				t.Errorf("%s: cairn commit: %q does not say the step was not written", label, errs)
			}
			if code != 1 || !strings.HasPrefix(errs, prefix) || !strings.Contains(errs, want) ||
				storeWords.MatchString(errs) || sdkWords.MatchString(errs) || strings.Count(errs, "\n") != 1 {
				t.Errorf("%s: cairn %s: exit %d, %q; want exit 1, %q…%q, and no store key or SDK text",
					label, strings.Join(args, " "), code, errs, prefix, want)
			}
		}
	}
	s3Env(t, b, "wrong-"+b.SecretKey)
	check("wrong credentials", store, "the credentials were not accepted (check AWS_ACCESS_KEY_ID")
	s3Env(t, b, b.SecretKey)
	check("no bucket", missing, "the bucket does not exist")

	// Nothing was lost, and no refused commit landed.
	out, errs, code := cli(t, store, "", "log", "s")
	if code != 0 || strings.Count(out, "\n") != 1 {
		t.Errorf("log after the refusals: exit %d, %q, %s; want the one step", code, out, errs)
	}
	if out, errs, code := cli(t, store, `{"n":3}`, "commit", "s", "-"); code != 0 || !strings.HasPrefix(out, "s@2 ") {
		t.Errorf("commit after the refusals: exit %d, %q, %s; want s@2", code, out, errs)
	}
}

// TestMinIORootCredentialsRefusedSaidInWords: a minio:// store whose
// credentials come from MINIO_ROOT_USER and MINIO_ROOT_PASSWORD (no AWS
// variable set) and are not accepted, by MinIO or versitygw, says so
// naming those variables, exit 1. It named only AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY and "the profile that supplies them", none of
// which a minio:// store with root credentials uses.
func TestMinIORootCredentialsRefusedSaidInWords(t *testing.T) {
	for _, srv := range s3test.Servers {
		t.Run(srv.Name, func(t *testing.T) {
			b := srv.Start(t)
			noAWS(t)
			t.Setenv("MINIO_ROOT_USER", b.AccessKey)
			t.Setenv("MINIO_ROOT_PASSWORD", "wrong-"+b.SecretKey)
			store := s3URLs(b, b.Name, "root")["minio"] + "&attempts=1"
			for _, args := range [][]string{{"commit", "s", "-"}, {"log", "s"}, {"sessions"}} {
				_, errs, code := cli(t, store, `{"n":1}`, args...)
				want := "cairn " + args[0] + ": the store " + store + " refused the request: the credentials were not accepted (check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or what supplies them: the AWS profile on s3://, MINIO_ROOT_USER and MINIO_ROOT_PASSWORD on minio://): "
				if code != 1 || !strings.HasPrefix(errs, want) || sdkWords.MatchString(errs) {
					t.Errorf("cairn %s: exit %d, %q; want exit 1, %q…", args[0], code, errs, want)
				}
			}
		})
	}
}
