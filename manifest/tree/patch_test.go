package tree_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/manifest/tree"
)

// The reference JSON Patch below works on jv values, independently of
// the tree package, so that Patch can be checked against BuildJSON of
// the patched document.

func (v *jv) clone() *jv {
	c := *v
	c.keys = slices.Clone(v.keys)
	c.kids = make([]*jv, len(v.kids))
	for i, k := range v.kids {
		c.kids[i] = k.clone()
	}
	return &c
}

func keyName(raw string) string {
	var s string
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		panic(err)
	}
	return s
}

func keyToken(name string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(name)
	return strings.TrimSuffix(b.String(), "\n")
}

// lookup returns the index of tok in container c (the last member of
// that name), or -1; end allows the position after an array's end.
func (c *jv) lookup(tok string, end bool) int {
	if c.obj {
		found := -1
		for i, k := range c.keys {
			if keyName(k) == tok {
				found = i
			}
		}
		return found
	}
	if tok == "-" && end {
		return len(c.kids)
	}
	i, err := strconv.Atoi(tok)
	if err != nil || tok != strconv.Itoa(i) || i < 0 || i > len(c.kids) || i == len(c.kids) && !end {
		return -1
	}
	return i
}

func splitPtr(p string) []string {
	if p == "" {
		return nil
	}
	toks := strings.Split(p[1:], "/")
	for i, t := range toks {
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks
}

// walk returns the container holding the last token of path.
func (v *jv) walk(path []string) *jv {
	cur := v
	for _, t := range path[:len(path)-1] {
		if cur.scalar != "" {
			return nil
		}
		i := cur.lookup(t, false)
		if i < 0 {
			return nil
		}
		cur = cur.kids[i]
	}
	if cur.scalar != "" {
		return nil
	}
	return cur
}

type refOp struct {
	op, path, from string
	value          *jv
}

var errRef = errors.New("reference patch fails")

func refGet(root *jv, path []string) *jv {
	if len(path) == 0 {
		return root
	}
	c := root.walk(path)
	if c == nil {
		return nil
	}
	i := c.lookup(path[len(path)-1], false)
	if i < 0 {
		return nil
	}
	return c.kids[i]
}

func refAdd(root **jv, path []string, v *jv) error {
	if len(path) == 0 {
		*root = v
		return nil
	}
	c := (*root).walk(path)
	if c == nil {
		return errRef
	}
	tok := path[len(path)-1]
	if c.obj {
		if i := c.lookup(tok, false); i >= 0 {
			c.kids[i] = v
		} else {
			c.kids, c.keys = append(c.kids, v), append(c.keys, keyToken(tok))
		}
		return nil
	}
	i := c.lookup(tok, true)
	if i < 0 {
		return errRef
	}
	c.kids, c.keys = slices.Insert(c.kids, i, v), slices.Insert(c.keys, i, "")
	return nil
}

func refRemove(root *jv, path []string) error {
	if len(path) == 0 {
		return errRef
	}
	c := root.walk(path)
	if c == nil {
		return errRef
	}
	i := c.lookup(path[len(path)-1], false)
	if i < 0 {
		return errRef
	}
	for ; i >= 0; i = c.lookup(path[len(path)-1], false) {
		c.kids, c.keys = slices.Delete(c.kids, i, i+1), slices.Delete(c.keys, i, i+1)
		if !c.obj {
			break
		}
	}
	return nil
}

func refApply(root *jv, ops []refOp) (*jv, error) {
	root = root.clone()
	for _, op := range ops {
		path := splitPtr(op.path)
		switch op.op {
		case "add":
			if err := refAdd(&root, path, op.value.clone()); err != nil {
				return nil, err
			}
		case "remove":
			if err := refRemove(root, path); err != nil {
				return nil, err
			}
		case "replace":
			if refGet(root, path) == nil {
				return nil, errRef
			}
			if len(path) == 0 {
				root = op.value.clone()
				continue
			}
			c := root.walk(path)
			c.kids[c.lookup(path[len(path)-1], false)] = op.value.clone()
		case "test":
			got := refGet(root, path)
			if got == nil || !bytes.Equal(got.text(nil), op.value.text(nil)) {
				return nil, errRef
			}
		case "move", "copy":
			from := splitPtr(op.from)
			v := refGet(root, from)
			if v == nil {
				return nil, errRef
			}
			v = v.clone()
			if op.op == "move" {
				if slices.Equal(from, path) {
					continue
				}
				if len(from) < len(path) && slices.Equal(from, path[:len(from)]) {
					return nil, errRef
				}
				if err := refRemove(root, from); err != nil {
					return nil, err
				}
			}
			if err := refAdd(&root, path, v); err != nil {
				return nil, err
			}
		}
	}
	return root, nil
}

func escTok(t string) string {
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}

// randomPath returns the pointer of a random value in v (or of a missing
// one now and then), and whether it points at an existing value.
func randomPath(r *rand.Rand, v *jv, forAdd bool) string {
	var b strings.Builder
	cur := v
	for cur.scalar == "" && len(cur.kids) > 0 && r.IntN(4) != 0 {
		i := r.IntN(len(cur.kids))
		if cur.obj {
			b.WriteString("/" + escTok(keyName(cur.keys[i])))
		} else {
			b.WriteString("/" + strconv.Itoa(i))
		}
		cur = cur.kids[i]
	}
	if forAdd && cur.scalar == "" {
		switch {
		case cur.obj:
			b.WriteString("/" + escTok(keyName(genKey(r))))
		case r.IntN(2) == 0:
			b.WriteString("/-")
		default:
			b.WriteString("/" + strconv.Itoa(r.IntN(len(cur.kids)+1)))
		}
	}
	if r.IntN(25) == 0 {
		b.WriteString([]string{"/nope", "/99999", "/-", "/01"}[r.IntN(4)])
	}
	return b.String()
}

func randomOps(r *rand.Rand, v *jv) []refOp {
	var ops []refOp
	for range 1 + r.IntN(4) {
		var op refOp
		switch k := r.IntN(10); {
		case k < 4:
			op = refOp{op: "add", path: randomPath(r, v, true), value: genValue(r, 3)}
		case k < 6:
			op = refOp{op: "remove", path: randomPath(r, v, false)}
		case k < 8:
			op = refOp{op: "replace", path: randomPath(r, v, false), value: genValue(r, 3)}
		case k < 9:
			op = refOp{op: []string{"move", "copy"}[r.IntN(2)], from: randomPath(r, v, false), path: randomPath(r, v, true)}
		default:
			p := randomPath(r, v, false)
			op = refOp{op: "test", path: p, value: genScalar(r)}
			if got := refGet(v, splitPtr(p)); got != nil && r.IntN(2) == 0 {
				op.value = got.clone()
			}
		}
		ops = append(ops, op)
	}
	return ops
}

func encodeOps(ops []refOp) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, op := range ops {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"op":%q,"path":%s`, op.op, keyToken(op.path))
		if op.from != "" || op.op == "move" || op.op == "copy" {
			fmt.Fprintf(&b, `,"from":%s`, keyToken(op.from))
		}
		if op.value != nil {
			b.WriteString(`,"value":`)
			op.value.render(&b, nil)
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.Bytes()
}

// patchStep applies ops both ways and checks the results agree; it
// returns the new document.
func (d *differ) patchStep(v *jv, ops []refOp) *jv {
	t := d.t
	t.Helper()
	want, rerr := refApply(v, ops)
	enc := encodeOps(ops)
	inc := &seqSink{store: newMemStore()}
	got, err := d.doc.Patch(enc, inc, 0)
	if rerr == nil && errors.Is(err, tree.ErrPatchGrowth) {
		// Copies past the bound on one patch's growth: refused whole.
		if n := len(want.text(nil)); n <= 2*(len(d.prev)+len(enc))+1<<20 {
			t.Fatalf("Patch %.200s refused as growing the document too much, though it makes %d bytes of %d: %v", enc, n, len(d.prev), err)
		}
		if !bytes.Equal(d.doc.Text(), d.prev) {
			t.Fatalf("a refused patch changed the document")
		}
		return v
	}
	if rerr != nil {
		if err == nil {
			t.Fatalf("Patch %s succeeded, the reference fails", enc)
		}
		var pe *tree.PatchError
		if !errors.As(err, &pe) || !errors.Is(err, tree.ErrPatch) {
			t.Fatalf("Patch error %v is not a PatchError", err)
		}
		if !bytes.Equal(d.doc.Text(), d.prev) {
			t.Fatalf("a failed patch changed the document")
		}
		return v
	}
	if err != nil {
		t.Fatalf("Patch %s: %v", enc, err)
	}
	text := want.text(nil)
	full := &seqSink{store: newMemStore()}
	wantRef, err := tree.BuildJSON(text, full)
	if err != nil {
		t.Fatalf("reference result %.200q: %v", text, err)
	}
	if !got.Equal(wantRef) {
		if g := d.doc.Text(); !bytes.Equal(g, text) {
			i := 0
			for i < len(g) && i < len(text) && g[i] == text[i] {
				i++
			}
			t.Logf("text differs at %d: got %.80q want %.80q", i, g[max(0, i-40):], text[max(0, i-40):])
		}
		t.Fatalf("Patch %s: root %v, full build of the patched document %v", enc, got, wantRef)
	}
	if g, w := newBlobs(inc.seq, d.base), newBlobs(full.seq, d.base); !slices.Equal(g, w) {
		t.Fatalf("Patch adds %d blobs, full build %d", len(g), len(w))
	}
	d.doc.Commit()
	if !bytes.Equal(d.doc.Text(), text) {
		t.Fatalf("patched text %.300q, want %.300q", d.doc.Text(), text)
	}
	d.prev = bytes.Clone(text)
	for id, raw := range full.store.blobs {
		d.base.blobs[id] = raw
	}
	return want
}

// TestPatchMatchesBuildJSON: random patches of random documents store
// exactly what handing over the patched document stores.
func TestPatchMatchesBuildJSON(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		r := rand.New(rand.NewPCG(seed, 13))
		d := newDiffer(t)
		v := genDoc(r)
		d.step(v.text(nil))
		for range 40 {
			v = d.patchStep(v, randomOps(r, v))
		}
		// Then the whole document again, as a caller may mix both.
		v.edit(r)
		d.step(v.text(nil))
	}
}

// FuzzPatch: Patch(doc, ops) stores what BuildJSON(apply(doc, ops))
// stores, for random documents and patches.
func FuzzPatch(f *testing.F) {
	f.Add(uint64(1), uint64(2))
	f.Add(uint64(7), uint64(99))
	f.Fuzz(func(t *testing.T, docSeed, opSeed uint64) {
		r := rand.New(rand.NewPCG(docSeed, 17))
		d := newDiffer(t)
		v := genDoc(r)
		d.step(v.text(nil))
		ro := rand.New(rand.NewPCG(opSeed, 19))
		for range 8 {
			v = d.patchStep(v, randomOps(ro, v))
		}
	})
}

func TestPatchErrors(t *testing.T) {
	doc := []byte(`{"messages":[1,2,3],"plan":{"a":1},"s":"x"}`)
	cases := []struct{ ops, want string }{
		{`[{"op":"remove","path":"/messages/7"}]`, `patch op 1 (remove /messages/7): no element 7 (the array has 3)`},
		{`[{"op":"add","path":"/plan/b","value":2},{"op":"remove","path":"/nope"}]`, `patch op 2 (remove /nope): no such member`},
		{`[{"op":"replace","path":"/s/x","value":1}]`, `patch op 1 (replace /s/x): /s is not an object or array`},
		{`[{"op":"add","path":"/a/b/c","value":1}]`, `patch op 1 (add /a/b/c): /a: no such member`},
		{`[{"op":"add","path":"/messages/-"}]`, `patch op 1 (add /messages/-): missing value`},
		{`[{"op":"add","path":"/x","value":{]}}]`, `invalid patch: not JSON: at byte 35: invalid character ']' looking for beginning of object key string`},
		{"\ufeff[]", `invalid patch: not JSON: at byte 1: it starts with a byte order mark (U+FEFF)`},
		{`[{"op":"frob","path":"/x"}]`, `patch op 1 (frob /x): unknown op "frob" (want add, remove, replace, move, copy or test)`},
		{`[{"op":"test","path":"/s","value":"y"}]`, `patch op 1 (test /s): test failed: the value differs`},
		{`[{"op":"move","from":"/plan","path":"/plan/a/b"}]`, `patch op 1 (move /plan/a/b): cannot move a value into itself`},
		{`[{"op":"remove","path":"messages"}]`, `patch op 1 (remove messages): path "messages" does not start with '/'`},
		{`[{"op":"remove","path":""}]`, `patch op 1 (remove ""): cannot remove the whole document`},
		{`{"op":"remove"}`, `invalid patch: not a JSON array of operations`},
		{`[5]`, `patch op 1: want an object with string members op, path`},
		{`[{"op":"add","path":"/x","value":1},{"op":5,"path":"/x"}]`, `patch op 2: want an object with string members op, path`},
	}
	for _, c := range cases {
		d := tree.NewDoc()
		if _, err := d.Build(doc, discard{}); err != nil {
			t.Fatal(err)
		}
		d.Commit()
		_, err := d.Patch([]byte(c.ops), discard{}, 0)
		if err == nil || !errors.Is(err, tree.ErrPatch) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("Patch %s = %v, want %q", c.ops, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "Go ") {
			t.Errorf("Patch %s = %v: names a Go type", c.ops, err)
		}
		if !bytes.Equal(d.Text(), doc) {
			t.Errorf("Patch %s changed the document to %s", c.ops, d.Text())
		}
	}
}

func TestPatchOps(t *testing.T) {
	doc := `{"a":[1,2],"b":{"c":"d"},"n":1.0}`
	cases := []struct{ ops, want string }{
		{`[{"op":"add","path":"/a/-","value":3}]`, `{"a":[1,2,3],"b":{"c":"d"},"n":1.0}`},
		{`[{"op":"add","path":"/a/0","value":0}]`, `{"a":[0,1,2],"b":{"c":"d"},"n":1.0}`},
		{`[{"op":"remove","path":"/a/1"},{"op":"remove","path":"/a/0"}]`, `{"a":[],"b":{"c":"d"},"n":1.0}`},
		{`[{"op":"remove","path":"/b"}]`, `{"a":[1,2],"n":1.0}`},
		{`[{"op":"remove","path":"/n"}]`, `{"a":[1,2],"b":{"c":"d"}}`},
		{`[{"op":"replace","path":"","value":[]}]`, `[]`},
		{`[{"op":"add","path":"/b/e~1f","value":{"x" : 1}}]`, `{"a":[1,2],"b":{"c":"d","e/f":{"x":1}},"n":1.0}`},
		{`[{"op":"move","from":"/b/c","path":"/a/-"}]`, `{"a":[1,2,"d"],"b":{},"n":1.0}`},
		{`[{"op":"copy","from":"/a","path":"/b/a"}]`, `{"a":[1,2],"b":{"c":"d","a":[1,2]},"n":1.0}`},
		{`[{"op":"test","path":"/n","value":1},{"op":"test","path":"/b","value":{"c":"d"}}]`, doc},
	}
	for _, c := range cases {
		d := tree.NewDoc()
		if _, err := d.Build([]byte(doc), discard{}); err != nil {
			t.Fatal(err)
		}
		d.Commit()
		s := newMemStore()
		ref, err := d.Patch([]byte(c.ops), s, 0)
		if err != nil {
			t.Errorf("Patch %s: %v", c.ops, err)
			continue
		}
		if !strings.Contains(c.ops, "test") {
			if got := readJSON(t, s, ref); string(got) != c.want {
				t.Errorf("Patch %s = %s, want %s", c.ops, got, c.want)
			}
		}
		if got := d.Text(); string(got) != c.want {
			t.Errorf("Patch %s: text %s, want %s", c.ops, got, c.want)
		}
	}
}

// BenchmarkDocPatch: one step of the append workload as a JSON Patch (a
// message appended, the scratchpad replaced), at three document sizes;
// the time should not grow with the size.
func BenchmarkDocPatch(b *testing.B) {
	for _, size := range []int{10 << 10, 1 << 20, 10 << 20} {
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			doc, _ := sizedDoc(size)
			d := tree.NewDoc()
			if _, err := d.Build(doc, discard{}); err != nil {
				b.Fatal(err)
			}
			d.Commit()
			add := []byte(fmt.Sprintf(`[{"op":"add","path":"/messages/-","value":{"role":"tool","content":%q}},{"op":"replace","path":"/scratchpad","value":"next"}]`, seededText(300, 1)))
			cpu := startCPU()
			for b.Loop() {
				if _, err := d.Patch(add, discard{}, 0); err != nil {
					b.Fatal(err)
				}
				d.Commit()
			}
			cpu.report(b)
		})
	}
}

// TestPatchCopyBounded: copy doubles a document with each operation, so
// a patch of a few hundred bytes could ask for exabytes (60 copies of
// the whole document ran `cairn commit --patch` out of a 24 GiB
// machine's memory). One patch may at most double the document and
// itself together, and never pass maxBytes; the refused patch changes
// nothing, and the operation that would pass the bound is named.
func TestPatchCopyBounded(t *testing.T) {
	doc := []byte(`{"a":"` + strings.Repeat("x", 100_000) + `"}`)
	var ops []string
	for i := range 60 {
		ops = append(ops, fmt.Sprintf(`{"op":"copy","from":"","path":"/k%d"}`, i))
	}
	patch := []byte("[" + strings.Join(ops, ",") + "]")
	for _, tc := range []struct {
		maxBytes int64
		want     string
		limit    bool
	}{
		{0, "patch op 4 (copy /k3): the patched document would be 1600218 bytes, more than twice the 102279 of the document before the patch and the patch together, and 1 MiB: one patch may at most double a document", false},
		{150_000, "patch op 1 (copy /k0): the patched document (200022 bytes): limit exceeded: more than 150000 bytes", true},
	} {
		d := tree.NewDoc()
		if _, err := d.Build(doc, discard{}); err != nil {
			t.Fatal(err)
		}
		d.Commit()
		before, _ := d.Root()
		_, err := d.Patch(patch, discard{}, tc.maxBytes)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !errors.Is(err, tree.ErrPatch) ||
			errors.Is(err, tree.ErrLimit) != tc.limit || errors.Is(err, tree.ErrPatchGrowth) == tc.limit {
			t.Fatalf("maxBytes %d: Patch = %v; want a patch error starting %q (a limit error: %v)", tc.maxBytes, err, tc.want, tc.limit)
		}
		if after, _ := d.Root(); !after.Equal(before) {
			t.Fatalf("maxBytes %d: the refused patch changed the document", tc.maxBytes)
		}
	}
	// A copy of the whole document, once, is within the bound.
	d := tree.NewDoc()
	if _, err := d.Build(doc, discard{}); err != nil {
		t.Fatal(err)
	}
	d.Commit()
	if _, err := d.Patch([]byte(`[{"op":"copy","from":"","path":"/all"}]`), discard{}, 0); err != nil {
		t.Fatalf("one copy of the whole document: %v", err)
	}
}
