package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
)

// Append-workload sizes.
const (
	MinMessage   = 512      // smallest chat message, bytes of text
	MaxMessage   = 8 << 10  // largest ordinary message
	ToolOutput   = 50 << 10 // a large tool output
	ToolEvery    = 20       // one step in ToolEvery (on average) adds a tool output
	MinScratch   = 1 << 10  // scratchpad size range
	MaxScratch   = 2 << 10  //
	initialTasks = 12       // tasks in the first plan
	// PlanWindow is the number of tasks a windowed workload's plan keeps:
	// it drops its oldest task as it drops its oldest message, so a
	// windowed document stays the same size however long the session.
	PlanWindow = 50
)

// AppendOptions configure an Append workload.
type AppendOptions struct {
	Seed uint64
	// Window, if > 0, keeps only the last Window messages and the last
	// PlanWindow tasks in the state.
	Window int
}

// Append is the append workload: see the package comment.
type Append struct {
	opts  AppendOptions
	rng   *rand.Rand
	text  *text
	step  int
	msgs  [][]byte // encoded message objects, the window's only if windowed
	tasks []task   // the plan's tasks, the last PlanWindow only if windowed
	made  int      // tasks made so far: the next task's id is made+1
}

type task struct {
	id     int
	title  []byte
	status string
	enc    []byte // the task's JSON, nil once it changed
}

// json returns the task's JSON object, encoded once per change: the plan
// grows by a task every ten steps or so, and encoding all of it with fmt
// every step was most of the time a long session took to generate.
func (t *task) json() []byte {
	if t.enc == nil {
		t.enc = fmt.Appendf(nil, `{"id":%d,"title":"%s","status":%q}`, t.id, t.title, t.status)
	}
	return t.enc
}

var statuses = []string{"pending", "in_progress", "done", "blocked"}

// NewAppend returns the workload's generator, before its first step.
func NewAppend(opts AppendOptions) *Append {
	rng := rand.New(rand.NewPCG(opts.Seed, 0xa99e4d))
	a := &Append{opts: opts, rng: rng, text: newText(rng)}
	for i := 0; i < initialTasks; i++ {
		a.tasks = append(a.tasks, a.newTask())
	}
	return a
}

func (a *Append) newTask() task {
	a.made++
	return task{id: a.made, title: a.text.appendText(nil, 20+a.rng.IntN(60)), status: "pending"}
}

// Step is the number of the last step Next returned (0 before the first).
func (a *Append) Step() int { return a.step }

// Next advances one step and returns the whole state document and the
// number of bytes that changed since the previous step: the new message,
// the rewritten scratchpad, the edited plan field and the step number (for
// the first step, the whole document). The returned slice is the caller's.
func (a *Append) Next() (doc []byte, changed int) {
	a.step++
	// One new message.
	role, n := "assistant", logUniform(a.rng, MinMessage, MaxMessage)
	switch {
	case a.rng.IntN(ToolEvery) == 0:
		role, n = "tool", ToolOutput
	case a.step%2 == 1:
		role = "user"
	}
	msg := fmt.Appendf(nil, `{"role":%q,"step":%d,"content":"`, role, a.step)
	msg = a.text.appendText(msg, n)
	msg = append(msg, `"}`...)
	a.msgs = append(a.msgs, msg)
	if a.opts.Window > 0 {
		a.msgs = keepLast(a.msgs, a.opts.Window)
	}
	changed = len(msg)
	// A small plan edit.
	switch r := a.rng.IntN(10); {
	case r == 0:
		t := a.newTask()
		a.tasks = append(a.tasks, t)
		if a.opts.Window > 0 {
			a.tasks = keepLast(a.tasks, PlanWindow)
		}
		changed += len(t.title) + 40
	case r < 4:
		t := &a.tasks[a.rng.IntN(len(a.tasks))]
		t.title = a.text.appendText(t.title[:0:0], 20+a.rng.IntN(60))
		t.enc = nil
		changed += len(t.title)
	default:
		t := &a.tasks[a.rng.IntN(len(a.tasks))]
		t.status = statuses[a.rng.IntN(len(statuses))]
		t.enc = nil
		changed += len(t.status)
	}
	// The scratchpad, rewritten.
	scratch := a.text.appendText(nil, a.rng.IntN(MaxScratch-MinScratch+1)+MinScratch)
	changed += len(scratch) + len(strconv.Itoa(a.step))

	doc = make([]byte, 0, a.size()+len(scratch)+256)
	doc = append(doc, `{"messages":[`...)
	for i, m := range a.msgs {
		if i > 0 {
			doc = append(doc, ',')
		}
		doc = append(doc, m...)
	}
	doc = append(doc, `],"scratchpad":"`...)
	doc = append(doc, scratch...)
	doc = append(doc, `","plan":{"goal":"answer the research question","tasks":[`...)
	for i := range a.tasks {
		if i > 0 {
			doc = append(doc, ',')
		}
		doc = append(doc, a.tasks[i].json()...)
	}
	doc = fmt.Appendf(doc, `]},"step":%d}`, a.step)
	if a.step == 1 {
		changed = len(doc)
	}
	return doc, changed
}

// size is the bytes of messages in the window plus a margin for the plan.
func (a *Append) size() int {
	n := 0
	for _, m := range a.msgs {
		n += len(m) + 1
	}
	return n + len(a.tasks)*120
}

// keepLast returns the last n elements of s, the dropped ones cleared. The
// next append past the array's end copies only the kept elements to a new
// array, so a generator that runs for 100,000 steps holds slots for about
// twice its window, not one for every element it ever made.
func keepLast[T any](s []T, n int) []T {
	if len(s) <= n {
		return s
	}
	d := len(s) - n
	clear(s[:d])
	return s[d:]
}

func pow(x, y float64) float64 { return math.Pow(x, y) }
