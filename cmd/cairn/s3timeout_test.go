package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn/internal/s3test"
)

// TestHungServerGivesUp is issue 13 item 12: against a MinIO that stops
// answering (SIGSTOP), show and gc give up after the attempts and the
// idle timeout the store URL (?timeout=&attempts=) or the environment
// ($CAIRN_S3_TIMEOUT, $CAIRN_S3_ATTEMPTS) set, with an error naming the
// timeout, instead of the old six attempts of a 60 s header timeout.
// The watchdog below only catches a command that does not give up on
// its own at all; it measures nothing.
func TestHungServerGivesUp(t *testing.T) {
	b := s3test.StartOwnMinIO(t)
	srv, bucket := b.Server, b.Name
	bin := cairnBinary(t)
	base := fmt.Sprintf("minio://%s/%s/hung?secure=false", srv.Host, bucket)
	env := append(os.Environ(), "AWS_ACCESS_KEY_ID="+srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+srv.SecretKey)
	cairn := func(env []string, store string, args ...string) (string, int) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"--store", store}, args...)...)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(`{"a":1}`)
		out, _ := cmd.CombinedOutput()
		if ctx.Err() != nil {
			t.Fatalf("cairn %s against a hung server did not give up on its own", strings.Join(args, " "))
		}
		return string(out), cmd.ProcessState.ExitCode()
	}
	if out, code := cairn(env, base, "commit", "s", "-"); code != 0 {
		t.Fatalf("commit: %d %s", code, out)
	}
	if err := srv.Pause(); err != nil {
		if errors.Is(err, errors.ErrUnsupported) && !s3test.Required() {
			t.Skip(err) // Windows
		}
		t.Fatal(err)
	}
	defer srv.Resume()
	for _, c := range []struct {
		name, store string
		env         []string
		args        []string
	}{
		{"url", base + "&timeout=1s&attempts=2", env, []string{"show", "s"}},
		{"environment", base, append(env, "CAIRN_S3_TIMEOUT=1s", "CAIRN_S3_ATTEMPTS=2"), []string{"gc", "--grace", "0s"}},
	} {
		out, code := cairn(c.env, c.store, c.args...)
		if code != 1 || !strings.Contains(out, "after 2 attempts") || !strings.Contains(out, "did not answer within 1s") {
			t.Errorf("%s: cairn %s against a hung server: exit %d, %q; want exit 1 after 2 attempts of 1s", c.name, strings.Join(c.args, " "), code, out)
		}
	}
	if out, code := cairn(env, base+"&timeout=soon", "show", "s"); code != 2 || !strings.Contains(out, "timeout") {
		t.Errorf("a bad timeout: exit %d, %q; want a usage error naming it", code, out)
	}
}

// TestS3SettingFromEnvironmentSaidAsIts: a $CAIRN_S3_TIMEOUT or
// $CAIRN_S3_ATTEMPTS cairn cannot use is said as the variable's, exit 2,
// as a bad $CAIRN_MAX_* is. It was said as the store URL's fault
// ("invalid store url: parse minio url …: $CAIRN_S3_TIMEOUT: …"), a URL
// that was fine. A bad ?timeout= in the URL is still the URL's.
func TestS3SettingFromEnvironmentSaidAsIts(t *testing.T) {
	for _, c := range []struct{ env, value, store, want string }{
		{"CAIRN_S3_TIMEOUT", "abc", "minio://127.0.0.1:9/bkt/p?secure=false", `cairn log: invalid setting: $CAIRN_S3_TIMEOUT="abc": want a positive duration such as 10s` + "\n"},
		{"CAIRN_S3_ATTEMPTS", "0", "s3://bkt/p?region=us-east-1", `cairn log: invalid setting: $CAIRN_S3_ATTEMPTS="0": want a whole number from 1 to 100` + "\n"},
	} {
		t.Run(c.env, func(t *testing.T) {
			t.Setenv(c.env, c.value)
			if out, errs, code := cli(t, c.store, "", "log", "s"); code != 2 || errs != c.want {
				t.Errorf("exit %d, %q %q; want exit 2, %q", code, out, errs, c.want)
			}
		})
	}
	_, errs, code := cli(t, "s3://bkt/p?attempts=0", "", "log", "s")
	if want := `parse s3 url "s3://bkt/p?attempts=0": attempts "0": want a whole number from 1 to 100`; code != 2 || !strings.Contains(errs, want) {
		t.Errorf("?attempts=0: exit %d, %q; want exit 2 and %q", code, errs, want)
	}
}
