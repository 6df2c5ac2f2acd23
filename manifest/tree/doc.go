package tree

import (
	"bytes"
	"slices"
	"sort"
)

// Doc is a JSON document held by its writer between commits: its text,
// its parse, and the ref of every subtree as last stored. Handing it the
// next version of the document (Build) or a JSON Patch (Patch) re-parses
// and re-stores only the subtrees whose bytes changed; every other
// subtree keeps its ref without being read or hashed again. The result
// is always the one BuildJSON gives for the same text: the same root and
// the same new blobs, put in the same order.
//
// A Build or Patch is staged: Commit keeps it, Rollback restores the
// document as it was before. A Doc is not safe for concurrent use.
type Doc struct {
	text []byte
	root *jnode // nil: no document yet
	off  int    // offset of root in text

	staged bool
	undo   []splice
	was    struct {
		root *jnode
		off  int
	}
}

// jnode is one parsed JSON value. Its position lives in its parent (offs),
// so a subtree that moves when an earlier part of the document changes
// keeps its node. Nodes are never changed once their ref is built: a new
// version of the document shares the nodes of its unchanged subtrees.
type jnode struct {
	n, c int  // raw and compact length
	kind byte // '{', '[', '"', 'n' (number) or 'l' (true, false, null)
	// Containers stored as nodes (compact text longer than
	// SmallContainer) keep their children, objects alternating key and
	// value; offs holds each child's offset from the container's start.
	kids []*jnode
	offs []int
	kc   int // the children's compact length
	ref  Ref
	// built says ref is set. list, for an array stored as a list, is the
	// list as last built: from this node once built, else from the node
	// it replaces, which Build updates instead of starting over.
	built bool
	list  *listState
	// front and back count the children at each end that are those of
	// list (the same nodes, built): only the others need building.
	front, back int
}

// open reports whether a container is stored as a node, with children.
func (n *jnode) open() bool { return n.kids != nil }

// splice is an undo record: text[at:end] replaced old.
type splice struct {
	at, end int
	old     []byte
}

// NewDoc returns an empty Doc: its first Build stores the whole document.
func NewDoc() *Doc { return &Doc{} }

// Root returns the root ref of the committed document; ok is false if
// there is none.
func (d *Doc) Root() (ref Ref, ok bool) {
	if d.root == nil || !d.root.built || d.staged {
		return Ref{}, false
	}
	return d.root.ref, true
}

// Text returns the document's text. It is valid until the next call on d.
func (d *Doc) Text() []byte { return d.text }

// Build stages doc as the document's next version, stores what changed
// through sink and returns the root ref. It is equivalent to
// BuildJSON(doc, sink) on a sink that already holds the previous
// version's blobs.
func (d *Doc) Build(doc []byte, sink Sink) (Ref, error) {
	d.begin()
	p, s := 0, 0
	if d.root != nil {
		p = commonPrefix(d.text, doc)
		s = commonSuffix(d.text[p:], doc[p:])
	}
	oldLen := len(d.text)
	span := d.splice(p, oldLen-s, doc[p:len(doc)-s])
	if err := d.reparse(p, s, len(doc)-oldLen, span); err != nil {
		d.Rollback()
		return Ref{}, err
	}
	return d.build(sink)
}

// Commit keeps the staged version.
func (d *Doc) Commit() {
	d.staged, d.undo = false, d.undo[:0]
}

// Rollback restores the document as it was before the staged version.
func (d *Doc) Rollback() {
	if !d.staged {
		return
	}
	for i := len(d.undo) - 1; i >= 0; i-- {
		u := d.undo[i]
		d.text = replace(d.text, u.at, u.end, u.old)
	}
	d.root, d.off = d.was.root, d.was.off
	d.staged, d.undo = false, d.undo[:0]
}

func (d *Doc) begin() {
	d.Rollback()
	d.staged = true
	d.was.root, d.was.off = d.root, d.off
}

// splice replaces text[at:end] with repl, which must not alias the text,
// and returns the bytes it replaced (kept for Rollback).
func (d *Doc) splice(at, end int, repl []byte) []byte {
	if end-at == 0 && len(repl) == 0 {
		return nil
	}
	old := bytes.Clone(d.text[at:end])
	d.undo = append(d.undo, splice{at: at, end: at + len(repl), old: old})
	d.text = replace(d.text, at, end, repl)
	return old
}

// replace returns text with text[at:end] replaced by repl, in place when
// the capacity allows: the cost is the change plus the bytes after it.
func replace(text []byte, at, end int, repl []byte) []byte {
	n := len(text) - (end - at) + len(repl)
	if n > cap(text) {
		out := make([]byte, n, n+n/4+4096)
		copy(out, text[:at])
		copy(out[at:], repl)
		copy(out[at+len(repl):], text[end:])
		return out
	}
	tail := text[end:]
	out := text[:n]
	copy(out[at+len(repl):], tail)
	copy(out[at:], repl)
	return out
}

// reparse brings the parse up to date with the text, whose first p and
// last s bytes are those of the previous version; delta is the change in
// length and span the previous version's bytes between the two.
func (d *Doc) reparse(p, s, delta int, span []byte) error {
	if d.root == nil {
		p, s = 0, 0
	}
	ip := &incParser{in: d.text, p: p, s: s, delta: delta, span: span}
	root, off, err := ip.doc(d.root, d.off)
	if err != nil {
		return err
	}
	d.root, d.off = root, off
	return nil
}

// build stores the subtrees not built yet and returns the root ref.
func (d *Doc) build(sink Sink) (Ref, error) {
	b := &docBuilder{text: d.text, sink: sink}
	ref, err := b.build(d.root, d.off)
	if err != nil {
		d.Rollback()
		return Ref{}, err
	}
	return ref, nil
}

// commonPrefix returns the length of the common prefix of a and b,
// comparing blocks at memory speed before bytes.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	const block = 4096
	i := 0
	for i+block <= n && bytes.Equal(a[i:i+block], b[i:i+block]) {
		i += block
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix returns the length of the common suffix of a and b.
func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	const block = 4096
	i := 0
	for i+block <= n && bytes.Equal(a[len(a)-i-block:len(a)-i], b[len(b)-i-block:len(b)-i]) {
		i += block
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// incParser parses a new version of a document beside the parse of the
// previous one. Both texts agree on their first p and last s bytes, delta
// is the new length minus the old, and span holds the previous version's
// bytes between the two, so that any previous value can be compared with
// the new text.
//
// Each value is parsed beside a hint: the previous value the new one
// stands for (the root for the root; for a child, the previous child its
// container's hint aligns it with). A value whose bytes are those of its
// hint is the hint: its parse depends only on its bytes (and, for a
// number, on the byte after it), and a hint is always at the same depth,
// so the node, its ref and its list state are kept without parsing or
// hashing it again. Comparing costs memory speed; only what differs is
// parsed. Within a container:
//
//   - If it starts where its hint did within the common prefix, its
//     children that end there are kept at once (a binary search).
//   - Once the parser stands, within the common suffix, at the start of a
//     hint's child, that child and all after it are kept: from there the
//     bytes and the parser's state are those of the previous version.
//   - Elsewhere a child is aligned with the hint's children (an array's
//     by index, tolerating one element inserted or deleted; an object's
//     by key), and the longest run of the hint's children whose bytes
//     follow is kept in one comparison. A child that differs is parsed
//     beside the hint's child, so that an edit deep down costs its path.
type incParser struct {
	in       []byte
	pos      int
	depth    int
	p, s     int
	delta    int
	span     []byte
	keepKids bool // keep the children of small containers (for lookups)
}

// commonRun returns how many bytes, up to limit, the previous version's
// text from oldAt has in common with the new text from at.
func (p *incParser) commonRun(oldAt, at, limit int) int {
	limit = min(limit, len(p.in)-at)
	spanEnd := p.p + len(p.span) // where the common suffix starts in the previous version
	run := 0
	for run < limit {
		o, n := oldAt+run, at+run
		var seg []byte
		switch {
		case o < p.p && o == n, o >= spanEnd && o+p.delta == n:
			// The same bytes of the common prefix or suffix.
			end := p.p
			if o >= spanEnd {
				end = len(p.in) - p.delta
			}
			run += min(end-o, limit-run)
			continue
		case o < p.p:
			seg = p.in[o:p.p]
		case o < spanEnd:
			seg = p.span[o-p.p:]
		default:
			seg = p.in[o+p.delta:]
		}
		k := min(len(seg), limit-run)
		c := commonPrefix(seg[:k], p.in[n:n+k])
		run += c
		if c < k {
			break
		}
	}
	return run
}

// oldBytes returns the previous version's text[at:at+n].
func (p *incParser) oldBytes(at, n int) []byte {
	spanEnd := p.p + len(p.span)
	switch {
	case at+n <= p.p:
		return p.in[at : at+n]
	case at >= p.p && at+n <= spanEnd:
		return p.span[at-p.p : at-p.p+n]
	case at >= spanEnd:
		return p.in[at+p.delta : at+p.delta+n]
	}
	out := make([]byte, 0, n)
	for i := at; i < at+n; i++ {
		switch {
		case i < p.p:
			out = append(out, p.in[i])
		case i < spanEnd:
			out = append(out, p.span[i-p.p])
		default:
			out = append(out, p.in[i+p.delta])
		}
	}
	return out
}

// same reports whether old, the previous value at oldAt, is also the
// value at at.
func (p *incParser) same(old *jnode, oldAt, at int) bool {
	end := at + old.n
	if oldAt == at && end < p.p {
		return true
	}
	if p.commonRun(oldAt, at, old.n) < old.n {
		return false
	}
	// A number ends where a byte that cannot continue it follows.
	return old.kind != 'n' || end >= len(p.in) || !isNumByte(p.in[end])
}

func (p *incParser) errorf(format string, a ...any) error {
	return (&jsonParser{pos: p.pos}).errorf(format, a...)
}

func (p *incParser) ws() {
	for p.pos < len(p.in) {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *incParser) doc(old *jnode, oldOff int) (*jnode, int, error) {
	p.ws()
	off := p.pos
	root, err := p.value(old, oldOff)
	if err != nil {
		return nil, 0, err
	}
	p.ws()
	if p.pos != len(p.in) {
		return nil, 0, p.errorf("unexpected data after the document")
	}
	return root, off, nil
}

// reusable reports whether old, the previous value starting at start, is
// also the value starting there now, knowing only where the common prefix
// ends. It is monotonic over the children of a container.
func (p *incParser) reusable(old *jnode, start int) bool {
	end := start + old.n
	if end != p.p {
		return end < p.p
	}
	// A number ends where a byte that cannot continue it follows.
	return old.kind != 'n' || end >= len(p.in) || !isNumByte(p.in[end])
}

func isNumByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// value parses the value at p.pos; old, if not nil, is its hint, the
// previous value at oldAt.
func (p *incParser) value(old *jnode, oldAt int) (*jnode, error) {
	if p.pos >= len(p.in) {
		return nil, p.errorf("unexpected end of input")
	}
	if old != nil && p.same(old, oldAt, p.pos) {
		p.pos += old.n
		return old, nil
	}
	start := p.pos
	switch c := p.in[p.pos]; {
	case c == '{' || c == '[':
		if old != nil && (old.kind != c || !old.open()) {
			old = nil
		}
		return p.container(c, old, oldAt)
	case c == '"':
		if err := p.str(); err != nil {
			return nil, err
		}
		n := p.pos - start
		return &jnode{n: n, c: n, kind: '"'}, nil
	case c == '-' || c >= '0' && c <= '9':
		if err := p.number(); err != nil {
			return nil, err
		}
		n := p.pos - start
		return &jnode{n: n, c: n, kind: 'n'}, nil
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if len(p.in)-p.pos >= len(lit) && string(p.in[p.pos:p.pos+len(lit)]) == lit {
				p.pos += len(lit)
				return &jnode{n: len(lit), c: len(lit), kind: 'l'}, nil
			}
		}
		return nil, p.errorf("unexpected character %q", c)
	}
}

// container parses the container at p.pos; old, if not nil, is its hint,
// the previous container at oldStart.
func (p *incParser) container(open byte, old *jnode, oldStart int) (*jnode, error) {
	p.depth++
	if p.depth > MaxDepth {
		return nil, p.errorf("nesting deeper than %d", MaxDepth)
	}
	defer func() { p.depth-- }()
	closer := byte('}')
	if open == '[' {
		closer = ']'
	}
	start := p.pos
	nd := &jnode{kind: open}
	c := &containerParse{p: p, nd: nd, old: old, oldStart: oldStart, start: start}
	k := 0
	if old != nil {
		nd.list = old.list
	}
	if old != nil && oldStart == start {
		k = sort.Search(len(old.kids), func(i int) bool { return !p.reusable(old.kids[i], start+old.offs[i]) })
		if open == '{' {
			k &^= 1 // whole members only
		}
	}
	c.kept, c.front, c.next = k, k, k
	if k > 0 {
		if k == len(old.kids) {
			// Appending: share the previous version's arrays, writing
			// only past their end, which that version does not see.
			nd.kids, nd.offs = old.kids, old.offs
		} else {
			nd.kids = append(make([]*jnode, 0, len(old.kids)+1), old.kids[:k]...)
			nd.offs = append(make([]int, 0, len(old.kids)+1), old.offs[:k]...)
		}
		p.pos = start + old.offs[k-1] + old.kids[k-1].n
	} else {
		p.pos++
		p.ws()
		if p.pos < len(p.in) && p.in[p.pos] == closer {
			p.pos++
			return c.finish(-1), nil
		}
	}
	for {
		if len(nd.kids) > 0 {
			p.ws()
			if p.pos >= len(p.in) {
				return nil, p.errorf("unexpected end of input")
			}
			ch := p.in[p.pos]
			if ch == closer {
				p.pos++
				return c.finish(-1), nil
			}
			if ch != ',' {
				return nil, p.errorf("expected ',' or %q", closer)
			}
			p.pos++
			p.ws()
		}
		if old != nil && p.pos >= len(p.in)-p.s {
			// Within the common suffix: resynchronise on a previous child.
			if j, ok := slices.BinarySearch(old.offs, p.pos-p.delta-oldStart); ok && (open == '[' || j%2 == 0) {
				shift := oldStart + p.delta - start
				for i := j; i < len(old.kids); i++ {
					nd.kids = append(nd.kids, old.kids[i])
					nd.offs = append(nd.offs, old.offs[i]+shift)
				}
				p.pos = oldStart + old.n + p.delta
				return c.finish(j), nil
			}
		}
		hint, sameKey := -1, false
		if old != nil {
			var kept bool
			if kept, hint, sameKey = c.align(); kept {
				continue
			}
		}
		if open == '{' {
			if p.pos >= len(p.in) || p.in[p.pos] != '"' {
				return nil, p.errorf("expected a string key")
			}
			if sameKey {
				// The key is the hint's; its value differs.
				c.add(old.kids[hint-1], p.pos)
				p.pos += old.kids[hint-1].n
			} else if err := c.kid(-1); err != nil {
				return nil, err
			}
			p.ws()
			if p.pos >= len(p.in) || p.in[p.pos] != ':' {
				return nil, p.errorf("expected ':'")
			}
			p.pos++
			p.ws()
		}
		if err := c.kid(hint); err != nil {
			return nil, err
		}
	}
}

// containerParse is the state of one container being parsed.
type containerParse struct {
	p        *incParser
	nd       *jnode
	old      *jnode // the hint, or nil
	oldStart int
	start    int
	kept     int // children kept from old at the front
	fresh    int // compact length of the children added after those
	// front counts the first children that are old's at the same index.
	// next is the index in old after the child last aligned, and miss
	// counts the children added since, which matched none of old's.
	front, next, miss int
	keys              map[string]int // old's keys, by their text, once needed
}

// kid parses the child at p.pos, beside old's child hint (-1: none).
func (c *containerParse) kid(hint int) error {
	p := c.p
	at := p.pos
	var h *jnode
	var hAt int
	if hint >= 0 && hint < len(c.old.kids) {
		h, hAt = c.old.kids[hint], c.oldStart+c.old.offs[hint]
	}
	kid, err := p.value(h, hAt)
	if err != nil {
		return err
	}
	c.add(kid, at)
	return nil
}

// add appends kid, which starts at at.
func (c *containerParse) add(kid *jnode, at int) {
	i := len(c.nd.kids)
	if c.front == i && c.old != nil && i < len(c.old.kids) && c.old.kids[i] == kid {
		c.front++
	}
	c.nd.kids, c.nd.offs = append(c.nd.kids, kid), append(c.nd.offs, at-c.start)
	c.fresh += kid.c
}

// align aligns the child at p.pos (a key, in an object) with old's
// children. If a run of old's children follows there, it adds them, moves
// p.pos past them and returns kept. Else it returns the index of the
// child of old that the new one (for an object, the member's value) is
// parsed beside, or -1, and for an object whether the key is that
// member's.
//
// An array's child is compared with the child of old at the same place
// after the last aligned one (elements replaced), then with those that
// follow the last aligned one (elements inserted, or up to three
// deleted). An object's member is looked up by its key, and a key that
// old lacks stands for the member at the same place (a member renamed).
func (c *containerParse) align() (kept bool, hint int, sameKey bool) {
	p, old := c.p, c.old
	if c.nd.kind == '[' {
		at := c.next + c.miss
		if at < len(old.kids) && c.run(at) {
			return true, 0, false
		}
		for k := c.next; k <= c.next+3 && k < len(old.kids); k++ {
			if k != at && c.run(k) {
				return true, 0, false
			}
		}
		c.miss++
		if at < len(old.kids) {
			return false, at, false
		}
		return false, -1, false
	}
	j := c.next
	if j+1 >= len(old.kids) || p.commonRun(c.oldStart+old.offs[j], p.pos, old.kids[j].n) < old.kids[j].n {
		j = -1
		if end, problem := scanString(p.in, p.pos); problem == "" && p.in[p.pos] == '"' {
			if c.keys == nil {
				c.keys = make(map[string]int, len(old.kids)/2)
				for k := 0; k+1 < len(old.kids); k += 2 {
					key := p.oldBytes(c.oldStart+old.offs[k], old.kids[k].n)
					if _, dup := c.keys[string(key)]; !dup {
						c.keys[string(key)] = k
					}
				}
			}
			if k, ok := c.keys[string(p.in[p.pos:end])]; ok {
				j = k
			}
		}
	}
	if j < 0 {
		at := c.next + c.miss
		c.miss += 2
		if at+1 < len(old.kids) {
			return false, at + 1, false
		}
		return false, -1, false
	}
	if c.run(j) {
		return true, 0, false
	}
	c.next, c.miss = j+2, 0
	return false, j + 1, true
}

// run adds the longest run of old's children from j on whose bytes
// follow at p.pos (whole members, in an object), if there is one.
func (c *containerParse) run(j int) bool {
	p, old := c.p, c.old
	from := old.offs[j]
	n := p.commonRun(c.oldStart+from, p.pos, old.n-from)
	if n < old.kids[j].n {
		return false
	}
	// The children of old that end within the run.
	last := j + sort.Search(len(old.kids)-j, func(k int) bool {
		return old.offs[j+k]+old.kids[j+k].n > from+n
	}) - 1
	step := 1
	if c.nd.kind == '{' {
		step = 2
		if (last-j)%2 == 0 {
			last-- // a key without its value
		}
	}
	if last >= j {
		// A number ends where a byte that cannot continue it follows.
		if end := p.pos + old.offs[last] + old.kids[last].n - from; old.kids[last].kind == 'n' && end < len(p.in) && isNumByte(p.in[end]) {
			last -= step
		}
	}
	if last < j {
		return false
	}
	at := p.pos
	for k := j; k <= last; k++ {
		c.add(old.kids[k], at+old.offs[k]-from)
	}
	c.next, c.miss = last+1, 0
	p.pos = at + old.offs[last] + old.kids[last].n - from
	return true
}

// finish sets the container's lengths, and what it shares with the list
// it will update, once the parser stands past its end. resync is the
// index of the first of old's children kept at the end, or -1. A small
// container, stored as a single leaf, drops its children.
func (c *containerParse) finish(resync int) *jnode {
	nd, old := c.nd, c.old
	nd.n = c.p.pos - c.start
	nd.kc = c.fresh
	if old != nil {
		dropEnd := len(old.kids)
		if resync >= 0 {
			dropEnd = resync
		}
		nd.kc += old.kc
		for _, k := range old.kids[c.kept:dropEnd] {
			nd.kc -= k.c
		}
		oldFront, oldBack := old.front, old.back
		if old.built {
			oldFront, oldBack = len(old.kids), len(old.kids)
		}
		nd.front = min(c.front, oldFront)
		back := 0
		if resync >= 0 {
			back = len(old.kids) - resync
		}
		for back < len(nd.kids) && back < len(old.kids) && nd.kids[len(nd.kids)-1-back] == old.kids[len(old.kids)-1-back] {
			back++
		}
		nd.back = min(back, oldBack)
	}
	nd.c = 2 + nd.kc
	if len(nd.kids) > 1 {
		nd.c += len(nd.kids) - 1 // commas, and the colons of an object
	}
	if nd.c <= SmallContainer && !c.p.keepKids {
		nd.kids, nd.offs, nd.list = nil, nil, nil
	} else if nd.kids == nil {
		nd.kids, nd.offs = []*jnode{}, []int{}
	}
	return nd
}

func (p *incParser) str() error {
	end, problem := scanString(p.in, p.pos)
	p.pos = end
	if problem != "" {
		return p.errorf("%s", problem)
	}
	return nil
}

func (p *incParser) number() error {
	end, problem := scanNumber(p.in, p.pos)
	p.pos = end
	if problem != "" {
		return p.errorf("%s", problem)
	}
	return nil
}

// docBuilder stores the nodes of a parse that are not built yet, in the
// order BuildJSON stores them.
type docBuilder struct {
	text []byte
	sink Sink
}

func (b *docBuilder) build(nd *jnode, start int) (Ref, error) {
	if nd.built {
		return nd.ref, nil
	}
	text := b.text[start : start+nd.n]
	var ref Ref
	var err error
	switch {
	case nd.kind == '"' && nd.n > ChunkString:
		ref, err = putChunks(b.sink, text)
	case !nd.open():
		if nd.c != nd.n {
			if text, err = Compact(text); err != nil {
				return Ref{}, err
			}
		}
		ref, err = leafRef(b.sink, text)
	case nd.kind == '{':
		node := &NodeData{Type: TypeObject, Entries: make([]Entry, 0, len(nd.kids)/2)}
		for i := 0; i+1 < len(nd.kids); i += 2 {
			r, err := b.build(nd.kids[i+1], start+nd.offs[i+1])
			if err != nil {
				return Ref{}, err
			}
			ks := start + nd.offs[i]
			node.Entries = append(node.Entries, Entry{Name: string(b.text[ks : ks+nd.kids[i].n]), Ref: r})
		}
		ref, err = putNode(b.sink, node, int64(len(node.Entries)))
	default:
		n := len(nd.kids)
		front, back := nd.front, nd.back
		if nd.list == nil {
			front, back = 0, 0
		} else {
			e := len(nd.list.elems)
			front = min(front, n, e)
			back = min(back, n-front, e-front)
		}
		for i := front; i < n-back; i++ {
			if _, err := b.build(nd.kids[i], start+nd.offs[i]); err != nil {
				return Ref{}, err
			}
		}
		nd.list, ref, err = updateList(nd.list, nd.kids, front, back, b.sink)
	}
	if err != nil {
		return Ref{}, err
	}
	nd.ref, nd.built = ref, true
	return ref, nil
}
