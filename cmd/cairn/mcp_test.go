package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// rpcClient speaks newline-delimited JSON-RPC 2.0 to a `cairn mcp` process.
type rpcClient struct {
	t      *testing.T
	in     io.WriteCloser
	out    *bufio.Reader
	nextID int
}

func (c *rpcClient) send(msg map[string]any) {
	c.t.Helper()
	msg["jsonrpc"] = "2.0"
	b, _ := json.Marshal(msg)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

// call sends a request and returns its result, skipping notifications.
func (c *rpcClient) call(method string, params any) json.RawMessage {
	c.t.Helper()
	c.nextID++
	c.send(map[string]any{"id": c.nextID, "method": method, "params": params})
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			c.t.Fatalf("%s: read: %v", method, err)
		}
		var resp struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int
				Message string
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &resp); err != nil {
			c.t.Fatalf("%s: bad JSON-RPC line %q: %v", method, line, err)
		}
		if resp.ID == nil {
			continue // a notification
		}
		if *resp.ID != c.nextID {
			c.t.Fatalf("%s: answer to id %d, want %d", method, *resp.ID, c.nextID)
		}
		if resp.Error != nil {
			c.t.Fatalf("%s: error %d %s", method, resp.Error.Code, resp.Error.Message)
		}
		return resp.Result
	}
}

// tool calls a tool and returns its structured content.
func (c *rpcClient) tool(name string, args map[string]any) map[string]any {
	c.t.Helper()
	var res struct {
		IsError           bool
		Content           []struct{ Text string }
		StructuredContent map[string]any
	}
	raw := c.call("tools/call", map[string]any{"name": name, "arguments": args})
	if err := json.Unmarshal(raw, &res); err != nil {
		c.t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		c.t.Fatalf("%s: tool error %v", name, res.Content)
	}
	return res.StructuredContent
}

// TestMCPStdio talks JSON-RPC to the built binary: initialize, list the
// tools, then checkpoint -> resume -> fork and read the fork back.
func TestMCPStdio(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	c, cmd, stderr := startMCP(t, store)

	var init struct {
		ProtocolVersion string
		ServerInfo      struct{ Name string }
		Capabilities    struct{ Tools *struct{} }
	}
	json.Unmarshal(c.call("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "cairn-test", "version": "1"},
	}), &init)
	if init.ServerInfo.Name != "cairn" || init.Capabilities.Tools == nil || init.ProtocolVersion != "2025-06-18" {
		t.Fatalf("initialize = %+v", init)
	}
	c.send(map[string]any{"method": "notifications/initialized"})

	var list struct {
		Tools []struct {
			Name         string
			InputSchema  map[string]any
			OutputSchema map[string]any
		}
	}
	json.Unmarshal(c.call("tools/list", map[string]any{}), &list)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		if tl.InputSchema["type"] != "object" || tl.OutputSchema["type"] != "object" {
			t.Errorf("tool %s: schemas %v / %v", tl.Name, tl.InputSchema, tl.OutputSchema)
		}
	}
	for _, want := range []string{"checkpoint", "resume", "fork", "show", "log", "diff", "ask_for_approval"} {
		if !slices.Contains(names, want) {
			t.Fatalf("tools/list lacks %s: %v", want, names)
		}
	}

	doc := `{"goal":"write a report","notes":[1.0,2.50],"done":false}`
	cp := c.tool("checkpoint", map[string]any{"session": "m", "state_json": doc, "record": map[string]any{"step": "plan"}, "expect": 0})
	if cp["step"] != 1.0 || cp["session"] != "m" {
		t.Fatalf("checkpoint = %v", cp)
	}
	r := c.tool("resume", map[string]any{"session": "m"})
	if r["state_json"] != doc || r["step"] != 1.0 || r["new"] != false {
		t.Fatalf("resume = %v", r)
	}
	f := c.tool("fork", map[string]any{"from": "m@1", "to": "m-alt"})
	if f["session"] != "m-alt" || f["origin"] != "m@1" {
		t.Fatalf("fork = %v", f)
	}
	if got := c.tool("resume", map[string]any{"session": "m-alt"}); got["state_json"] != doc {
		t.Fatalf("resume of the fork = %v", got)
	}
	c.in.Close() // the client hangs up: the server exits 0
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("cairn mcp after EOF: %v\n%s", err, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cairn mcp did not exit after its stdin closed")
	}
	// The steps are in the store for the CLI too.
	if out, _, _ := cli(t, store, "", "show", "m-alt"); out != doc+"\n" {
		t.Fatalf("cairn show m-alt = %q", out)
	}
}

// startMCP starts `cairn mcp` on store and returns a client on its stdio,
// the process (killed when the test ends) and its stderr.
func startMCP(t *testing.T, store string) (*rpcClient, *exec.Cmd, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(cairnBinary(t), "--store", store, "mcp")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return &rpcClient{t: t, in: in, out: bufio.NewReader(out)}, cmd, stderr
}
