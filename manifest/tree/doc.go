package tree

import (
	"bytes"
	"slices"
	"sort"
	"sync/atomic"
	"unicode/utf8"
)

// Doc is a JSON document held by its writer between commits: its text,
// its parse, and the ref of every subtree as last stored. Handing it the
// next version of the document (Build) or a JSON Patch (Patch) re-parses
// and re-stores only the subtrees whose bytes changed, wherever the
// changes are; every other subtree keeps its ref without being parsed or
// hashed again (Build compares its bytes with the previous version's, at
// memory speed). The result is always the one BuildJSON gives for the
// same text: the same root and the same new blobs, put in the same order.
//
// A Build or Patch is staged: Commit keeps it, Rollback restores the
// document as it was before. A Doc is not safe for concurrent use.
type Doc struct {
	text []byte
	root *jnode // nil: no document yet
	off  int    // offset of root in text

	staged bool
	undo   []splice
	spare  []byte // a buffer for the next text, once no version holds it
	was    struct {
		root *jnode
		off  int
	}
	bound patchBound // while a patch applies
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
	// mark is the number of the last parse that used this node.
	mark uint32
}

// open reports whether a container is stored as a node, with children.
func (n *jnode) open() bool { return n.kids != nil }

// splice is an undo record: text[at:end] replaced old, or, if whole,
// the text replaced the previous text old.
type splice struct {
	at, end int
	old     []byte
	whole   bool
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
//
// The document must be UTF-8, as JSON must be. Build checks the bytes
// that changed since the previous version (the whole document the first
// time), so the check costs what changed: invalid UTF-8 is an error
// wrapping ErrSyntax that gives its offset, and stages nothing.
func (d *Doc) Build(doc []byte, sink Sink) (Ref, error) {
	return d.stage(doc, sink, true)
}

// BuildStored is Build for a document read back from a store: its first
// version is not checked for UTF-8, so that a document stored before
// the check stays usable; what later versions change is checked.
func (d *Doc) BuildStored(doc []byte, sink Sink) (Ref, error) {
	return d.stage(doc, sink, d.root != nil)
}

func (d *Doc) stage(doc []byte, sink Sink, check bool) (Ref, error) {
	d.begin()
	p, s := 0, 0
	if d.root != nil {
		p = commonPrefix(d.text, doc)
		s = commonSuffix(d.text[p:], doc[p:])
	}
	if check {
		if err := checkUTF8(doc, p, len(doc)-s); err != nil {
			d.Rollback()
			return Ref{}, err
		}
	}
	oldLen := len(d.text)
	var span []byte
	if cost := (oldLen - s - p) + (len(doc) - s - p); d.root != nil && (cost > len(doc) || cost+s > len(doc) && oldLen != len(doc)) {
		// Changes all over: copying the document into another buffer
		// costs less than saving the old bytes and splicing in the new,
		// and keeps the old text whole.
		span = d.text[p : oldLen-s]
		d.undo = append(d.undo, splice{old: d.text, whole: true})
		d.text, d.spare = append(d.spare[:0], doc...), nil
	} else {
		span = d.splice(p, oldLen-s, doc[p:len(doc)-s])
	}
	if err := d.reparse(p, s, len(doc)-oldLen, span); err != nil {
		d.Rollback()
		return Ref{}, err
	}
	return d.build(sink)
}

// Commit keeps the staged version.
func (d *Doc) Commit() {
	for _, u := range d.undo {
		if u.whole {
			d.spare = u.old[:0]
		}
	}
	d.staged, d.undo = false, d.undo[:0]
}

// Rollback restores the document as it was before the staged version.
func (d *Doc) Rollback() {
	if !d.staged {
		return
	}
	for i := len(d.undo) - 1; i >= 0; i-- {
		u := d.undo[i]
		if u.whole {
			d.text, d.spare = u.old, d.text[:0]
			continue
		}
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
	ip := &incParser{in: d.text, p: p, s: s, delta: delta, span: span, mark: parseMarks.Add(1)}
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

// checkUTF8 refuses invalid UTF-8 in doc[at:end], the bytes that differ
// from a previous version that was UTF-8, widened to the runes that
// overlap them: UTF-8 synchronises itself, so a rune wholly in the
// unchanged prefix or suffix is as valid as it was. The window starts at
// the first rune start of the UTFMax-1 bytes before at (a rune starting
// earlier ends before at) and ends at the first rune start from end on.
func checkUTF8(doc []byte, at, end int) error {
	lo := max(at-(utf8.UTFMax-1), 0)
	for lo < at && !utf8.RuneStart(doc[lo]) {
		lo++
	}
	hi := end
	for hi < len(doc) && !utf8.RuneStart(doc[hi]) {
		hi++
	}
	i := InvalidUTF8(doc[lo:hi])
	if i < 0 {
		return nil
	}
	i += lo
	return (&jsonParser{pos: i}).errorf("not UTF-8 (byte %#02x), as JSON must be", doc[i])
}

// InvalidUTF8 returns the offset of the first byte of b that is not part
// of valid UTF-8, or -1 if b is all UTF-8.
func InvalidUTF8(b []byte) int {
	if utf8.Valid(b) {
		return -1
	}
	i := 0
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		i += n
	}
	return i
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
// hashing it again. Comparing costs memory speed, and each byte is
// compared about once: a comparison that stops inside a container tells
// its parse how far its bytes are the hint's. Within a container:
//
//   - The children that end within the bytes known to be the hint's are
//     kept at once (a binary search).
//   - Once the parser stands, within the common suffix, at the start of a
//     hint's child, that child and all after it are kept: from there the
//     bytes and the parser's state are those of the previous version.
//   - Elsewhere a child is aligned with the hint's children (an array's
//     by index, tolerating elements inserted or deleted; an object's by
//     key), and the longest run of the hint's children whose bytes follow
//     is kept in one comparison. A child that differs is parsed beside
//     the hint's child, so that an edit deep down costs its path.
//
// A previous container is used once in a parse, as a hint or kept, so no
// node appears twice in a document: a container may then share its
// hint's arrays and list, appending past their ends.
type incParser struct {
	in       []byte
	pos      int
	depth    int
	p, s     int
	delta    int
	span     []byte
	mark     uint32 // marks the previous nodes used by this parse
	used     int    // counts the previous nodes used
	keepKids bool   // keep the children of small containers (for lookups)
}

// parseMarks numbers parses, to mark the nodes each one uses. A number
// that wraps around only makes a parse keep fewer nodes.
var parseMarks atomic.Uint32

// take reports whether the previous node nd is still free in this parse,
// and marks it used.
func (p *incParser) take(nd *jnode) bool {
	if nd.mark == p.mark {
		return false
	}
	nd.mark = p.mark
	p.used++
	return true
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

// ends reports whether a previous value of the given kind, whose bytes
// are at p.in[end-n:end], also ends at end: a number ends where a byte
// that cannot continue it follows.
func (p *incParser) ends(kind byte, end int) bool {
	return kind != 'n' || end >= len(p.in) || !isNumByte(p.in[end])
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
	root, err := p.value(old, oldOff, -1)
	if err != nil {
		return nil, 0, err
	}
	p.ws()
	if p.pos != len(p.in) {
		return nil, 0, p.errorf("unexpected data after the document")
	}
	return root, off, nil
}

func isNumByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// value parses the value at p.pos. old, if not nil, is its hint, the
// previous value at oldAt; known, if not negative, is how many bytes from
// there the two versions have in common (all of them if it is old.n or
// more), as a comparison already found.
func (p *incParser) value(old *jnode, oldAt, known int) (*jnode, error) {
	if p.pos >= len(p.in) {
		return nil, p.errorf("%s", endOfInput(p.in))
	}
	if old != nil && old.mark == p.mark {
		old = nil
	}
	if old != nil {
		if known < 0 {
			known = p.commonRun(oldAt, p.pos, old.n)
		}
		if known >= old.n && p.ends(old.kind, p.pos+old.n) && p.take(old) {
			p.pos += old.n
			return old, nil
		}
	}
	start := p.pos
	switch c := p.in[p.pos]; {
	case c == '{' || c == '[':
		if old != nil && (old.kind != c || !old.open()) {
			old = nil
		}
		if old == nil {
			return p.container(c, nil, 0, 0)
		}
		p.take(old)
		return p.container(c, old, oldAt, min(known, old.n-1))
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
		return nil, p.errorf("%s", unexpected(p.in, p.pos))
	}
}

// container parses the container at p.pos. old, if not nil, is its hint,
// the previous container at oldStart, whose first known bytes are those
// at p.pos.
func (p *incParser) container(open byte, old *jnode, oldStart, known int) (*jnode, error) {
	p.depth++
	if p.depth > MaxDepth {
		return nil, tooDeep(p.pos)
	}
	defer func() { p.depth-- }()
	closer := byte('}')
	if open == '[' {
		closer = ']'
	}
	start := p.pos
	nd := &jnode{kind: open}
	c := &containerParse{p: p, nd: nd, old: old, oldStart: oldStart, start: start, known: known}
	k := 0
	if old != nil {
		nd.list = old.list
		// The children within the known bytes.
		k = sort.Search(len(old.kids), func(i int) bool {
			end := old.offs[i] + old.kids[i].n
			return end > known || end == known && !p.ends(old.kids[i].kind, start+end)
		})
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
		if old != nil {
			nd.kids = make([]*jnode, 0, len(old.kids)+1)
			nd.offs = make([]int, 0, len(old.kids)+1)
		}
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
			if j, ok := slices.BinarySearch(old.offs, p.pos-p.delta-oldStart); ok && (open == '[' || j%2 == 0) && c.free(j, len(old.kids)) {
				c.keep(j, len(old.kids), oldStart+p.delta-start)
				p.pos = oldStart + old.n + p.delta
				return c.finish(j), nil
			}
		}
		hint, known, sameKey := -1, -1, false
		if old != nil {
			var kept bool
			if kept, hint, known, sameKey = c.align(); kept {
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
			} else if err := c.kid(-1, -1); err != nil {
				return nil, err
			}
			p.ws()
			if p.pos >= len(p.in) || p.in[p.pos] != ':' {
				return nil, p.errorf("expected ':'")
			}
			p.pos++
			p.ws()
		}
		if err := c.kid(hint, known); err != nil {
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
	known    int // bytes from start known to be old's
	kept     int // children kept from old at the front
	fresh    int // compact length of the children parsed or added one by one
	// ranges holds those of old's children added in bulk, in order
	// (an array's), and hinted the indices of old's children given as
	// hints (an array's, in order), which a later run must not keep.
	ranges [][2]int
	hinted []int
	// front counts the first children that are old's at the same index.
	// next is the index in old after the child last aligned, and miss
	// counts the children added since, which matched none of old's.
	front, next, miss int
	keys              map[string]int // old's keys, by their text, once needed
}

// free reports whether old's children from j up to end are not used yet
// in this parse. Those kept at the front are; the others are marked
// when used.
//
// An array's children are used in order: only those after the last
// aligned one are free, bar those given as hints.
func (c *containerParse) free(j, end int) bool {
	if j < c.kept {
		return false
	}
	if c.nd.kind == '[' {
		h, _ := slices.BinarySearch(c.hinted, j)
		return j >= c.next && (h == len(c.hinted) || c.hinted[h] >= end)
	}
	for _, k := range c.old.kids[j:end] {
		if k.mark == c.p.mark {
			return false
		}
	}
	return true
}

// kid parses the child at p.pos, beside old's child hint (-1: none),
// whose first known bytes are those at p.pos.
func (c *containerParse) kid(hint, known int) error {
	p := c.p
	at := p.pos
	var h *jnode
	var hAt int
	if hint >= 0 && hint < len(c.old.kids) && c.free(hint, hint+1) {
		h, hAt = c.old.kids[hint], c.oldStart+c.old.offs[hint]
		if c.nd.kind == '[' {
			c.hinted = append(c.hinted, hint)
		}
	} else {
		known = -1
	}
	kid, err := p.value(h, hAt, known)
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

// common returns how many bytes old's child j, if it stood at p.pos, has
// in common with the text there.
func (c *containerParse) common(j int) int {
	from, rel := c.old.offs[j], c.p.pos-c.start
	if from == rel && rel <= c.known {
		return c.known - rel // the rest of a comparison made before
	}
	return c.p.commonRun(c.oldStart+from, c.p.pos, c.old.n-from)
}

// align aligns the child at p.pos (a key, in an object) with old's
// children. If a run of old's children follows there, it adds them, moves
// p.pos past them and returns kept. Else it returns the index of the
// child of old that the new one (for an object, the member's value) is
// parsed beside, or -1, how many of its bytes are known to be there (or
// -1), and for an object whether the key is that member's.
//
// An array's child is compared with the child of old at the same place
// after the last aligned one (elements replaced), then with those that
// follow the last aligned one (elements inserted, or up to three
// deleted). An object's member is looked up by its key, and a key that
// old lacks stands for the member at the same place (a member renamed).
func (c *containerParse) align() (kept bool, hint, known int, sameKey bool) {
	p, old := c.p, c.old
	if c.nd.kind == '[' {
		at := c.next + c.miss
		known = -1
		if at < len(old.kids) {
			n := c.common(at)
			if c.run(at, n) {
				return true, 0, 0, false
			}
			known = n
		}
		for k := c.next; k <= c.next+3 && k < len(old.kids); k++ {
			if k != at && c.run(k, c.common(k)) {
				return true, 0, 0, false
			}
		}
		c.miss++
		if at < len(old.kids) {
			return false, at, known, false
		}
		return false, -1, -1, false
	}
	j, n := c.next, -1
	if j+1 < len(old.kids) && c.free(j, j+2) {
		n = c.common(j)
	}
	if n < 0 || n < old.kids[j].n {
		// Not the expected key: look it up.
		j = -1
		if end, problem := scanString(p.in, p.pos); problem == "" && p.pos < len(p.in) && p.in[p.pos] == '"' {
			if c.keys == nil {
				c.keys = make(map[string]int, len(old.kids)/2)
				for k := 0; k+1 < len(old.kids); k += 2 {
					key := p.oldBytes(c.oldStart+old.offs[k], old.kids[k].n)
					if _, dup := c.keys[string(key)]; !dup {
						c.keys[string(key)] = k
					}
				}
			}
			if k, ok := c.keys[string(p.in[p.pos:end])]; ok && c.free(k, k+2) {
				j, n = k, c.common(k)
			}
		}
	}
	if j < 0 {
		at := c.next + c.miss
		c.miss += 2
		if at+1 < len(old.kids) {
			return false, at + 1, -1, false
		}
		return false, -1, -1, false
	}
	if c.run(j, n) {
		return true, 0, 0, false
	}
	p.take(old.kids[j])
	c.next, c.miss = j+2, 0
	// The value starts where it did after the key if the bytes up to it
	// are the same.
	if gap := old.offs[j+1] - old.offs[j]; n >= gap {
		return false, j + 1, n - gap, true
	}
	return false, j + 1, -1, true
}

// run adds the longest run of old's children from j on whose bytes
// follow at p.pos (whole members, in an object), if there is one; n is
// how many bytes from old's child j on are the same there.
func (c *containerParse) run(j, n int) bool {
	p, old := c.p, c.old
	from := old.offs[j]
	if j < c.kept || n < old.kids[j].n {
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
	at := p.pos
	if last >= j && !p.ends(old.kids[last].kind, at+old.offs[last]+old.kids[last].n-from) {
		last -= step
	}
	if step == 1 {
		// An array's: stop before a child given as a hint.
		if h, _ := slices.BinarySearch(c.hinted, j); h < len(c.hinted) {
			last = min(last, c.hinted[h]-1)
		}
		if last < j {
			return false
		}
		c.keep(j, last+1, at-from-c.start)
		c.next, c.miss = last+1, 0
		p.pos = at + old.offs[last] + old.kids[last].n - from
		return true
	}
	for k := j; k <= last; k++ {
		if !p.take(old.kids[k]) {
			// Used elsewhere in this parse (a container kept twice
			// would share its arrays twice): end the run before it.
			if step == 2 && (k-j)%2 == 1 {
				c.nd.kids, c.nd.offs = c.nd.kids[:len(c.nd.kids)-1], c.nd.offs[:len(c.nd.offs)-1]
				c.fresh -= old.kids[k-1].c
				c.front = min(c.front, len(c.nd.kids))
				k--
			}
			last = k - 1
			break
		}
		c.add(old.kids[k], at+old.offs[k]-from)
	}
	if last < j {
		return false
	}
	c.next, c.miss = last+1, 0
	p.pos = at + old.offs[last] + old.kids[last].n - from
	return true
}

// keep adds old's children from j to end, each at its offset plus shift:
// an array's in bulk, an object's one by one, marked used.
func (c *containerParse) keep(j, end, shift int) {
	nd, old := c.nd, c.old
	if nd.kind == '{' {
		for k := j; k < end; k++ {
			c.p.take(old.kids[k])
			c.add(old.kids[k], c.start+old.offs[k]+shift)
		}
		return
	}
	if c.front == len(nd.kids) && j == len(nd.kids) {
		c.front = end
	}
	nd.kids = append(nd.kids, old.kids[j:end]...)
	for _, off := range old.offs[j:end] {
		nd.offs = append(nd.offs, off+shift)
	}
	c.ranges = append(c.ranges, [2]int{j, end})
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
		// Those kept at the front and added in bulk count as in old.
		nd.kc += old.kc
		from := c.kept
		for _, r := range append(c.ranges, [2]int{len(old.kids), len(old.kids)}) {
			for _, k := range old.kids[from:r[0]] {
				nd.kc -= k.c
			}
			from = r[1]
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
