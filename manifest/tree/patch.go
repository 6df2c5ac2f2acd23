package tree

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/cairnlog/cairn/internal/jsontext"
)

// ErrPatch reports a JSON Patch that is malformed or does not apply to
// the document.
var ErrPatch = errors.New("invalid patch")

// MaxPatchOps bounds the operations of one patch.
const MaxPatchOps = 10000

// PatchError says which operation of a patch failed and why.
type PatchError struct {
	Op   int    // 1 for the first operation
	Name string // "add", "remove", ...
	Path string
	Msg  string
	// Err is why an operation whose result would pass a bound failed
	// (a *LimitError of Patch's maxBytes, or ErrPatchGrowth), or nil.
	Err error
}

func (e *PatchError) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("patch op %d: %s", e.Op, e.Msg)
	}
	return fmt.Sprintf("patch op %d (%s %s): %s", e.Op, e.Name, e.Path, e.Msg)
}

// Unwrap makes errors.Is(err, ErrPatch) true, and errors.Is(err,
// ErrLimit) or errors.Is(err, ErrPatchGrowth) for an operation refused
// by a bound.
func (e *PatchError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrPatch, e.Err}
	}
	return []error{ErrPatch}
}

// ErrPatchGrowth reports a patch whose copies would make a document
// more than twice as long (see Doc.Patch).
var ErrPatchGrowth = errors.New("one patch may at most double a document")

// patchSlack is how much longer than twice the document and the patch
// together a patch may make a document: a small document may take a few
// copies of itself.
const patchSlack = 1 << 20

// patchBound is how long a patch being applied may make its document
// (see Patch); on is false outside Patch.
type patchBound struct {
	on          bool
	before, ops int   // the lengths of the document before the patch and of the patch
	maxBytes    int64 // 0: none
}

// check says why a document of n bytes passes the bound, or nil.
func (b patchBound) check(n int) error {
	switch {
	case !b.on:
		return nil
	case b.maxBytes > 0 && int64(n) > b.maxBytes:
		return &LimitError{Limit: "MaxBytes", Max: b.maxBytes, What: fmt.Sprintf("the patched document (%d bytes)", n)}
	case n > 2*(b.before+b.ops)+patchSlack:
		return fmt.Errorf("the patched document would be %d bytes, more than twice the %d of the document before the patch and the patch together, and 1 MiB: "+
			"%w (split its copies among several patches)", n, b.before+b.ops, ErrPatchGrowth)
	}
	return nil
}

type patchOp struct {
	Op    string          `json:"op"`
	Path  *string         `json:"path"`
	From  *string         `json:"from"`
	Value json.RawMessage `json:"value"`
}

// Patch stages the document with the RFC 6902 JSON Patch ops applied
// (add, remove, replace, move, copy, test), stores what changed through
// sink and returns the root ref: the result of Build with the patched
// text, without reading or comparing the rest of the document. Each
// operation costs the path to the value it touches and the bytes after
// the change, not the document's size. A patch that fails in any
// operation changes nothing and returns a *PatchError.
//
// The patched document is bounded, as copy can double a document with
// each operation (60 operations of a few bytes would ask for 2^60
// times its size): it may be at most twice as long as the document
// before the patch and the patch together, with 1 MiB to spare
// (ErrPatchGrowth), and at most maxBytes
// (a *LimitError of "MaxBytes"; 0 for no such bound). An operation that
// would pass either bound fails, before it grows the document.
func (d *Doc) Patch(ops []byte, sink Sink, maxBytes int64) (Ref, error) {
	// Decoded in two steps so that an error names the operation and
	// what it wants, never a Go type.
	var raw []json.RawMessage
	if err := json.Unmarshal(ops, &raw); err != nil {
		if !json.Valid(ops) {
			return Ref{}, fmt.Errorf("%w: not JSON: %s", ErrPatch, jsontext.Problem(ops))
		}
		return Ref{}, fmt.Errorf("%w: not a JSON array of operations", ErrPatch)
	}
	if len(raw) > MaxPatchOps {
		return Ref{}, fmt.Errorf("%w: %d operations, more than %d", ErrPatch, len(raw), MaxPatchOps)
	}
	list := make([]patchOp, len(raw))
	for i, r := range raw {
		if err := decodeOp(r, &list[i]); err != nil {
			return Ref{}, &PatchError{Op: i + 1, Msg: err.Error()}
		}
	}
	if d.root == nil {
		return Ref{}, fmt.Errorf("%w: there is no document to patch", ErrPatch)
	}
	d.begin()
	d.bound = patchBound{on: true, before: len(d.text), ops: len(ops), maxBytes: maxBytes}
	defer func() { d.bound = patchBound{} }()
	for i, op := range list {
		if err := d.apply(op); err != nil {
			d.Rollback()
			pe := &PatchError{Op: i + 1, Name: op.Op, Msg: err.Error()}
			if errors.Is(err, ErrLimit) || errors.Is(err, ErrPatchGrowth) {
				pe.Err = err
			}
			if op.Path != nil {
				pe.Path = *op.Path
			}
			if pe.Path == "" && op.Path != nil {
				pe.Path = `""`
			}
			return Ref{}, pe
		}
	}
	return d.build(sink)
}

// decodeOp reads one operation. Its members are op, path, from and
// value spelled exactly so, each once; others are ignored (RFC 6902
// section 4). encoding/json alone would match them in any case and take
// the last of two, which a reader of the first would not apply.
func decodeOp(r json.RawMessage, op *patchOp) error {
	errShape := errors.New("want an object with string members op, path and (as the op needs) from, and a value")
	// r is valid JSON: Patch decoded the list into its elements.
	if t := bytes.TrimLeft(r, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return errShape
	}
	seen := map[string]bool{}
	for _, m := range jsontext.Members(r) {
		var dst any
		switch m.Name {
		case "op":
			dst = &op.Op
		case "path":
			dst = &op.Path
		case "from":
			dst = &op.From
		case "value":
			dst = &op.Value
		default:
			continue
		}
		if seen[m.Name] {
			return fmt.Errorf("member %q is given twice; give each member once", m.Name)
		}
		seen[m.Name] = true
		if err := json.Unmarshal(m.Value, dst); err != nil {
			return errShape
		}
	}
	return nil
}

func (d *Doc) apply(op patchOp) error {
	if op.Path == nil {
		return errors.New("missing path")
	}
	path, err := parsePointer(*op.Path)
	if err != nil {
		return err
	}
	value := func() ([]byte, error) {
		if op.Value == nil {
			return nil, errors.New("missing value")
		}
		v, err := Compact(op.Value)
		if err != nil {
			return nil, fmt.Errorf("value: %v", err)
		}
		return v, nil
	}
	from := func() ([]string, []byte, error) {
		if op.From == nil {
			return nil, nil, errors.New("missing from")
		}
		f, err := parsePointer(*op.From)
		if err != nil {
			return nil, nil, fmt.Errorf("from: %v", err)
		}
		nd, start, err := d.get(f)
		if err != nil {
			return nil, nil, fmt.Errorf("from: %v", err)
		}
		v := bytes.Clone(d.text[start : start+nd.n])
		if nd.c != nd.n {
			v, _ = Compact(v)
		}
		return f, v, nil
	}
	switch op.Op {
	case "add":
		v, err := value()
		if err != nil {
			return err
		}
		return d.add(path, v)
	case "remove":
		return d.remove(path)
	case "replace":
		v, err := value()
		if err != nil {
			return err
		}
		nd, start, err := d.get(path)
		if err != nil {
			return err
		}
		return d.edit(start, start+nd.n, v)
	case "test":
		v, err := value()
		if err != nil {
			return err
		}
		nd, start, err := d.get(path)
		if err != nil {
			return err
		}
		if !jsonEqual(d.text[start:start+nd.n], v) {
			return errors.New("test failed: the value differs")
		}
		return nil
	case "move":
		f, v, err := from()
		if err != nil {
			return err
		}
		if isPrefix(f, path) {
			if len(f) == len(path) {
				return nil
			}
			return errors.New("cannot move a value into itself")
		}
		if err := d.remove(f); err != nil {
			return fmt.Errorf("from: %v", err)
		}
		return d.add(path, v)
	case "copy":
		_, v, err := from()
		if err != nil {
			return err
		}
		return d.add(path, v)
	case "":
		return errors.New("missing op")
	}
	return fmt.Errorf("unknown op %q (want add, remove, replace, move, copy or test)", op.Op)
}

// edit replaces text[at:end] with repl and brings the parse up to date.
// Edits replace a whole value with a valid one, or remove or insert
// whole members, so the text stays valid JSON.
func (d *Doc) edit(at, end int, repl []byte) error {
	oldLen := len(d.text)
	if err := d.bound.check(oldLen - (end - at) + len(repl)); err != nil {
		return err
	}
	span := d.splice(at, end, repl)
	if err := d.reparse(at, oldLen-end, len(d.text)-oldLen, span); err != nil {
		return fmt.Errorf("patched document: %w", err)
	}
	return nil
}

// parsePointer splits an RFC 6901 JSON Pointer into its tokens.
func parsePointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if p[0] != '/' {
		return nil, fmt.Errorf("path %q does not start with '/'", p)
	}
	toks := strings.Split(p[1:], "/")
	for i, t := range toks {
		if !strings.Contains(t, "~") {
			continue
		}
		for j := 0; j < len(t); j++ {
			if t[j] == '~' && (j+1 == len(t) || t[j+1] != '0' && t[j+1] != '1') {
				return nil, fmt.Errorf("path %q: '~' must be followed by 0 or 1", p)
			}
		}
		toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return toks, nil
}

func isPrefix(a, b []string) bool {
	if len(a) > len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// pointerText renders tokens as a JSON Pointer, for errors.
func pointerText(toks []string) string {
	var b strings.Builder
	for _, t := range toks {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1"))
	}
	return b.String()
}

// children returns nd, starting at start, with its children: nd itself
// when it is stored as a node, else a parse of its text.
func (d *Doc) children(nd *jnode, start int) *jnode {
	if nd.open() || nd.kind != '{' && nd.kind != '[' {
		return nd
	}
	p := &incParser{in: d.text[start : start+nd.n], keepKids: true}
	c, _, err := p.doc(nil, 0)
	if err != nil {
		panic(fmt.Sprintf("tree: stored value does not parse: %v", err))
	}
	return c
}

// get returns the value at path.
func (d *Doc) get(path []string) (*jnode, int, error) {
	nd, start := d.root, d.off
	for i, tok := range path {
		c := d.children(nd, start)
		var k int
		switch c.kind {
		case '{':
			if k = memberIndex(c, d.text[start:], tok); k < 0 {
				return nil, 0, notFound(path, i, "no such member")
			}
		case '[':
			idx, err := arrayIndex(tok, len(c.kids), false)
			if err != nil {
				return nil, 0, notFound(path, i, err.Error())
			}
			k = idx
		default:
			return nil, 0, notFound(path, i, pointerOrRoot(path[:i])+" is not an object or array")
		}
		nd, start = c.kids[k], start+c.offs[k]
	}
	return nd, start, nil
}

func pointerOrRoot(toks []string) string {
	if len(toks) == 0 {
		return "the document"
	}
	return pointerText(toks)
}

// notFound words a failed lookup of token i of path.
func notFound(path []string, i int, msg string) error {
	if i == len(path)-1 {
		return errors.New(msg)
	}
	return fmt.Errorf("%s: %s", pointerText(path[:i+1]), msg)
}

// memberIndex returns the index of the value of the last member of
// object c named key; text starts at c.
func memberIndex(c *jnode, text []byte, key string) int {
	found := -1
	for i := 0; i+1 < len(c.kids); i += 2 {
		name, ok := keyBytes(text[c.offs[i] : c.offs[i]+c.kids[i].n])
		if ok && string(name) == key {
			found = i + 1
		}
	}
	return found
}

// arrayIndex parses an array index token for an array of n elements;
// end allows n itself and "-" (the position after the last element).
func arrayIndex(tok string, n int, end bool) (int, error) {
	if tok == "-" {
		if end {
			return n, nil
		}
		return 0, fmt.Errorf("no element \"-\" (the array has %d)", n)
	}
	if tok == "" || len(tok) > 1 && tok[0] == '0' || strings.TrimLeft(tok, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not an array index", tok)
	}
	i, err := strconv.Atoi(tok)
	if err != nil || i > n || i == n && !end {
		return 0, fmt.Errorf("no element %s (the array has %d)", tok, n)
	}
	return i, nil
}

// add implements the add operation with value v (compact JSON).
func (d *Doc) add(path []string, v []byte) error {
	if len(path) == 0 {
		return d.edit(d.off, d.off+d.root.n, v)
	}
	pnd, pstart, err := d.get(path[:len(path)-1])
	if err != nil {
		return err
	}
	c := d.children(pnd, pstart)
	tok := path[len(path)-1]
	closeAt := pstart + c.n - 1
	switch c.kind {
	case '{':
		if k := memberIndex(c, d.text[pstart:], tok); k >= 0 {
			at := pstart + c.offs[k]
			return d.edit(at, at+c.kids[k].n, v)
		}
		member := append(append(quoteKey(tok), ':'), v...)
		if len(c.kids) > 0 {
			member = append([]byte{','}, member...)
		}
		return d.edit(closeAt, closeAt, member)
	case '[':
		i, err := arrayIndex(tok, len(c.kids), true)
		if err != nil {
			return err
		}
		switch {
		case i < len(c.kids):
			at := pstart + c.offs[i]
			return d.edit(at, at, append(v, ','))
		case len(c.kids) > 0:
			return d.edit(closeAt, closeAt, append([]byte{','}, v...))
		default:
			return d.edit(closeAt, closeAt, v)
		}
	}
	return fmt.Errorf("%s is not an object or array", pointerOrRoot(path[:len(path)-1]))
}

// remove implements the remove operation.
//
// A document may name an object's member more than once (JSON allows it,
// and a state is stored as given); a pointer reads the last of them, as
// most JSON readers do. Removing it removes every member of that name,
// so that no earlier one shows through.
func (d *Doc) remove(path []string) error {
	if err := d.removeOne(path); err != nil {
		return err
	}
	for {
		pnd, pstart, err := d.get(path[:len(path)-1])
		if err != nil {
			return err
		}
		c := d.children(pnd, pstart)
		if c.kind != '{' || memberIndex(c, d.text[pstart:], path[len(path)-1]) < 0 {
			return nil
		}
		if err := d.removeOne(path); err != nil {
			return err
		}
	}
}

// removeOne removes the element path names.
func (d *Doc) removeOne(path []string) error {
	if len(path) == 0 {
		return errors.New("cannot remove the whole document")
	}
	pnd, pstart, err := d.get(path[:len(path)-1])
	if err != nil {
		return err
	}
	c := d.children(pnd, pstart)
	tok := path[len(path)-1]
	var first, last int // children of the element: key and value, or the value
	switch c.kind {
	case '{':
		k := memberIndex(c, d.text[pstart:], tok)
		if k < 0 {
			return errors.New("no such member")
		}
		first, last = k-1, k
	case '[':
		i, err := arrayIndex(tok, len(c.kids), false)
		if err != nil {
			return err
		}
		first, last = i, i
	default:
		return fmt.Errorf("%s is not an object or array", pointerOrRoot(path[:len(path)-1]))
	}
	startOf := func(i int) int { return pstart + c.offs[i] }
	endOf := func(i int) int { return pstart + c.offs[i] + c.kids[i].n }
	switch {
	case len(c.kids) == last-first+1: // the only element
		return d.edit(startOf(first), endOf(last), nil)
	case last+1 < len(c.kids): // up to the next element
		return d.edit(startOf(first), startOf(last+1), nil)
	default: // from the end of the previous element
		return d.edit(endOf(first-1), endOf(last), nil)
	}
}

// quoteKey returns key as a JSON string token.
func quoteKey(key string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(key)
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'})
}

// jsonEqual reports whether two JSON texts are the same value (RFC 6902
// "test"): objects equal regardless of member order, numbers by value.
func jsonEqual(a, b []byte) bool {
	if ca, err := Compact(a); err == nil && bytes.Equal(ca, b) {
		return true
	}
	va, err1 := decodeNumbers(a)
	vb, err2 := decodeNumbers(b)
	return err1 == nil && err2 == nil && valueEqual(va, vb)
}

func decodeNumbers(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func valueEqual(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, v := range a {
			w, ok := b[k]
			if !ok || !valueEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !valueEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		if a == b {
			return true
		}
		if len(a) > 64 || len(b) > 64 { // bound the arithmetic
			return false
		}
		ra, ok1 := new(big.Rat).SetString(string(a))
		rb, ok2 := new(big.Rat).SetString(string(b))
		return ok1 && ok2 && ra.Cmp(rb) == 0
	default:
		return a == b
	}
}
