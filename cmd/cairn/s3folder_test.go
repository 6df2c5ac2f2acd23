package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/cairnlog/cairn"
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
// written". cairn verify names each such folder (it said 0 problems,
// exit 0), du names each damaged session and measures the others, and
// gc refuses the store, deleting nothing (gc ran).
// Removing the folder repairs the store, and nothing is lost. MinIO
// keeps "KEY/" apart from KEY, so there the commits succeed, and then a
// folder beside the object is no damage.
func TestS3FolderAtKeySaidInWords(t *testing.T) {
	for _, srv := range s3test.Servers {
		t.Run(srv.Name, func(t *testing.T) {
			b := srv.Start(t)
			s3Env(t, b, b.SecretKey)
			mc := b.Client(t)
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
	// verify says each folder as a commit meets it, the step or the
	// marker whose place it holds, exit 1, and so does the Go API; du and
	// gc refuse the store in the same words and delete nothing, neither a
	// folder nor garbage (I5). MinIO keeps the objects the commits wrote
	// beside the folders: nothing to say there, and gc deletes no folder.
	// Before, verify said 0 problems (exit 0), and gc ran.
	garbage := "packs/m/00000000000000000001.000009"
	put(garbage)
	exists := func(key string) bool {
		t.Helper()
		_, err := mc.StatObject(ctx, b.Name, prefix+"/"+key, minio.StatObjectOptions{})
		if err != nil && minio.ToErrorResponse(err).Code != "NoSuchKey" {
			t.Fatalf("stat %s: %v", key, err)
		}
		return err == nil
	}
	out, errs, code := cli(t, store, "", "verify")
	if blocks {
		for _, want := range []string{
			"BAD step m@2 is not a file (the store holds a directory where it belongs): cairn reads nothing through it and never deletes it; remove it to repair",
			"BAD step n@2 is not a file (the store holds a directory where it belongs)",
			"BAD the marker of session o is not a file (the store holds a directory where it belongs)",
		} {
			if code != 1 || !strings.Contains(out, want) {
				t.Errorf("verify: exit %d, %q %q; want exit 1 and %q", code, out, errs, want)
			}
		}
		if !strings.HasSuffix(out, ": 3 problems\n") {
			t.Errorf("verify: %q; want 3 problems", out)
		}
		ws, err := cairn.Open(ctx, store)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := ws.Verify(ctx)
		ws.Close()
		var at []string
		for _, p := range rep.Problems {
			at = append(at, p.Session+" "+p.Step)
		}
		if err != nil || strings.Join(at, ",") != "m m@2,n n@2,o " {
			t.Errorf("Workspace.Verify: %v, problems at %q; want m@2, n@2 and session o", err, at)
		}
		// du names each session a folder damages, as verify does, and
		// measures the others (TestDuFolderAtStepKeyPerSession).
		want := "cairn du: 2 sessions could not be read: the store " + store + " holds a directory where step m@2 belongs: remove it to repair; " +
			"the store " + store + " holds a directory where step n@2 belongs: remove it to repair\n"
		if out, errs, code := cli(t, store, "", "du"); code != 1 || errs != want {
			t.Errorf("du: exit %d, %q %q; want exit 1, %q", code, out, errs, want)
		}
		for range 2 {
			want := "cairn gc: the store " + store + " holds a directory where step m@2 belongs: remove it to repair\n"
			if out, errs, code := cli(t, store, "", "gc", "--grace", "0s"); code != 1 || errs != want {
				t.Errorf("gc: exit %d, %q %q; want exit 1, %q", code, out, errs, want)
			}
		}
	} else {
		if code != 0 || !strings.HasSuffix(out, ": 0 problems\n") {
			t.Errorf("verify: exit %d, %q %q; want 0 problems", code, out, errs)
		}
		for range 2 {
			if out, errs, code := cli(t, store, "", "gc", "--grace", "0s"); code != 0 {
				t.Errorf("gc: exit %d, %q %q", code, out, errs)
			}
		}
	}
	for _, key := range []string{"steps/m/00000000000000000002/", "steps/n/00000000000000000002/x", "sessions/o/"} {
		if !exists(key) {
			t.Errorf("%s was deleted", key)
		}
	}
	if !blocks {
		return
	}
	if !exists(garbage) {
		t.Errorf("gc deleted garbage on a store it refused")
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
	if out, errs, code := cli(t, store, "", "verify"); code != 0 || !strings.HasSuffix(out, ": 0 problems\n") {
		t.Errorf("verify after the repair: exit %d, %q %q; want 0 problems", code, out, errs)
	}
	if out, errs, code := cli(t, store, "", "gc", "--grace", "0s"); code != 0 {
		t.Errorf("gc after the repair: exit %d, %q %q", code, out, errs)
	}
}
