package mcpserver

import (
	"context"
	"strconv"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas/mem"
)

// TestForkHistoryTools: below a fork's first step, step N of the fork is
// the step at N in its history for every tool that names a step (resume,
// show, log, diff, fork), also once the session it was forked from is
// removed; the answer is that step as written (session a, its own id).
// Each tool refused it, naming a@N, which after the removal nothing read.
func TestForkHistoryTools(t *testing.T) {
	ctx := context.Background()
	ws := cairn.OpenStore(mem.New())
	a, _ := ws.Session("a")
	for i := 1; i <= 5; i++ {
		if _, err := a.Commit(ctx, cairn.JSON([]byte(`{"i":`+strconv.Itoa(i)+`}`)), cairn.CommitOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	a2, _ := a.Step(ctx, 2)
	a3, _ := a.Step(ctx, 3)
	if _, err := ws.Fork(ctx, a3, "b"); err != nil {
		t.Fatal(err)
	}
	b, _ := ws.Session("b")
	if _, err := b.Commit(ctx, cairn.JSON([]byte(`{"i":9}`)), cairn.CommitOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Remove(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, ws)

	var r ResumeOut
	call(t, cs, ToolResume, map[string]any{"session": "b", "step": 2}, &r, false)
	if r.Session != "a" || r.Step != 2 || r.ID != a2.ID.String() || r.StateJSON != `{"i":2}` {
		t.Errorf("resume b at step 2 = %+v; want a@2", r)
	}
	var s StepState
	call(t, cs, ToolShow, map[string]any{"ref": "b@1"}, &s, false)
	if s.Session != "a" || s.Step != 1 || s.StateJSON != `{"i":1}` {
		t.Errorf("show b@1 = %+v; want a@1", s)
	}
	var l LogOut
	call(t, cs, ToolLog, map[string]any{"ref": "b@2"}, &l, false)
	if len(l.Steps) != 2 || l.Steps[0].Session != "a" || l.Steps[1].Step != 1 {
		t.Errorf("log b@2 = %+v; want a@2, a@1", l)
	}
	var d DiffOut
	call(t, cs, ToolDiff, map[string]any{"a": "b@1", "b": "b@2"}, &d, false)
	if len(d.Changes) != 1 {
		t.Errorf("diff b@1 b@2 = %+v; want one change", d)
	}
	var f StepInfo
	call(t, cs, ToolFork, map[string]any{"from": "b@2", "to": "c"}, &f, false)
	if f.Session != "c" || f.Step != 2 || f.Origin != "a@2" || f.Parent == "" {
		t.Errorf("fork b@2 to c = %+v; want c@2, a fork of a@2", f)
	}
}
