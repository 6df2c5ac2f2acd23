package eino

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/minio"
	"github.com/cairnlog/cairn/internal/s3test"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
)

func TestMain(m *testing.M) { s3test.Main(m) }

// draftState is what the approval node keeps across its interrupt.
type draftState struct {
	Draft string
}

// decision is the human's answer, passed on resume.
type decision struct {
	Approved bool
	By       string
}

func init() {
	schema.RegisterName[*draftState]("cairn_eino_test_draft_state")
}

// approvalGraph is a real Eino graph: write a draft, ask a human to approve
// it (interrupt), ask for a final sign-off (a second interrupt), publish.
func approvalGraph(ctx context.Context, store compose.CheckPointStore) (compose.Runnable[string, string], error) {
	g := compose.NewGraph[string, string]()
	_ = g.AddLambdaNode("draft", compose.InvokableLambda(func(ctx context.Context, topic string) (string, error) {
		return "draft about " + topic, nil
	}))
	ask := func(step string) *compose.Lambda {
		return compose.InvokableLambda(func(ctx context.Context, in string) (string, error) {
			wasInterrupted, _, st := compose.GetInterruptState[*draftState](ctx)
			if !wasInterrupted {
				return "", compose.StatefulInterrupt(ctx, step+"? "+in, &draftState{Draft: in})
			}
			isTarget, hasData, d := compose.GetResumeContext[*decision](ctx)
			if !isTarget || !hasData {
				return "", compose.StatefulInterrupt(ctx, step+"? "+st.Draft, st)
			}
			if !d.Approved {
				return st.Draft + " | " + step + " rejected by " + d.By, nil
			}
			return st.Draft + " | " + step + " approved by " + d.By, nil
		})
	}
	_ = g.AddLambdaNode("approve", ask("approve"))
	_ = g.AddLambdaNode("signoff", ask("signoff"))
	_ = g.AddLambdaNode("publish", compose.InvokableLambda(func(ctx context.Context, in string) (string, error) {
		return "published: " + in, nil
	}))
	_ = g.AddEdge(compose.START, "draft")
	_ = g.AddEdge("draft", "approve")
	_ = g.AddEdge("approve", "signoff")
	_ = g.AddEdge("signoff", "publish")
	_ = g.AddEdge("publish", compose.END)
	return g.Compile(ctx, compose.WithCheckPointStore(store), compose.WithGraphName("approval"))
}

// interruptID runs the graph and returns the ID of the interrupt it stops at.
func interruptID(t *testing.T, err error) string {
	t.Helper()
	info, ok := compose.ExtractInterruptInfo(err)
	if !ok || len(info.InterruptContexts) != 1 {
		t.Fatalf("want one interrupt, got err %v", err)
	}
	return info.InterruptContexts[0].ID
}

// Environment of the child process: where the store is and what to do.
const (
	envChild    = "CAIRN_EINO_CHILD"
	envEndpoint = "CAIRN_EINO_ENDPOINT"
	envBucket   = "CAIRN_EINO_BUCKET"
	envPrefix   = "CAIRN_EINO_PREFIX"
	envKey      = "CAIRN_EINO_KEY"
	envSecret   = "CAIRN_EINO_SECRET"
	envID       = "CAIRN_EINO_CHECKPOINT"
	envAnswers  = "CAIRN_EINO_ANSWERS"
)

func openMinIO(ctx context.Context, endpoint, bucket, prefix, key, secret string) (*cairn.Workspace, error) {
	st, err := minio.Open(ctx, bucket, prefix, minio.Options{
		Endpoint: endpoint, Region: s3test.Region, AccessKey: key, SecretKey: secret,
	})
	if err != nil {
		return nil, err
	}
	return cairn.OpenStore(st), nil
}

// TestResumeChild is the fresh process: it is run by TestResumeInFreshProcess
// through the test binary itself, and does nothing when run directly.
// It resumes checkpoint $CAIRN_EINO_CHECKPOINT from MinIO, answering each
// interrupt in turn from $CAIRN_EINO_ANSWERS ("yes:alice,no:bob"), and prints
// the graph's output.
func TestResumeChild(t *testing.T) {
	if os.Getenv(envChild) != "1" {
		t.Skip("run as a child process by TestResumeInFreshProcess")
	}
	ctx := context.Background()
	ws, err := openMinIO(ctx, os.Getenv(envEndpoint), os.Getenv(envBucket), os.Getenv(envPrefix), os.Getenv(envKey), os.Getenv(envSecret))
	if err != nil {
		t.Fatal(err)
	}
	store := New(ws)
	id := os.Getenv(envID)
	cp, ok, err := store.Get(ctx, id)
	if err != nil || !ok {
		t.Fatalf("child: no checkpoint %q in the store: ok=%v err=%v", id, ok, err)
	}
	fmt.Printf("CHILD found checkpoint %q (%d bytes)\n", id, len(cp))
	graph, err := approvalGraph(ctx, store)
	if err != nil {
		t.Fatal(err)
	}
	// Re-running with the checkpoint id and no resume data re-raises the
	// pending interrupt, which tells us its ID, as a UI would learn it.
	_, err = graph.Invoke(ctx, "", compose.WithCheckPointID(id))
	for _, ans := range strings.Split(os.Getenv(envAnswers), ",") {
		yes, by, _ := strings.Cut(ans, ":")
		rctx := compose.ResumeWithData(ctx, interruptID(t, err), &decision{Approved: yes == "yes", By: by})
		var out string
		out, err = graph.Invoke(rctx, "", compose.WithCheckPointID(id))
		if err == nil {
			fmt.Printf("CHILD RESULT %s\n", out)
			return
		}
	}
	t.Fatalf("child: graph did not finish after all answers: %v", err)
}

// runChild resumes checkpoint id in a fresh process and returns its result.
func runChild(t *testing.T, b *s3test.Bucket, prefix, id, answers string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestResumeChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(),
		envChild+"=1", envEndpoint+"="+b.Host, envBucket+"="+b.Name, envPrefix+"="+prefix,
		envKey+"="+b.AccessKey, envSecret+"="+b.SecretKey, envID+"="+id, envAnswers+"="+answers)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child process: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if r, ok := strings.CutPrefix(line, "CHILD RESULT "); ok {
			t.Logf("child (pid %d): %s", cmd.ProcessState.Pid(), r)
			return r
		}
	}
	t.Fatalf("child printed no result:\n%s", out)
	return ""
}

// TestResumeInFreshProcess: a real Eino graph interrupts for approval and
// cairn stores its checkpoint on MinIO; a fresh process resumes it with the
// approval and finishes; a second resume from the earlier step forks and
// finishes differently on its own branch, leaving the first run alone.
func TestResumeInFreshProcess(t *testing.T) {
	ctx := context.Background()
	b := s3test.StartMinIO(t)
	const prefix = "eino-test"
	ws, err := openMinIO(ctx, b.Host, b.Name, prefix, b.AccessKey, b.SecretKey)
	if err != nil {
		t.Fatal(err)
	}
	store := New(ws)
	graph, err := approvalGraph(ctx, store)
	if err != nil {
		t.Fatal(err)
	}

	// This process: run until the graph asks for approval, then "exit".
	_, err = graph.Invoke(ctx, "storage costs", compose.WithCheckPointID("run-1"))
	interruptID(t, err)
	steps, err := store.Steps(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 1 {
		t.Fatalf("after the first interrupt run-1 has %d steps, want 1", len(steps))
	}
	pending := steps[0]

	// A fresh process resumes with the approval, passes the second
	// interrupt (sign-off) the same way, and finishes.
	got := runChild(t, b, prefix, "run-1", "yes:alice,yes:carol")
	if want := "published: draft about storage costs | approve approved by alice | signoff approved by carol"; got != want {
		t.Fatalf("resumed run = %q, want %q", got, want)
	}
	steps, err = store.Steps(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) < 2 {
		t.Fatalf("run-1 has %d steps after the resume, want the sign-off interrupt stored too", len(steps))
	}
	head := steps[0]
	for _, st := range steps {
		t.Logf("run-1 log: %s status=%s stored=%dB", st, st.Status, st.StoredBytes)
	}

	// Resume again from the earlier step (the approval interrupt), this
	// time rejecting: fork step 1 into its own checkpoint id and resume that
	// in another fresh process.
	if err := store.Fork(ctx, "run-1", pending.Number, "run-1-rejected"); err != nil {
		t.Fatal(err)
	}
	got = runChild(t, b, prefix, "run-1-rejected", "no:bob,yes:carol")
	if want := "published: draft about storage costs | approve rejected by bob | signoff approved by carol"; got != want {
		t.Fatalf("forked run = %q, want %q", got, want)
	}

	// The fork starts as a copy of run-1's first step (its origin) and
	// grows on its own; run-1 is untouched.
	alt, err := store.Steps(ctx, "run-1-rejected")
	if err != nil {
		t.Fatal(err)
	}
	var origin *cairn.StepRef
	for _, st := range alt {
		if st.Session != store.SessionName("run-1-rejected") {
			t.Fatalf("fork's log reaches %s", st)
		}
		if st.Origin != nil {
			origin = st.Origin
		}
	}
	if origin == nil || origin.Session != store.SessionName("run-1") || origin.Number != pending.Number || origin.ID != pending.ID.String() {
		t.Fatalf("fork's origin = %+v, want %s (%s)", origin, pending, pending.ID)
	}
	if len(alt) <= int(pending.Number) {
		t.Fatalf("fork has %d steps, want new steps after the copied one", len(alt))
	}
	now, err := store.Steps(ctx, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if now[0].ID != head.ID {
		t.Fatalf("run-1's head moved from %s to %s", head, now[0])
	}
	for _, st := range alt {
		t.Logf("run-1-rejected log: %s status=%s stored=%dB", st, st.Status, st.StoredBytes)
	}
	if rep, err := ws.Verify(ctx); err != nil || len(rep.Problems) > 0 {
		t.Fatalf("verify: %v %v", err, rep)
	}
}
