package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	casfs "github.com/cairnlog/cairn/cas/fs"
)

// countingStore is a local store that counts the step objects read from
// it (GETs of keys under steps/), so that a test can see how many times
// a command reads each step. Tests name it countfs://PATH.
type countingStore struct {
	cas.Store
	stepGets *atomic.Int64
}

func (s countingStore) Get(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if strings.HasPrefix(key, "steps/") {
		s.stepGets.Add(1)
	}
	return s.Store.Get(ctx, key, off, n)
}

// stepGets counts the step objects read through countfs:// stores.
var stepGets atomic.Int64

func init() {
	cas.Register("countfs", cas.Backend{Open: func(_ context.Context, u *url.URL) (cas.Store, error) {
		st, err := casfs.Open(u.Path)
		if err != nil {
			return nil, err
		}
		return countingStore{st, &stepGets}, nil
	}})
}

// commitLangGraphThread commits n checkpoints of a LangGraph thread to
// session s of the store at dir, through the Go API: each adds one user
// message to the conversation its state holds.
func commitLangGraphThread(t *testing.T, dir, s string, n int) {
	t.Helper()
	ctx := context.Background()
	ws, err := cairn.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	sess, err := ws.Session(s)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []json.RawMessage
	for i := 1; i <= n; i++ {
		msgs = append(msgs, json.RawMessage(fmt.Sprintf(`{"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],"kwargs":{"content":"message %d","id":"m%d"}}`, i, i)))
		list, err := json.Marshal(msgs)
		if err != nil {
			t.Fatal(err)
		}
		state := fmt.Sprintf(`{"checkpoint_id":"c%d","channels":{"messages":{"version":%d,"value":{"json":%s}}}}`, i, i, list)
		rec := fmt.Sprintf(`{"langgraph":"checkpoint","checkpoint_id":"c%d","writes":0}`, i)
		if _, err := sess.Commit(ctx, cairn.JSON([]byte(state)), cairn.CommitOptions{Record: json.RawMessage(rec)}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReplayAdapterReadsEachStepOnce: replay of a LangGraph thread read
// its history twice (once for the steps, once more for the conversation
// in their states), and with --from K the conversation's walk still went
// down to the thread's first step. It reads each step object about once
// now, and with --from K the steps from K-1 up and the objects that hold
// the blobs of the two states it reads whole (step K-1's and the
// head's): a few dozen at most (31 here, 46 for 2,000 steps), where it
// read every step of the thread.
func TestReplayAdapterReadsEachStepOnce(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	const n, from = 200, 191
	dir := t.TempDir()
	commitLangGraphThread(t, dir, "lg", n)
	for _, c := range []struct {
		args []string
		max  int64
	}{
		{[]string{"replay", "lg"}, n + 4},
		{[]string{"replay", "lg", "--from", fmt.Sprint(from)}, n - from + 2 + 40},
	} {
		stepGets.Store(0)
		out, errs, code := cli(t, "countfs://"+dir, "", c.args...)
		if code != 0 {
			t.Fatalf("cairn %s: exit %d: %s", strings.Join(c.args, " "), code, errs)
		}
		if !strings.Contains(out, fmt.Sprintf("user: message %d\n", n)) {
			t.Errorf("cairn %s does not show the last message:\n%s", strings.Join(c.args, " "), out)
		}
		if got := stepGets.Load(); got > c.max {
			t.Errorf("cairn %s read %d step objects; want at most %d", strings.Join(c.args, " "), got, c.max)
		}
	}
}
