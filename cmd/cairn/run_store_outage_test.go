package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn/internal/s3test"
)

// TestRunRidesOutStoreOutage: the store goes out of reach (a MinIO
// restarted or failing over; here stopped with SIGSTOP) while the command
// under `cairn run --restart 5` runs, and the command fails for it. cairn
// run then could not read the session's head and ended at once (exit 1),
// whatever --restart said: the worker stopped supervising its loop at the
// first outage. A head it cannot read now counts as a failed start: the
// run waits and tries again, and goes on once the store answers.
func TestRunRidesOutStoreOutage(t *testing.T) {
	b := s3test.StartOwnMinIO(t)
	srv, bucket := b.Server, b.Name
	bin := cairnBinary(t)
	dir := t.TempDir()
	store := fmt.Sprintf("minio://%s/%s/outage?secure=false&timeout=1s&attempts=2", srv.Host, bucket)
	env := append(os.Environ(), "AWS_ACCESS_KEY_ID="+srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+srv.SecretKey,
		"HOME="+dir, "XDG_CACHE_HOME="+dir+"/cache", "OUTAGE_DIR="+dir, "CAIRN_BIN="+bin)
	// The loop: the first start waits for the outage and fails; a later
	// one commits a step and ends.
	loop := `if [ "$CAIRN_ATTEMPT" = 0 ]; then
	touch "$OUTAGE_DIR/started"
	while [ ! -e "$OUTAGE_DIR/fail" ]; do sleep 0.05; done
	exit 1
fi
echo '{"done":true}' | "$CAIRN_BIN" commit "$CAIRN_SESSION" - --expect "$CAIRN_STEP" --status done`
	// Restarts to spare: on a loaded machine a server just resumed may
	// still miss the 1 s timeout a few times before it answers.
	cmd := exec.Command(bin, "--store", store, "run", "--session", "s", "--restart", "9", "--", "sh", "-c", loop)
	cmd.Env = env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the loop never started\n%s", out.String())
		}
	}
	if err := srv.Pause(); err != nil {
		if errors.Is(err, errors.ErrUnsupported) && !s3test.Required() {
			t.Skip(err) // Windows
		}
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			srv.Resume()
		}
	}()
	if err := os.WriteFile(filepath.Join(dir, "fail"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("cairn run ended (%v) while the store was out of reach, with restarts left:\n%s", err, out.String())
	case <-time.After(4 * time.Second):
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	resumed = true
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("cairn run once the store was back: %v\n%s", err, out.String())
		}
	case <-time.After(180 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("cairn run did not finish once the store was back\n%s", out.String())
	}
	log := out.String()
	if !strings.Contains(log, "cairn run: sh exited with status 1; cannot read the head of s: ") || !strings.Contains(log, "; restart 1 in 500ms (1 of 9 without a new step)") {
		t.Errorf("the run's log does not say that it could not read the head, and that it tries again:\n%s", log)
	}
	show := exec.Command(bin, "--store", store, "show", "s")
	show.Env = env
	if b, err := show.Output(); err != nil || strings.TrimSpace(string(b)) != `{"done":true}` {
		t.Fatalf("show s: %q %v", b, err)
	}
}

// TestRunWaitRidesOutStoreOutage: a run waiting for a human's reply
// (cairn run --wait) may wait for hours; the store going out of reach
// meanwhile ended the run (exit 1, "wait for a reply: …"), so the reply,
// when it came, found no one to go on with it. The wait now says so and
// polls on; once the store is back and the reply lands, the command runs.
func TestRunWaitRidesOutStoreOutage(t *testing.T) {
	b := s3test.StartOwnMinIO(t)
	srv, bucket := b.Server, b.Name
	bin := cairnBinary(t)
	dir := t.TempDir()
	store := fmt.Sprintf("minio://%s/%s/wait?secure=false&timeout=1s&attempts=2", srv.Host, bucket)
	env := append(os.Environ(), "AWS_ACCESS_KEY_ID="+srv.AccessKey, "AWS_SECRET_ACCESS_KEY="+srv.SecretKey,
		"HOME="+dir, "XDG_CACHE_HOME="+dir+"/cache", "CAIRN_BIN="+bin)
	cairn := func(stdin string, args ...string) string {
		t.Helper()
		c := exec.Command(bin, append([]string{"--store", store}, args...)...)
		c.Env, c.Stdin = env, strings.NewReader(stdin)
		b, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("cairn %s: %v\n%s", strings.Join(args, " "), err, b)
		}
		return string(b)
	}
	cairn(`{"task":"deploy"}`, "commit", "s", "-", "--status", "awaiting_input", "--record", `{"question":"Deploy?"}`)
	cmd := exec.Command(bin, "--store", store, "run", "--wait", "--session", "s", "--", "sh", "-c",
		`echo '{"deployed":true}' | "$CAIRN_BIN" commit "$CAIRN_SESSION" - --expect "$CAIRN_STEP" --status done`)
	cmd.Env = env
	var out lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(out.String(), "waiting for a reply"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("cairn run --wait never waited:\n%s", out.String())
		}
	}
	if err := srv.Pause(); err != nil {
		if errors.Is(err, errors.ErrUnsupported) && !s3test.Required() {
			t.Skip(err) // Windows
		}
		t.Fatal(err)
	}
	select {
	case err := <-done:
		srv.Resume()
		t.Fatalf("cairn run --wait ended (%v) while the store was out of reach:\n%s", err, out.String())
	case <-time.After(4 * time.Second):
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	cairn("", "reply", "s", "--input", `{"approved":true}`)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("cairn run --wait once the reply came: %v\n%s", err, out.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("cairn run --wait did not go on once the reply came\n%s", out.String())
	}
	if !strings.Contains(out.String(), "cairn run: cannot read the head of s: ") {
		t.Errorf("the wait did not say it could not read the head:\n%s", out.String())
	}
	if got := strings.TrimSpace(cairn("", "show", "s")); got != `{"deployed":true}` {
		t.Fatalf("show s: %s", got)
	}
}
