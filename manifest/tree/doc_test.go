package tree_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/internal/rusage"
	"github.com/cairnlog/cairn/internal/workload"
	"github.com/cairnlog/cairn/manifest/tree"
)

// seqSink records the order of puts and forwards them to a store.
type seqSink struct {
	store *memStore
	seq   []cas.ID
}

func (s *seqSink) Put(id cas.ID, raw []byte) error {
	s.seq = append(s.seq, id)
	return s.store.Put(id, raw)
}

// newBlobs returns the ids of seq that base lacks, each once, in order:
// what a commit's pack holds when base is everything stored before.
func newBlobs(seq []cas.ID, base *memStore) []cas.ID {
	seen := map[cas.ID]bool{}
	var out []cas.ID
	for _, id := range seq {
		if !base.has(id) && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// differ checks Doc.Build against BuildJSON over successive versions of
// a document: the same result, the same root, the same new blobs in the
// same order. base holds every blob stored before.
type differ struct {
	t     testing.TB
	doc   *tree.Doc
	base  *memStore
	prev  []byte // the last version committed
	puts  int    // puts of the last incremental build
	again int    // of which blobs stored before
}

func newDiffer(t testing.TB) *differ {
	return &differ{t: t, doc: tree.NewDoc(), base: newMemStore()}
}

// step builds version v both ways and commits it; it reports whether v
// was valid JSON.
func (d *differ) step(v []byte) bool {
	t := d.t
	t.Helper()
	full := &seqSink{store: newMemStore()}
	want, werr := tree.BuildJSON(v, full)
	inc := &seqSink{store: newMemStore()}
	got, gerr := d.doc.Build(v, inc)
	d.puts, d.again = len(inc.seq), 0
	for _, id := range inc.seq {
		if d.base.has(id) {
			d.again++
		}
	}
	// Valid JSON nested too deep is ErrTooDeep; invalid JSON is
	// ErrSyntax, or ErrTooDeep if a parser meets the depth first.
	wantKind := func(err error) bool { return errors.Is(err, tree.ErrSyntax) || errors.Is(err, tree.ErrTooDeep) }
	if json.Valid(v) {
		wantKind = func(err error) bool { return errors.Is(err, tree.ErrTooDeep) }
	}
	if (werr == nil) != (gerr == nil) || werr != nil && !wantKind(gerr) {
		t.Fatalf("Build error %v, BuildJSON error %v, of %.200q", gerr, werr, v)
	}
	if werr != nil {
		if !bytes.Equal(d.doc.Text(), d.prev) {
			t.Fatalf("a failed Build changed the document")
		}
		return false
	}
	if !got.Equal(want) {
		d.doc.Rollback()
		t.Fatalf("incremental root %v, full build root %v, of %.300q", got, want, v)
	}
	if g, w := newBlobs(inc.seq, d.base), newBlobs(full.seq, d.base); !slices.Equal(g, w) {
		t.Fatalf("incremental build adds %d blobs %v, full build %d %v", len(g), g, len(w), w)
	}
	d.doc.Commit()
	if !bytes.Equal(d.doc.Text(), v) {
		t.Fatalf("doc text %.200q, want %.200q", d.doc.Text(), v)
	}
	d.prev = bytes.Clone(v)
	for id, raw := range full.store.blobs {
		d.base.blobs[id] = raw
	}
	return true
}

// jv is a JSON value with its key order, for generating documents.
type jv struct {
	scalar string // a scalar's text; "" for containers
	obj    bool
	keys   []string
	kids   []*jv
}

func genValue(r *rand.Rand, depth int) *jv {
	if depth > 4 || r.IntN(3) == 0 {
		return genScalar(r)
	}
	v := &jv{obj: r.IntN(2) == 0}
	n := r.IntN(8)
	if depth <= 1 && r.IntN(3) == 0 {
		n = r.IntN(100)
	}
	for i := 0; i < n; i++ {
		v.kids = append(v.kids, genValue(r, depth+1))
		v.keys = append(v.keys, genKey(r))
	}
	return v
}

func genKey(r *rand.Rand) string {
	keys := []string{`"a"`, `"b"`, `"messages"`, `"plan"`, `"k\"q"`, `"\u00e9"`, `"a"`, `""`}
	if r.IntN(4) == 0 {
		return fmt.Sprintf(`"key%d"`, r.IntN(1000))
	}
	return keys[r.IntN(len(keys))]
}

func genScalar(r *rand.Rand) *jv {
	switch r.IntN(8) {
	case 0:
		return &jv{scalar: fmt.Sprint(r.IntN(100000) - 500)}
	case 1:
		return &jv{scalar: []string{"true", "false", "null", "1.5e3", "-0", "0.25"}[r.IntN(6)]}
	case 2:
		return &jv{scalar: fmt.Sprintf("%q", seededText(r.IntN(1200), r.Uint64()))}
	case 3:
		return &jv{scalar: `"a\"b\\c\n"`}
	default:
		return &jv{scalar: fmt.Sprintf("%q", seededText(r.IntN(60), r.Uint64()))}
	}
}

// render writes v; ws, if set, adds white space between tokens.
func (v *jv) render(b *bytes.Buffer, ws *rand.Rand) {
	sp := func() {
		if ws != nil && ws.IntN(3) == 0 {
			b.WriteString([]string{" ", "\n  ", "\t"}[ws.IntN(3)])
		}
	}
	if v.scalar != "" {
		b.WriteString(v.scalar)
		return
	}
	open, closer := byte('['), byte(']')
	if v.obj {
		open, closer = '{', '}'
	}
	b.WriteByte(open)
	for i, k := range v.kids {
		if i > 0 {
			b.WriteByte(',')
		}
		sp()
		if v.obj {
			b.WriteString(v.keys[i])
			sp()
			b.WriteByte(':')
			sp()
		}
		k.render(b, ws)
		sp()
	}
	b.WriteByte(closer)
}

func (v *jv) text(ws *rand.Rand) []byte {
	var b bytes.Buffer
	v.render(&b, ws)
	return b.Bytes()
}

// containers returns v's containers, v first.
func (v *jv) containers() []*jv {
	if v.scalar != "" {
		return nil
	}
	out := []*jv{v}
	for _, k := range v.kids {
		out = append(out, k.containers()...)
	}
	return out
}

// edit makes one random structural edit in v, which must be a container.
// Besides removing, replacing and inserting children it shifts a window
// (drops the first child, appends one), swaps two children (reorders an
// object's members), renames a member, wraps a child in an array or
// unwraps it, and repeats a child (the same subtree twice, which later
// edits change in both places).
func (v *jv) edit(r *rand.Rand) {
	cs := v.containers()
	c := cs[r.IntN(len(cs))]
	n := len(c.kids)
	switch op := r.IntN(11); {
	case op == 6 && n > 0: // shift a window
		c.kids, c.keys = append(c.kids[1:], genValue(r, 3)), append(c.keys[1:], genKey(r))
	case op == 7 && n > 1: // swap
		i, j := r.IntN(n), r.IntN(n)
		c.kids[i], c.kids[j] = c.kids[j], c.kids[i]
		c.keys[i], c.keys[j] = c.keys[j], c.keys[i]
	case op == 8 && n > 0: // rename
		c.keys[r.IntN(n)] = genKey(r)
	case op == 9 && n > 0: // wrap or unwrap
		i := r.IntN(n)
		if k := c.kids[i]; k.scalar == "" && len(k.kids) > 0 && r.IntN(2) == 0 {
			c.kids[i] = k.kids[0]
		} else {
			c.kids[i] = &jv{kids: []*jv{k}, keys: []string{""}}
		}
	case op == 10 && n > 0: // repeat
		at := r.IntN(n + 1)
		c.kids, c.keys = slices.Insert(c.kids, at, c.kids[r.IntN(n)]), slices.Insert(c.keys, at, genKey(r))
	case op == 0 && n > 0: // remove
		i := r.IntN(n)
		c.kids, c.keys = slices.Delete(c.kids, i, i+1), slices.Delete(c.keys, i, i+1)
	case op == 1 && n > 0: // replace
		c.kids[r.IntN(n)] = genValue(r, 3)
	case op == 2 && n > 0: // edit a scalar or append deep down
		i := r.IntN(n)
		if c.kids[i].scalar != "" {
			c.kids[i] = genScalar(r)
		} else {
			c.kids[i].kids = append(c.kids[i].kids, genScalar(r))
			c.kids[i].keys = append(c.kids[i].keys, genKey(r))
		}
	default: // insert or append
		i := n
		if r.IntN(2) == 0 {
			i = r.IntN(n + 1)
		}
		c.kids, c.keys = slices.Insert(c.kids, i, genValue(r, 2)), slices.Insert(c.keys, i, genKey(r))
	}
}

func genDoc(r *rand.Rand) *jv {
	v := &jv{obj: true}
	for i := 0; i < 3+r.IntN(3); i++ {
		v.kids, v.keys = append(v.kids, genValue(r, 1)), append(v.keys, genKey(r))
	}
	// An append-style message list, long enough for several list levels.
	msgs := &jv{}
	for i := 0; i < 150+r.IntN(150); i++ {
		msgs.kids, msgs.keys = append(msgs.kids, genValue(r, 4)), append(msgs.keys, "")
	}
	v.kids, v.keys = append(v.kids, msgs), append(v.keys, `"messages"`)
	return v
}

// TestDocBuildMatchesBuildJSON: structural edits of random documents,
// compact and with white space, build incrementally to exactly what a
// full build gives.
func TestDocBuildMatchesBuildJSON(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		r := rand.New(rand.NewPCG(seed, 7))
		d := newDiffer(t)
		v := genDoc(r)
		var ws *rand.Rand
		if seed%3 == 0 {
			ws = rand.New(rand.NewPCG(seed, 9))
		}
		for step := 0; step < 25; step++ {
			if !d.step(v.text(ws)) {
				t.Fatal("generated document is not valid")
			}
			for range 1 + r.IntN(3) {
				v.edit(r)
			}
		}
	}
}

// TestDocBuildAppend: the append workload, message by message, at every
// list level boundary.
func TestDocBuildAppend(t *testing.T) {
	d := newDiffer(t)
	for n := 1; n <= 400; n++ {
		d.step(appendDocSmall(n))
	}
	// Cost follows the change: one more message puts the message, the
	// list's right spine and the root, not the whole document again.
	s := &seqSink{store: newMemStore()}
	if _, err := d.doc.Build(appendDocSmall(401), s); err != nil {
		t.Fatal(err)
	}
	if len(s.seq) > 8 {
		t.Fatalf("appending one message put %d blobs, want at most 8", len(s.seq))
	}
}

func appendDocSmall(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"messages":[`)
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"role":"assistant","content":"step %d %s"}`, i, seededText(20+i%300, uint64(i)))
	}
	fmt.Fprintf(&b, `],"scratchpad":"thinking about step %d","plan":{"done":%d,"ratio":1.50}}`, n, n)
	return []byte(b.String())
}

// TestDocBuildScatteredEdits: the windowed agent workload changes several
// places of its document every step (the message window drops its first
// message and appends one, a plan task changes, the scratchpad and the
// step are rewritten), so the changed span from the first to the last
// difference covers nearly all of it. A Build must still store only what
// changed: the new message, the scratchpad, the edited task, and the
// nodes above them; not every message and task again.
func TestDocBuildScatteredEdits(t *testing.T) {
	d := newDiffer(t)
	w := workload.NewAppend(workload.AppendOptions{Seed: 5, Window: 8})
	most, again := 0, 0
	for w.Step() < 400 {
		doc, _ := w.Next()
		d.step(doc)
		if w.Step() > 300 {
			most, again = max(most, d.puts), max(again, d.again)
		}
	}
	t.Logf("most puts %d, most again %d", most, again)
	// What changed is one message (its content and node), the message
	// list, the scratchpad, a task, the plan and the root, plus the nodes
	// of the task list up to where its content-defined boundaries agree
	// again (a changed entry can move them for several nodes, which may
	// then be nodes stored in an earlier step). Storing the window of 8
	// messages and the 50 tasks again would be 60 more.
	if most > 24 || again > 8 {
		t.Fatalf("a step of the windowed workload put up to %d blobs, up to %d of them stored before; want at most 24 and 8", most, again)
	}
}

// TestDocBuildShiftedChildren: children that moved inside a changed span
// (an element inserted or deleted before them, a member renamed, a value
// replaced beside them) keep their nodes, at every depth, and the result
// is still what a full build gives.
func TestDocBuildShiftedChildren(t *testing.T) {
	big := func(tag string, i int) string {
		return fmt.Sprintf(`{"id":%d,"text":"%s %s"}`, i, tag, seededText(200, uint64(i)))
	}
	arr := func(tag string, from, to int) string {
		var b []string
		for i := from; i < to; i++ {
			b = append(b, big(tag, i))
		}
		return "[" + strings.Join(b, ",") + "]"
	}
	versions := []string{
		`{"a":` + arr("x", 0, 40) + `,"b":` + arr("y", 0, 40) + `,"n":1}`,
		// Both arrays shift: one drops its first element, the other gains one.
		`{"a":` + arr("x", 1, 40) + `,"b":` + arr("y", 0, 41) + `,"n":2}`,
		// A member inserted before both, one renamed, white space added.
		`{"z":0, "a" : ` + arr("x", 1, 40) + `,"c":` + arr("y", 0, 41) + `,"n":3}`,
		// Nested one level deeper on one side: nothing below may be kept wrongly.
		`{"z":0,"a":[` + arr("x", 1, 40) + `],"c":` + arr("y", 0, 41) + `,"n":12}`,
		`{"z":0,"a":` + arr("x", 1, 40) + `,"c":` + arr("y", 2, 41) + `,"n":1}`,
	}
	d := newDiffer(t)
	for i, v := range versions {
		d.step([]byte(v))
		t.Logf("version %d: %d puts", i, d.puts)
		if i == 1 && d.puts > 12 {
			t.Fatalf("shifting two arrays by one element put %d blobs, want at most 12", d.puts)
		}
	}
}

// TestDocBuildByteEdits: byte-level edits that change how the rest of the
// document parses (a quote that opens a string, a digit that extends a
// number) or break it.
func TestDocBuildByteEdits(t *testing.T) {
	base := appendDocSmall(120)
	cases := []struct {
		at, del int
		ins     string
	}{
		{at: 15, ins: `"`}, {at: 15, ins: `\`}, {at: 16, del: 1}, {at: 100, ins: `","x":"`},
		{at: len(base) - 3, ins: "5"}, {at: len(base) - 4, ins: ".5"}, {at: len(base) - 2, del: 1},
		{at: len(base) - 10, ins: `"],"z":["`}, {at: 13, ins: `1,`}, {at: 13, ins: ` `},
		{at: 0, ins: " "}, {at: len(base), ins: " "}, {at: 1, del: 12},
	}
	for _, c := range cases {
		d := newDiffer(t)
		d.step(base)
		v := slices.Concat(base[:c.at], []byte(c.ins), base[c.at+c.del:])
		valid := d.step(v)
		d.step(base)
		t.Logf("edit %+v: valid %v", c, valid)
	}
}

// TestDocRollback: a rolled back version leaves the document as before.
func TestDocRollback(t *testing.T) {
	d := newDiffer(t)
	d.step(appendDocSmall(50))
	if _, err := d.doc.Build(appendDocSmall(60), discard{}); err != nil {
		t.Fatal(err)
	}
	d.doc.Rollback()
	if got := d.doc.Text(); !bytes.Equal(got, appendDocSmall(50)) {
		t.Fatalf("text after rollback differs")
	}
	d.step(appendDocSmall(55))
	if _, err := d.doc.Build([]byte(`{"a":`), discard{}); !errors.Is(err, tree.ErrSyntax) {
		t.Fatalf("Build of invalid JSON = %v", err)
	}
	d.step(appendDocSmall(56))
}

// FuzzDocBuild: a random document, then random structural and byte-level
// edits; every version builds incrementally to what a full build gives,
// and invalid versions fail as BuildJSON does and change nothing.
func FuzzDocBuild(f *testing.F) {
	f.Add(uint64(1), []byte{0, 1, 2, 3})
	f.Add(uint64(2), []byte("\x05\x10\"\x07\x22\\"))
	f.Add(uint64(3), []byte("\x01\x01\x01\x01\x01\x01\x01\x01"))
	f.Add(uint64(6), []byte{0, 3, 2, 3, 4, 3, 6, 3, 8, 3, 10, 3}) // several edits a version, white space
	f.Add(uint64(9), []byte{0, 2, 0, 3, 1, 0x50, 0, 3, 3, 0xd1})
	f.Fuzz(func(t *testing.T, seed uint64, edits []byte) {
		if len(edits) > 64 {
			edits = edits[:64]
		}
		r := rand.New(rand.NewPCG(seed, 11))
		// White space, for some seeds: the same pattern in each version,
		// so that it shifts with the edits.
		ws := func(int) *rand.Rand { return nil }
		if seed%3 == 0 {
			ws = func(int) *rand.Rand { return rand.New(rand.NewPCG(seed, 13)) }
		}
		d := newDiffer(t)
		v := genDoc(r)
		cur := v.text(ws(0))
		d.step(cur)
		for i := 0; i+1 < len(edits); i += 2 {
			op, arg := edits[i], edits[i+1]
			var next []byte
			if op%2 == 0 {
				// Edits at several places at once.
				for range 1 + int(arg%4) {
					v.edit(r)
				}
				next = v.text(ws(i))
			} else {
				// A byte splice at a position chosen by the fuzzer.
				at := int(op/2) * len(cur) / 128
				del := int(arg % 4)
				if at+del > len(cur) {
					del = len(cur) - at
				}
				ins := []string{`"`, `\`, `,`, `]`, `}`, `1`, ` `, `[`, `{`, `:`, `"a":1,`, ``, `e5`, `.`, `-`, `null`}[arg/16]
				next = slices.Concat(cur[:at], []byte(ins), cur[at+del:])
			}
			if d.step(next) {
				cur = next
			} else {
				d.step(cur)
			}
		}
	})
}

// sizedDoc is the append workload's document at about size bytes.
func sizedDoc(size int) (doc []byte, msgs int) {
	for msgs = 1; ; msgs *= 2 {
		if doc = appendDocSmall(msgs); len(doc) >= size {
			break
		}
	}
	lo, hi := msgs/2, msgs
	for lo < hi {
		mid := (lo + hi) / 2
		if len(appendDocSmall(mid)) < size {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return appendDocSmall(lo), lo
}

// BenchmarkDocBuild: one more message handed over as the whole document,
// at three document sizes; the time should not grow with the size.
func BenchmarkDocBuild(b *testing.B) {
	for _, size := range []int{10 << 10, 1 << 20, 10 << 20} {
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			_, n := sizedDoc(size)
			docs := [2][]byte{appendDocSmall(n), appendDocSmall(n + 1)}
			benchAlternate(b, docs, nil)
		})
	}
}

// BenchmarkDocBuildWindowed: a step of the windowed agent workload, whose
// edits are scattered over the whole document, at two ages of the
// session; the time should follow the change, not the plan's length.
func BenchmarkDocBuildWindowed(b *testing.B) {
	for _, steps := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("step%d", steps), func(b *testing.B) {
			w := workload.NewAppend(workload.AppendOptions{Seed: 1, Window: 8})
			var docs [2][]byte
			for w.Step() < steps+1 {
				docs[0] = docs[1]
				docs[1], _ = w.Next()
			}
			b.SetBytes(int64(len(docs[1])))
			benchAlternate(b, docs, runtime.GC) // not the generator's garbage
		})
	}
}

// benchAlternate builds docs[0], then times steps that build docs[1] and
// docs[0] in turn on the same Doc, CPU time included; before, if set,
// runs once before the timing starts.
func benchAlternate(b *testing.B, docs [2][]byte, before func()) {
	d := tree.NewDoc()
	if _, err := d.Build(docs[0], discard{}); err != nil {
		b.Fatal(err)
	}
	d.Commit()
	if before != nil {
		before()
	}
	i := 1
	cpu := startCPU()
	for b.Loop() {
		if _, err := d.Build(docs[i%2], discard{}); err != nil {
			b.Fatal(err)
		}
		d.Commit()
		i++
	}
	cpu.report(b)
}

// cpuClock measures the process's CPU time (user and system, GC
// included), which a loaded machine does not inflate as it does wall time.
type cpuClock time.Duration

func processCPU() time.Duration { return rusage.SelfCPU() }

func startCPU() cpuClock { return cpuClock(processCPU()) }

// report adds the CPU time per iteration as the metric cpu-ns/op.
func (c cpuClock) report(b *testing.B) {
	b.ReportMetric(float64(processCPU()-time.Duration(c))/float64(b.N), "cpu-ns/op")
}
