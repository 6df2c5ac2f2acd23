package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/hitl"
)

// The test binary doubles as the supervised command when RUNNER_CHILD is set.
func TestMain(m *testing.M) {
	if mode := os.Getenv("RUNNER_CHILD"); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

// child is the command under Run: it reports what it was given to
// $RUNNER_OUT and commits through $CAIRN_URL.
func child(mode string) int {
	url, token := os.Getenv(EnvURL), os.Getenv(EnvToken)
	step, _ := strconv.ParseUint(os.Getenv(EnvStep), 10, 64)
	do := func(method, path, body, tok string) (int, map[string]any) {
		req, _ := http.NewRequest(method, url+path, strings.NewReader(body))
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(9)
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	commit := func(state, status string) {
		code, m := do("POST", "/v1/sessions/"+os.Getenv(EnvSession)+"/steps",
			fmt.Sprintf(`{"state":%s,"status":%q,"expect":%d}`, state, status, step), token)
		if code != 201 {
			fmt.Fprintln(os.Stderr, "child: commit:", code, m)
			os.Exit(9)
		}
	}
	switch mode {
	case "report":
		state, _ := os.ReadFile(filepath.Join(os.Getenv(EnvStateDir), "state.json"))
		noToken, _ := do("GET", "/v1/sessions", "", "")
		withToken, _ := do("GET", "/v1/sessions", "", token)
		rep, _ := json.Marshal(map[string]any{
			"session": os.Getenv(EnvSession), "step": step, "state": string(state),
			"store": os.Getenv(EnvStore), "attempt": os.Getenv(EnvAttempt),
			"no_token": noToken, "with_token": withToken,
		})
		os.WriteFile(os.Getenv("RUNNER_OUT"), rep, 0o644)
		commit(`{"n":`+strconv.FormatUint(step+1, 10)+`}`, "done")
		return 0
	case "crash":
		// Commit a step and fail, until the head reaches $RUNNER_STEPS
		// (default: always commit); then fail without committing.
		if max, err := strconv.ParseUint(os.Getenv("RUNNER_STEPS"), 10, 64); err != nil || step < max {
			commit(`{"n":`+strconv.FormatUint(step+1, 10)+`}`, "running")
		}
		return 3
	case "fail":
		return 3
	case "donefail":
		// End the session, then fail.
		commit(`{}`, "done")
		return 3
	case "askfail":
		// Fail, then ask a question (exit 0); given the answer, fail
		// once more, then end the session.
		attempt := os.Getenv(EnvAttempt)
		switch {
		case step == 0 && attempt == "0":
			return 3
		case step == 0:
			commit(`{"asking":true}`, "awaiting_input")
			return 0
		case attempt == "1":
			return 3
		}
		commit(`{}`, "done")
		return 0
	case "pause":
		_, head := do("GET", "/v1/sessions/"+os.Getenv(EnvSession)+"/head", "", token)
		if rec, ok := head["record"].(map[string]any); ok && rec["reply"] != nil {
			commit(fmt.Sprintf(`{"answer":%q}`, rec["reply"]), "done")
			return 0
		}
		commit(`{"asking":true}`, "awaiting_input")
		return 0
	}
	return 2
}

func setup(t *testing.T, mode string) (*cairn.Workspace, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("RUNNER_CHILD", mode)
	store := t.TempDir()
	ws, err := cairn.Open(t.Context(), store)
	if err != nil {
		t.Fatal(err)
	}
	return ws, exe
}

func TestRunGivesStateAndAPI(t *testing.T) {
	ws, exe := setup(t, "report")
	out := filepath.Join(t.TempDir(), "report.json")
	t.Setenv("RUNNER_OUT", out)
	s, _ := ws.Session("r")
	if _, err := s.Commit(t.Context(), cairn.JSON([]byte(`{"n":1, "kept": 1.50}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "work")
	res, err := Run(t.Context(), ws, Config{Session: "r", Command: []string{exe}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if res.Head != 2 || res.Status != cairn.Done || res.Starts != 1 || res.Restarts != 0 {
		t.Fatalf("result = %+v", res)
	}
	var rep map[string]any
	b, _ := os.ReadFile(out)
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("child report %q: %v", b, err)
	}
	want := map[string]any{"session": "r", "step": 1.0, "state": `{"n":1,"kept":1.50}` + "\n",
		"store": ws.URL(), "attempt": "0", "no_token": 401.0, "with_token": 200.0}
	for k, v := range want {
		if rep[k] != v {
			t.Errorf("child saw %s = %v, want %v", k, rep[k], v)
		}
	}
	// A done session is not run again.
	res, err = Run(t.Context(), ws, Config{Session: "r", Command: []string{exe}, Dir: dir})
	if err != nil || res.Starts != 0 {
		t.Fatalf("run of a done session: %+v %v", res, err)
	}
	// The work directory must start empty.
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o644)
	if _, err := Run(t.Context(), ws, Config{Session: "r2", Command: []string{exe}, Dir: dir}); err == nil {
		t.Fatal("run into a non-empty directory succeeded")
	}
}

// pauses records the pauses a run makes before its restarts.
type pauses []time.Duration

func (p *pauses) sleep(ctx context.Context, d time.Duration) error {
	*p = append(*p, d)
	return ctx.Err()
}

// TestRunRestartsThenGivesUp: a command that commits a step before each
// crash makes progress, so the restart budget starts afresh each time
// (issue 15 item 10: it never did); once it crashes without a new step,
// the budget runs out and the pauses double.
func TestRunRestartsThenGivesUp(t *testing.T) {
	ws, exe := setup(t, "crash")
	t.Setenv("RUNNER_STEPS", "3")
	var log bytes.Buffer
	var slept pauses
	res, err := Run(t.Context(), ws, Config{Session: "c", Command: []string{exe}, Restarts: 2, Log: &log,
		Backoff: time.Second, MaxBackoff: time.Minute, sleep: slept.sleep})
	if err == nil || !strings.Contains(err.Error(), "exited with status 3 at c@3: gave up after 3 failed starts in a row without a new step") {
		t.Fatalf("run of a command that always fails: %v", err)
	}
	if strings.HasPrefix(err.Error(), "run") {
		t.Fatalf("error %q repeats the caller's prefix", err)
	}
	// Each start went on from the step the one before it committed.
	if res.Starts != 5 || res.Restarts != 4 || res.Head != 3 {
		t.Fatalf("result = %+v\n%s", res, log.String())
	}
	want := pauses{time.Second, time.Second, time.Second, 2 * time.Second}
	if !slices.Equal(slept, want) {
		t.Fatalf("pauses %v, want %v\n%s", slept, want, log.String())
	}
	for _, line := range []string{"at c@1; restart 1 in 1s (1 of 2 without a new step)", "at c@3; restart 4 in 2s (2 of 2 without a new step)"} {
		if !strings.Contains(log.String(), line) {
			t.Fatalf("log lacks %q:\n%s", line, log.String())
		}
	}
}

// TestRunBacksOff: failures without progress wait twice as long each
// time, up to the cap (issue 15 item 10: restarts came at once).
func TestRunBacksOff(t *testing.T) {
	ws, exe := setup(t, "fail")
	var slept pauses
	res, err := Run(t.Context(), ws, Config{Session: "f", Command: []string{exe}, Restarts: 5,
		Backoff: time.Second, MaxBackoff: 4 * time.Second, sleep: slept.sleep})
	if err == nil || res.Starts != 6 {
		t.Fatalf("run: %+v %v", res, err)
	}
	want := pauses{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second, 4 * time.Second}
	if !slices.Equal(slept, want) {
		t.Fatalf("pauses %v, want %v", slept, want)
	}
	if got := backoff(DefaultBackoff, DefaultMaxBackoff, 1000); got != DefaultMaxBackoff {
		t.Fatalf("backoff after 1000 failures = %v", got)
	}
}

func TestRunPauseAndWait(t *testing.T) {
	ws, exe := setup(t, "pause")
	var log bytes.Buffer
	res, err := Run(t.Context(), ws, Config{Session: "p", Command: []string{exe}, Log: &log})
	if err != nil || res.Status != cairn.AwaitingInput || res.Head != 1 {
		t.Fatalf("pausing run: %+v %v", res, err)
	}
	if !strings.Contains(log.String(), "p@1 awaits input") {
		t.Fatalf("log:\n%s", log.String())
	}
	// Waiting: the run starts the command again once the reply lands.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	done := make(chan Result)
	go func() {
		res, err := Run(ctx, ws, Config{Session: "p", Command: []string{exe}, Wait: true, PollInterval: 10 * time.Millisecond})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	time.Sleep(50 * time.Millisecond)
	s, _ := ws.Session("p")
	if _, err := hitl.Reply(ctx, s, json.RawMessage(`"go"`)); err != nil {
		t.Fatal(err)
	}
	res = <-done
	if res.Head != 3 || res.Status != cairn.Done || res.Starts != 1 {
		t.Fatalf("waiting run: %+v", res)
	}
	head, _ := s.Head(ctx)
	doc, _ := head.JSON(ctx)
	if string(doc) != `{"answer":"go"}` {
		t.Fatalf("final state %s", doc)
	}
}

// TestEndedInWords: how a command ended is said in words, not in Go's
// ("exit status 3", "signal: killed").
func TestEndedInWords(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no shell and no signals here")
	}
	for script, want := range map[string]string{
		"exit 3":     "exited with status 3",
		"kill -9 $$": "was killed by a signal (killed)",
	} {
		err := exec.Command("/bin/sh", "-c", script).Run()
		if got := ended(err); got != want {
			t.Errorf("%q ended %q, want %q", script, got, want)
		}
	}
	if got := ended(errors.New("no such file")); got != "failed: no such file" {
		t.Errorf("a command that did not start: %q", got)
	}
}
