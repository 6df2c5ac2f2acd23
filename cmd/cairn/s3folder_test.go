package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/cairnlog/cairn/internal/s3test"
)

// TestS3FolderAtKeySaidInWords: an S3 "folder" standing where one of
// cairn's objects belongs — a marker object "KEY/" such as a console
// makes, or objects named "KEY/…" — is said as the store's damage, in
// words, exit 1, on both URL schemes: "the store … holds a directory
// where step d@2 belongs: remove it to repair; step d@2 was not
// written". versitygw keeps an object as a file, so such a folder is a
// directory there and blocks the key. Before, a marker made every
// commit of the session a conflict with "another writer" (exit 3, for
// ever: a fleet retries such a commit), and objects under the key made
// the SDK's text around a store key, saying the step "may have been
// written". Removing the folder repairs the store, and nothing is lost.
// MinIO keeps "KEY/" apart from KEY, so there the commits succeed.
func TestS3FolderAtKeySaidInWords(t *testing.T) {
	for _, srv := range s3test.Servers {
		t.Run(srv.Name, func(t *testing.T) {
			b := srv.Start(t)
			s3Env(t, b, b.SecretKey)
			mc, err := minio.New(b.Host, &minio.Options{
				Creds: credentials.NewStaticV4(b.AccessKey, b.SecretKey, ""), Region: b.Region,
				BucketLookup: minio.BucketLookupPath,
			})
			if err != nil {
				t.Fatal(err)
			}
			for _, scheme := range []string{"s3", "minio"} {
				t.Run(scheme, func(t *testing.T) {
					prefix := "folder-" + scheme
					testS3FolderAtKey(t, mc, b, prefix, s3URLs(b, b.Name, prefix)[scheme], srv.Name == "versitygw")
				})
			}
		})
	}
}

func testS3FolderAtKey(t *testing.T, mc *minio.Client, b *s3test.Bucket, prefix, store string, blocks bool) {
	ctx := context.Background()
	put := func(key string) {
		t.Helper()
		if _, err := mc.PutObject(ctx, b.Name, prefix+"/"+key, bytes.NewReader(nil), 0, minio.PutObjectOptions{}); err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
	}
	del := func(key string) {
		t.Helper()
		if err := mc.RemoveObject(ctx, b.Name, prefix+"/"+key, minio.RemoveObjectOptions{}); err != nil {
			t.Fatalf("remove %s: %v", key, err)
		}
	}
	for _, s := range []string{"m", "n"} {
		if _, errs, code := cli(t, store, `{"n":1}`, "commit", s, "-"); code != 0 {
			t.Fatalf("commit %s@1: exit %d, %s", s, code, errs)
		}
	}
	// m@2's key is a folder marker; n@2's holds an object below it; the
	// marker of session o (its first step writes it) is a folder marker.
	put("steps/m/00000000000000000002/")
	put("steps/n/00000000000000000002/x")
	put("sessions/o/")
	for _, c := range []struct{ session, want string }{
		{"m", "holds a directory where step m@2 belongs: remove it to repair; step m@2 was not written\n"},
		{"n", "holds a directory where step n@2 belongs: remove it to repair; step n@2 was not written\n"},
		{"o", "holds a directory where the marker of session o belongs: remove it to repair; the marker of session o was not written; the step was not written\n"},
	} {
		out, errs, code := cli(t, store, `{"n":2}`, "commit", c.session, "-")
		if !blocks {
			if code != 0 {
				t.Errorf("commit %s: exit %d, %s; want it written beside the folder", c.session, code, errs)
			}
			continue
		}
		prefix := "cairn commit: the store " + store + " "
		if code != 1 || !strings.HasPrefix(errs, prefix) || !strings.HasSuffix(errs, c.want) ||
			storeWords.MatchString(errs) || sdkWords.MatchString(errs) || strings.Count(errs, "\n") != 1 {
			t.Errorf("commit %s: exit %d, %q %q; want exit 1, %q…%q, and no store key or SDK text",
				c.session, code, out, errs, prefix, c.want)
		}
	}
	if !blocks {
		return
	}
	// Removing the folders repairs the store; nothing was lost.
	del("steps/m/00000000000000000002/")
	del("steps/n/00000000000000000002/x")
	del("sessions/o/")
	for _, s := range []string{"m", "n"} {
		if out, errs, code := cli(t, store, `{"n":2}`, "commit", s, "-"); code != 0 || !strings.HasPrefix(out, s+"@2 ") {
			t.Errorf("commit %s after the repair: exit %d, %q, %s; want %s@2", s, code, out, errs, s)
		}
		if out, errs, code := cli(t, store, "", "log", s); code != 0 || strings.Count(out, "\n") != 2 {
			t.Errorf("log %s after the repair: exit %d, %q, %s; want two steps", s, code, out, errs)
		}
	}
	if out, errs, code := cli(t, store, `{"n":1}`, "commit", "o", "-"); code != 0 || !strings.HasPrefix(out, "o@1 ") {
		t.Errorf("commit o after the repair: exit %d, %q, %s; want o@1", code, out, errs)
	}
}
