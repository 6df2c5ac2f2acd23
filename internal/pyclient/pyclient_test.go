package pyclient

import (
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/hitl"
	"github.com/cairnlog/cairn/internal/httpapi"
)

func serve(t *testing.T, opts httpapi.Options) (string, *cairn.Workspace) {
	t.Helper()
	ws, err := cairn.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(httpapi.New(ws, opts))
	t.Cleanup(ts.Close)
	return ts.URL, ws
}

// TestClient runs client_check.py: every client method against the server.
func TestClient(t *testing.T) {
	py := Python3(t)
	url, _ := serve(t, httpapi.Options{})
	cmd := exec.Command(py, "client_check.py")
	cmd.Env = append(os.Environ(), "CAIRN_URL="+url)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "client ok") {
		t.Fatalf("client_check.py: %v\n%s", err, out)
	}
}

// TestClientToken: the client sends $CAIRN_TOKEN, and without it gets a
// CairnError with status 401.
func TestClientToken(t *testing.T) {
	py := Python3(t)
	url, _ := serve(t, httpapi.Options{Token: "tok"})
	script := `
import sys; sys.path.insert(0, ".")
from cairn_client import Client, CairnError
c = Client()
c.commit("t", {"a": 1})
try:
    Client(token="nope").head("t")
    sys.exit("a wrong token was accepted")
except CairnError as e:
    assert e.status == 401 and e.code == "unauthorized", e
print("token ok")
`
	cmd := exec.Command(py, "-c", script)
	cmd.Env = append(os.Environ(), "CAIRN_URL="+url, "CAIRN_TOKEN=tok")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "token ok") {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestExampleLoop runs the example agent to the end against the server.
func TestExampleLoop(t *testing.T) {
	py := Python3(t)
	url, ws := serve(t, httpapi.Options{})
	calls := filepath.Join(t.TempDir(), "calls")
	cmd := exec.Command(py, "example_agent.py", "--session", "ex", "--turns", "4", "--calls", calls, "--delay", "0")
	cmd.Env = append(os.Environ(), "CAIRN_URL="+url)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("example_agent.py: %v\n%s", err, out)
	}
	s, _ := ws.Session("ex")
	head, err := s.Head(t.Context())
	if err != nil || head.Number != 4 || head.Status != cairn.Done {
		t.Fatalf("head after the loop: %v %v\n%s", head, err, out)
	}
	b, _ := os.ReadFile(calls)
	if n := strings.Count(string(b), "\n"); n != 4 {
		t.Fatalf("%d model calls for 4 turns", n)
	}
}

// TestExampleLoopDefaults runs the example loop as docs/agents.md shows
// it, without --calls: the call log defaults to /dev/null, which cannot
// be fsynced (issue 15 item 2: every turn died with EINVAL).
func TestExampleLoopDefaults(t *testing.T) {
	py := Python3(t)
	url, ws := serve(t, httpapi.Options{})
	cmd := exec.Command(py, "example_agent.py", "--session", "dflt", "--turns", "3", "--delay", "0")
	cmd.Env = append(os.Environ(), "CAIRN_URL="+url)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("example_agent.py without --calls: %v\n%s", err, out)
	}
	s, _ := ws.Session("dflt")
	if head, err := s.Head(t.Context()); err != nil || head.Number != 3 || head.Status != cairn.Done {
		t.Fatalf("head after the loop: %v %v", head, err)
	}
}

// TestExampleLoopRecordsFollowTheConvention: the example agent's steps
// record what each turn said as docs/records.md's messages (the human's
// reply as a user message before the turn that reads it), so that
// cairn replay shows its conversation and cairn export writes it. Its
// records held only {"turn","call"}: replay showed raw JSON, and every
// chat export of the README's walk-through skipped the session.
func TestExampleLoopRecordsFollowTheConvention(t *testing.T) {
	py := Python3(t)
	url, ws := serve(t, httpapi.Options{})
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(py, append([]string{"example_agent.py", "--session", "conv", "--turns", "3", "--delay", "0"}, args...)...)
		cmd.Env = append(os.Environ(), "CAIRN_URL="+url)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("example_agent.py: %v\n%s", err, out)
		}
	}
	run("--ask-at", "1")
	q, err := ws.Session("conv")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hitl.Reply(t.Context(), q, []byte(`{"approved":true}`)); err != nil {
		t.Fatal(err)
	}
	run()
	s, _ := ws.Session("conv")
	head, err := s.Head(t.Context())
	if err != nil || head.Status != cairn.Done {
		t.Fatalf("head after the loop: %v %v", head, err)
	}
	var said []string
	err = head.Log(t.Context(), func(st *cairn.Step) error {
		if st.Status == cairn.AwaitingInput || strings.Contains(string(st.Record), `"in_reply_to"`) {
			return nil // the question and the reply, which cairn writes
		}
		rec, err := cairn.ParseRecord(st.Record)
		if err != nil {
			t.Errorf("%s: record %s does not follow the convention: %v", st, st.Record, err)
			return nil
		}
		var roles []string
		for _, m := range rec.Messages {
			roles = append(roles, m.Role)
		}
		said = append([]string{strings.Join(roles, "+")}, said...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(said, " "), "assistant user+assistant assistant"; got != want {
		t.Errorf("messages of the turns, oldest first: %q; want %q", got, want)
	}
}
