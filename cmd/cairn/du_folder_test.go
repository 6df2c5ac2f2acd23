package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/cairnlog/cairn/internal/s3test"
)

// TestDuFolderAtStepKeyPerSession: an S3 folder marker (an empty object
// "KEY/", as a console makes) at a step's key is one session's damage:
// cairn du measures the other sessions and names the damaged one, in
// words, exit 1, as cairn verify does; du --json lists it under
// "unreadable". du refused the whole store for it, printing nothing
// ("the store … holds a directory where step m@2 belongs"). gc still
// refuses the store and deletes nothing while the folder stands (I5).
func TestDuFolderAtStepKeyPerSession(t *testing.T) {
	b := s3test.StartMinIO(t)
	s3Env(t, b, b.SecretKey)
	mc := b.Client(t)
	for _, scheme := range []string{"s3", "minio"} {
		t.Run(scheme, func(t *testing.T) {
			prefix := "du-folder-" + scheme
			store := s3URLs(b, b.Name, prefix)[scheme]
			for _, s := range []string{"m", "n"} {
				if _, errs, code := cli(t, store, `{"n":1}`, "commit", s, "-"); code != 0 {
					t.Fatalf("commit %s: exit %d, %s", s, code, errs)
				}
			}
			if _, err := mc.PutObject(context.Background(), b.Name, prefix+"/steps/m/00000000000000000002/", bytes.NewReader(nil), 0, minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
			says := "holds a directory where step m@2 belongs: remove it to repair"
			out, errs, code := cli(t, store, "", "du")
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if code != 1 || len(lines) != 3 || !strings.HasPrefix(lines[1], "n ") || !strings.HasPrefix(lines[2], "total: ") ||
				errs != "cairn du: 1 session could not be read: the store "+store+" "+says+"\n" ||
				strings.Count(errs, "\n") != 1 || storeWords.MatchString(errs) {
				t.Errorf("du: exit %d, stdout %q, stderr %q; want exit 1, session n measured, m named: %q", code, out, errs, says)
			}
			out, errs, code = cli(t, store, "", "du", "--json")
			var got struct {
				Sessions   []struct{ Session string }
				Unreadable []struct{ Session, Error string }
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil || code != 1 || len(got.Sessions) != 1 || got.Sessions[0].Session != "n" ||
				len(got.Unreadable) != 1 || got.Unreadable[0].Session != "m" || !strings.Contains(got.Unreadable[0].Error, says) || strings.Contains(got.Unreadable[0].Error, "steps/") {
				t.Errorf("du --json: exit %d, %q (%v), stderr %q; want n measured, m unreadable: %q", code, out, err, errs, says)
			}
			out, errs, code = cli(t, store, "", "verify")
			if code != 1 || !strings.Contains(out, "BAD step m@2 is not a file (the store holds a directory where it belongs)") {
				t.Errorf("verify: exit %d, %q %q", code, out, errs)
			}
			want := "cairn gc: the store " + store + " " + says + "\n"
			if out, errs, code := cli(t, store, "", "gc", "--grace", "0s"); code != 1 || errs != want {
				t.Errorf("gc: exit %d, %q %q; want exit 1, %q", code, out, errs, want)
			}
		})
	}
}
