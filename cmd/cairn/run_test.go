package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/pyclient"
)

func exampleAgent(t *testing.T) string {
	p, err := filepath.Abs("../../internal/pyclient/example_agent.py")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// lockedBuffer is a process's output that a test reads while the process
// runs: exec's copying goroutine writes it as the test polls it, which a
// bytes.Buffer does not allow (go test -race reports it).
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// call is one line of the example agent's model-call log.
type call struct {
	pid  int
	turn int
	id   string
}

func readCalls(t *testing.T, path string) []call {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out []call
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 {
			continue // a line being written
		}
		pid, _ := strconv.Atoi(f[0])
		turn, _ := strconv.Atoi(f[2])
		out = append(out, call{pid, turn, f[3]})
	}
	return out
}

// agentRecord is the record the example agent commits with each turn.
type agentRecord struct {
	Turn *int   `json:"turn"`
	Call string `json:"call"`
}

// sessionSteps reads the session's log oldest first.
func sessionSteps(t *testing.T, store, session string) []*cairn.Step {
	t.Helper()
	ctx := context.Background()
	ws, err := cairn.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	s, _ := ws.Session(session)
	var steps []*cairn.Step
	if err := s.Log(ctx, func(st *cairn.Step) error { steps = append([]*cairn.Step{st}, steps...); return nil }); err != nil {
		t.Fatal(err)
	}
	if rep, err := ws.Verify(ctx, session); err != nil || len(rep.Problems) > 0 {
		t.Fatalf("verify %s: %v %v", session, err, rep.Problems)
	}
	return steps
}

func headState(t *testing.T, store, session string) map[string]any {
	t.Helper()
	ctx := context.Background()
	ws, err := cairn.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	st, err := ws.Resolve(ctx, session)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := st.JSON(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// checkOnce checks that the session's turns 0..turns-1 were each committed
// exactly once, in order, and that no model call for a turn was made after
// that turn's checkpoint: a committed call is the last call of its turn.
// It returns how many calls were made again (their step was lost to a kill).
func checkOnce(t *testing.T, store, session, callsFile string, turns int) int {
	t.Helper()
	calls := readCalls(t, callsFile)
	committed := map[int]string{}
	for _, st := range sessionSteps(t, store, session) {
		var r agentRecord
		if json.Unmarshal(st.Record, &r) != nil || r.Turn == nil || r.Call == "" {
			continue // a question or a reply
		}
		if _, dup := committed[*r.Turn]; dup {
			t.Fatalf("turn %d committed twice (again at %s)", *r.Turn, st)
		}
		if *r.Turn != len(committed) {
			t.Fatalf("%s commits turn %d after %d turns", st, *r.Turn, len(committed))
		}
		committed[*r.Turn] = r.Call
	}
	if len(committed) != turns {
		t.Fatalf("%d turns committed, want %d", len(committed), turns)
	}
	last := map[int]string{}
	for _, c := range calls {
		last[c.turn] = c.id
	}
	for turn, id := range committed {
		if last[turn] != id {
			t.Fatalf("turn %d: committed call %s, but the last call made for it was %s: a checkpointed call was repeated", turn, id, last[turn])
		}
	}
	if len(calls) < turns {
		t.Fatalf("%d calls logged for %d committed turns", len(calls), turns)
	}
	return len(calls) - turns
}

// TestRunKilledTwice runs the example agent under `cairn run`, SIGKILLs it
// twice mid-loop (once during a model call, once right after a commit) and
// checks that it finishes with every turn committed once and no
// checkpointed model call made again.
func TestRunKilledTwice(t *testing.T) {
	py := pyclient.Python3(t)
	bin := cairnBinary(t)
	dir := t.TempDir()
	store, callsFile := filepath.Join(dir, "store"), filepath.Join(dir, "calls.log")
	const turns = 12
	cmd := exec.Command(bin, "--store", store, "run", "--session", "k", "--restart", "3", "--",
		py, exampleAgent(t), "--turns", strconv.Itoa(turns), "--calls", callsFile, "--delay", "0.15")
	var stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	ctx := context.Background()
	kills := []struct {
		when func(calls []call) bool
		what string
	}{
		// During turn 3's model call: the call is not checkpointed and is made again.
		{func(c []call) bool { return len(c) > 0 && c[len(c)-1].turn == 3 }, "during turn 3's model call"},
		// Once step 7 (turn 6) is acknowledged.
		{func([]call) bool { return headNumber(ctx, t, store, "k") >= 7 }, "after step 7 was committed"},
	}
	killed := map[int]bool{}
	deadline := time.After(90 * time.Second)
	for i := 0; i < len(kills); {
		select {
		case err := <-done:
			t.Fatalf("cairn run ended (%v) before kill %d\n%s", err, i+1, stderr.String())
		case <-deadline:
			t.Fatalf("kill %d (%s) never came\n%s", i+1, kills[i].what, stderr.String())
		case <-time.After(5 * time.Millisecond):
		}
		calls := readCalls(t, callsFile)
		if len(calls) == 0 || !kills[i].when(calls) {
			continue
		}
		pid := calls[len(calls)-1].pid
		if killed[pid] {
			continue // that one is already dead; wait for the restart
		}
		if err := killPid(pid); err != nil {
			t.Fatalf("kill agent %d %s: %v", pid, kills[i].what, err)
		}
		killed[pid] = true
		t.Logf("killed agent pid %d %s", pid, kills[i].what)
		i++
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("cairn run: %v\n%s", err, stderr.String())
		}
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("cairn run did not finish\n%s", stderr.String())
	}
	for _, want := range []string{"; restart 1 in ", "; restart 2 in "} {
		if !strings.Contains(stderr.String(), want) {
			t.Fatalf("cairn run's log lacks %q:\n%s", want, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "; restart 3 in ") {
		t.Fatalf("three restarts for two kills:\n%s", stderr.String())
	}
	again := checkOnce(t, store, "k", callsFile, turns)
	pids := map[int]bool{}
	for _, c := range readCalls(t, callsFile) {
		pids[c.pid] = true
	}
	if len(pids) != 3 {
		t.Fatalf("model calls came from %d agent processes, want 3 (two kills)", len(pids))
	}
	// Each kill may cost the one call in flight (unless the agent got its
	// step committed before the signal landed), never more.
	if again > 2 {
		t.Fatalf("%d calls made again for 2 kills", again)
	}
	st := headState(t, store, "k")
	if st["turns"] != float64(turns) || len(st["calls"].([]any)) != turns {
		t.Fatalf("final state: turns %v, %d calls", st["turns"], len(st["calls"].([]any)))
	}
	t.Logf("%d turns, 2 kills, %d model calls made again (uncheckpointed), %d agent processes", turns, again, len(pids))
}

func headNumber(ctx context.Context, t *testing.T, store, session string) uint64 {
	ws, err := cairn.Open(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	s, _ := ws.Session(session)
	h, err := s.Head(ctx)
	if err != nil {
		return 0
	}
	return h.Number
}

// checkReplied checks that the agent finished with the human's answer in
// its messages, right after the turn it asked about.
func checkReplied(t *testing.T, store, session string, turns int, want string) {
	t.Helper()
	st := headState(t, store, session)
	if st["turns"] != float64(turns) {
		t.Fatalf("%s: %v turns done, want %d", session, st["turns"], turns)
	}
	found := false
	for _, m := range st["messages"].([]any) {
		m := m.(map[string]any)
		if m["role"] == "human" {
			b, _ := json.Marshal(m["content"])
			if string(b) != want {
				t.Fatalf("%s: the agent saw the reply %s, want %s", session, b, want)
			}
			found = true
		}
	}
	if !found {
		t.Fatalf("%s: no human message in the final state: %v", session, st["messages"])
	}
}

func processGone(t *testing.T, pid int) {
	t.Helper()
	if err := signal0(pid); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("agent process %d still exists (%v) while the session waits for a human", pid, err)
	}
}

// TestHumanReplyCLI pauses sessions for a human and answers them with
// `cairn reply` while no agent process exists: once with the agent restarted
// by a second `cairn run`, once with `cairn run --wait` waiting without
// the agent.
func TestHumanReplyCLI(t *testing.T) {
	py := pyclient.Python3(t)
	bin := cairnBinary(t)
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	agent := func(session, calls string) []string {
		return []string{"--store", store, "run", "--session", session, "--", py, exampleAgent(t),
			"--turns", "4", "--ask-at", "2", "--calls", calls, "--delay", "0.01"}
	}
	calls := filepath.Join(dir, "h1.log")
	out, err := exec.Command(bin, agent("h1", calls)...).CombinedOutput()
	if err != nil {
		t.Fatalf("first run: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "h1@3 awaits input") {
		t.Fatalf("first run did not stop at the question:\n%s", out)
	}
	c := readCalls(t, calls)
	processGone(t, c[len(c)-1].pid)
	inbox, errs, code := cli(t, store, "", "inbox", "--json")
	var p struct {
		Session  string
		Step     uint64
		Question string
	}
	if code != 0 || json.Unmarshal([]byte(inbox), &p) != nil || p.Session != "h1" || p.Step != 3 || p.Question != "May I go on with turn 2?" {
		t.Fatalf("inbox --json = %q %s (exit %d)", inbox, errs, code)
	}
	if _, _, code := cli(t, store, "", "reply", "h1", "--input", "{not json"); code != 2 {
		t.Fatalf("reply with bad JSON: exit %d, want 2", code)
	}
	reply := `{"approved":true,"note":"go on"}`
	if out, errs, code := cli(t, store, "", "reply", "h1", "--input", reply); code != 0 || !strings.HasPrefix(out, "h1@4 ") {
		t.Fatalf("reply: exit %d: %s %s", code, out, errs)
	}
	if _, errs, code := cli(t, store, "", "reply", "h1", "--input", reply); code != 3 {
		t.Fatalf("second reply: exit %d, want 3 (%s)", code, errs)
	}
	// An empty inbox says so (issue 15 item 9); --json prints nothing.
	if out, _, _ := cli(t, store, "", "inbox"); out != "no session awaits input\n" {
		t.Fatalf("inbox after the reply: %q", out)
	}
	if out, _, _ := cli(t, store, "", "inbox", "--json"); out != "" {
		t.Fatalf("inbox after the reply: %q", out)
	}
	if out, err := exec.Command(bin, agent("h1", calls)...).CombinedOutput(); err != nil || !strings.Contains(string(out), "resumed h1 at step 4") {
		t.Fatalf("second run: %v\n%s", err, out)
	}
	checkReplied(t, store, "h1", 4, reply)
	if again := checkOnce(t, store, "h1", calls, 4); again != 0 {
		t.Fatalf("%d model calls made again", again)
	}

	// cairn run --wait: the agent exits at the question, the run waits
	// without it, and starts it again once the reply lands.
	calls2 := filepath.Join(dir, "h2.log")
	args := agent("h2", calls2)
	args = append(args[:5], append([]string{"--wait"}, args[5:]...)...)
	cmd := exec.Command(bin, args...)
	var stderr lockedBuffer
	cmd.Stderr, cmd.Stdout = &stderr, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stderr.String(), "waiting for a reply") {
		if time.Now().After(deadline) {
			t.Fatalf("cairn run --wait never waited:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	c = readCalls(t, calls2)
	processGone(t, c[len(c)-1].pid)
	if _, errs, code := cli(t, store, "", "reply", "h2", "--input", `"yes"`); code != 0 {
		t.Fatalf("reply h2: %s", errs)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("cairn run --wait: %v\n%s", err, stderr.String())
	}
	checkReplied(t, store, "h2", 4, `"yes"`)
	checkOnce(t, store, "h2", calls2, 4)
}

// TestHumanReplyHTTP runs the Python example loop against a real `cairn
// serve`: it pauses and exits; a new agent process long-polls; the answer
// arrives through the HTTP API and the agent finishes with it.
func TestHumanReplyHTTP(t *testing.T) {
	py := pyclient.Python3(t)
	bin := cairnBinary(t)
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	url := startServe(t, bin, store)
	calls := filepath.Join(dir, "calls.log")
	agent := func(onPause string) *exec.Cmd {
		cmd := exec.Command(py, exampleAgent(t), "--session", "web", "--turns", "3", "--ask-at", "1",
			"--calls", calls, "--delay", "0.01", "--on-pause", onPause)
		cmd.Env = append(os.Environ(), "CAIRN_URL="+url)
		return cmd
	}
	if out, err := agent("exit").CombinedOutput(); err != nil || !strings.Contains(string(out), "waiting for a human at step 2; exiting") {
		t.Fatalf("first agent: %v\n%s", err, out)
	}
	c := readCalls(t, calls)
	processGone(t, c[len(c)-1].pid)

	var inbox struct {
		Pending []struct{ Session, Question string }
	}
	getJSON(t, url+"/v1/inbox", &inbox)
	if len(inbox.Pending) != 1 || inbox.Pending[0].Session != "web" {
		t.Fatalf("inbox = %+v", inbox)
	}
	// A new agent process long-polls for the answer.
	waiter := agent("wait")
	var out lockedBuffer
	waiter.Stdout, waiter.Stderr = &out, &out
	if err := waiter.Start(); err != nil {
		t.Fatal(err)
	}
	defer waiter.Process.Kill()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "waiting for a human at step 2") {
		if time.Now().After(deadline) {
			t.Fatalf("the second agent never waited:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // let its long-poll reach the server
	reply := `{"approved":false,"reason":"use the cheaper model"}`
	resp, err := http.Post(url+"/v1/sessions/web/reply", "application/json", strings.NewReader(`{"input":`+reply+`}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("POST reply: %d %s", resp.StatusCode, body)
	}
	if err := waiter.Wait(); err != nil {
		t.Fatalf("second agent: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "committed web@4 (turn 1)") {
		t.Fatalf("second agent did not go on after the reply:\n%s", out.String())
	}
	checkReplied(t, store, "web", 3, reply)
	if again := checkOnce(t, store, "web", calls, 3); again != 0 {
		t.Fatalf("%d model calls made again", again)
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// startServe starts `cairn serve` on a free loopback port and returns its URL.
func startServe(t *testing.T, bin, store string, args ...string) string {
	t.Helper()
	srv := exec.Command(bin, append([]string{"--store", store, "serve", "--listen", "127.0.0.1:0"}, args...)...)
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Signal(syscall.SIGTERM)
		if err := srv.Wait(); err != nil {
			t.Errorf("cairn serve after SIGTERM: %v", err)
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	url := strings.TrimSpace(strings.TrimPrefix(line, "cairn serve: "))
	if err != nil || !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("cairn serve said %q (%v)", line, err)
	}
	return url
}

// TestServeTokenFile: with --token-file the real server wants the token.
func TestServeTokenFile(t *testing.T) {
	bin := cairnBinary(t)
	dir := t.TempDir()
	tok := filepath.Join(dir, "token")
	os.WriteFile(tok, []byte("t0ken\n"), 0o600)
	url := startServe(t, bin, filepath.Join(dir, "store"), "--token-file", tok)
	wantsToken(t, url, "t0ken", "--token-file holding t0ken and a newline")
}

// wantsToken checks that the server at url refuses a request with no
// token or another one (401) and serves one with token (200); how says
// how the server was given its token, for the errors.
func wantsToken(t *testing.T, url, token, how string) {
	t.Helper()
	for _, c := range []struct {
		token string
		want  int
	}{{"", 401}, {token + "2", 401}, {token, 200}} {
		req, _ := http.NewRequest("GET", url+"/v1/sessions", nil)
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s, token %q: %d, want %d", how, c.token, resp.StatusCode, c.want)
		}
	}
}

// TestServeTokenFromEnvLikeTheFile: a $CAIRN_TOKEN with white space at
// an end (a value read from a file with its newline, a CRLF) was the
// server's token as it stood, which no client can send (a header's
// value loses it): every request was refused 401. It is trimmed as a
// token file's is; one that holds a character no header can carry is
// refused at start, exit 2, naming where it came from.
func TestServeTokenFromEnvLikeTheFile(t *testing.T) {
	bin := cairnBinary(t)
	dir := t.TempDir()
	t.Setenv("CAIRN_TOKEN", "t0ken\r\n")
	url := startServe(t, bin, filepath.Join(dir, "store"))
	wantsToken(t, url, "t0ken", `$CAIRN_TOKEN "t0ken\r\n"`)
	for _, bad := range []string{"t0\x01ken", "t0kén"} {
		// A server that takes the token serves on: stop it after a while.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "--store", filepath.Join(dir, "store"), "serve", "--listen", "127.0.0.1:0")
		cmd.Env = append(os.Environ(), "CAIRN_TOKEN="+bad)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "$CAIRN_TOKEN holds U+") {
			t.Errorf("$CAIRN_TOKEN %q: %v, %q; want exit 2 naming $CAIRN_TOKEN and the character", bad, err, out)
		}
	}
}
