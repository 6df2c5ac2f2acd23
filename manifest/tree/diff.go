package tree

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path"
	"strconv"

	"github.com/cairnlog/cairn/cas"
)

// ChangeKind says how an entry differs between two states.
type ChangeKind string

// Change kinds.
const (
	Added   ChangeKind = "added"
	Removed ChangeKind = "removed"
	Changed ChangeKind = "changed"
)

// Change is one difference between two states. Path is a JSON pointer
// (RFC 6901: "" is the whole document, "/a/0" a member) for JSON states,
// or a slash-separated file path for directory states.
type Change struct {
	Path string     `json:"path"`
	Kind ChangeKind `json:"kind"`
}

// DiffJSON compares two JSON values, descending only into subtrees whose
// refs differ: identical subtrees cost nothing.
func (r *Reader) DiffJSON(ctx context.Context, a, b Ref, fn func(Change) error) error {
	return r.diffJSON(ctx, "", a, b, 0, fn)
}

func (r *Reader) diffJSON(ctx context.Context, p string, a, b Ref, depth int, fn func(Change) error) error {
	if a.Equal(b) {
		return nil
	}
	if depth > r.limits().MaxDepth {
		return depthLimit("diff nesting", r.limits().MaxDepth)
	}
	na, ta, err := r.nodeType(ctx, a)
	if err != nil {
		return err
	}
	nb, tb, err := r.nodeType(ctx, b)
	if err != nil {
		return err
	}
	switch {
	case ta == TypeObject && tb == TypeObject:
		bm := make(map[string]Ref, len(nb.Entries))
		for _, e := range nb.Entries {
			bm[keyName(e.Name)] = e.Ref
		}
		am := make(map[string]bool, len(na.Entries))
		for _, e := range na.Entries {
			name := keyName(e.Name)
			am[name] = true
			kp := p + "/" + pointerToken(name)
			if br, ok := bm[name]; ok {
				if err := r.diffJSON(ctx, kp, e.Ref, br, depth+1, fn); err != nil {
					return err
				}
			} else if err := fn(Change{Path: kp, Kind: Removed}); err != nil {
				return err
			}
		}
		for _, e := range nb.Entries {
			if name := keyName(e.Name); !am[name] {
				if err := fn(Change{Path: p + "/" + pointerToken(name), Kind: Added}); err != nil {
					return err
				}
			}
		}
		return nil
	case isList(ta) && isList(tb):
		// A list node ('L') is the interior of a long array or of a long
		// string's chunk list, and only its leaves say which. Reading
		// them first would cost a diff of two arrays the nodes it steps
		// over, so the lists are diffed as arrays, and a chunk leaf met
		// before any change was reported (a string has no elements
		// before its first leaf) sends the two to the text comparison.
		emitted := false
		err := r.diffLists(ctx, p, a, b, depth, func(c Change) error {
			emitted = true
			return fn(c)
		})
		var chunks *chunksInArray
		if !errors.As(err, &chunks) || emitted {
			return err
		}
	}
	// Different shapes, or leaves (small containers are leaves): compare text.
	ja, err := r.JSON(ctx, a)
	if err != nil {
		return err
	}
	jb, err := r.JSON(ctx, b)
	if err != nil {
		return err
	}
	if string(ja) == string(jb) {
		return nil
	}
	return diffText(p, ja, jb, fn)
}

// diffText compares two JSON texts that are not both stored as nodes
// (small containers are one blob): it parses them and reports changes
// member by member, as the node diff would.
func diffText(p string, a, b []byte, fn func(Change) error) error {
	pa := &jsonParser{in: a, out: make([]byte, 0, len(a))}
	va, err := pa.parseDoc()
	if err != nil {
		return fmt.Errorf("diff %q: %w", p, err)
	}
	pb := &jsonParser{in: b, out: make([]byte, 0, len(b))}
	vb, err := pb.parseDoc()
	if err != nil {
		return fmt.Errorf("diff %q: %w", p, err)
	}
	return diffValues(p, pa.out, va, pb.out, vb, fn)
}

// diffValues compares parsed values va (in text ta) and vb (in tb).
func diffValues(p string, ta []byte, va jval, tb []byte, vb jval, fn func(Change) error) error {
	if string(ta[va.start:va.end]) == string(tb[vb.start:vb.end]) {
		return nil
	}
	switch {
	case va.kind == '{' && vb.kind == '{':
		bm := make(map[string]jval, len(vb.kids)/2)
		for i := 0; i+1 < len(vb.kids); i += 2 {
			bm[keyName(string(tb[vb.kids[i].start:vb.kids[i].end]))] = vb.kids[i+1]
		}
		am := make(map[string]bool, len(va.kids)/2)
		for i := 0; i+1 < len(va.kids); i += 2 {
			name := keyName(string(ta[va.kids[i].start:va.kids[i].end]))
			am[name] = true
			kp := p + "/" + pointerToken(name)
			var err error
			if kb, ok := bm[name]; ok {
				err = diffValues(kp, ta, va.kids[i+1], tb, kb, fn)
			} else {
				err = fn(Change{Path: kp, Kind: Removed})
			}
			if err != nil {
				return err
			}
		}
		for i := 0; i+1 < len(vb.kids); i += 2 {
			name := keyName(string(tb[vb.kids[i].start:vb.kids[i].end]))
			if !am[name] {
				if err := fn(Change{Path: p + "/" + pointerToken(name), Kind: Added}); err != nil {
					return err
				}
			}
		}
		return nil
	case va.kind == '[' && vb.kind == '[':
		for i := 0; i < max(len(va.kids), len(vb.kids)); i++ {
			ip := p + "/" + strconv.Itoa(i)
			var err error
			switch {
			case i >= len(vb.kids):
				err = fn(Change{Path: ip, Kind: Removed})
			case i >= len(va.kids):
				err = fn(Change{Path: ip, Kind: Added})
			default:
				err = diffValues(ip, ta, va.kids[i], tb, vb.kids[i], fn)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	return fn(Change{Path: p, Kind: Changed})
}

func isList(t byte) bool { return t == TypeArray || t == TypeList }

// chunksInArray is a chunk leaf met where a diff of two arrays wanted
// array elements: one of the lists is a long string's (see diffJSON), or,
// where it cannot be, the store is damaged (it wraps cas.ErrCorrupt).
type chunksInArray struct{ err error }

func (e *chunksInArray) Error() string { return e.err.Error() }
func (e *chunksInArray) Unwrap() error { return e.err }

// diffLists compares two stored arrays element by element, index with
// index, stepping over every run of elements whose subtree both share
// without reading it: appending to an array of n elements costs the
// nodes on its last path, O(log n), not its n elements.
func (r *Reader) diffLists(ctx context.Context, p string, a, b Ref, depth int, fn func(Change) error) error {
	ca, cb := r.newListCursor(a, TypeArray, depth), r.newListCursor(b, TypeArray, depth)
	var i int64
	skip := func(n int64) error {
		if n < 0 || i > math.MaxInt64-n {
			return fmt.Errorf("%w: a list node's element count %d", cas.ErrCorrupt, n)
		}
		i += n
		return nil
	}
	for {
		ea, eb, oka, okb, err := stepLists(ctx, ca, cb, skip)
		if err != nil || !oka && !okb {
			return err
		}
		// Elements, or an element beside the end of the other list.
		ip := p + "/" + strconv.FormatInt(i, 10)
		switch {
		case !okb:
			err = fn(Change{Path: ip, Kind: Removed})
			ca.next()
		case !oka:
			err = fn(Change{Path: ip, Kind: Added})
			cb.next()
		default:
			err = r.diffJSON(ctx, ip, ea.Ref, eb.Ref, depth+1, fn)
			ca.next()
			cb.next()
		}
		if err != nil {
			return err
		}
		i++
	}
}

// listCursor walks a stored list (an array, or a directory's entries)
// in order. Its next item is either a subtree (an entry of a list node,
// which counts its elements in its ref's Size) or an element (an entry
// of a leaf), so that a diff can step over a subtree whole or open it.
type listCursor struct {
	r      *Reader
	frames []listFrame
	leaf   byte // the leaves' node type: TypeArray or TypeDir
	depth  int  // of the list in its state
}

// listFrame is the items of one node not yet walked.
type listFrame struct {
	items []Entry
	sub   bool // the items are subtrees, not elements
}

func (r *Reader) newListCursor(root Ref, leaf byte, depth int) *listCursor {
	return &listCursor{r: r, frames: []listFrame{{items: []Entry{{Ref: root}}, sub: true}}, leaf: leaf, depth: depth}
}

// peek returns the next item and whether it is a subtree; ok is false at
// the end of the list.
func (c *listCursor) peek() (e Entry, sub, ok bool) {
	for len(c.frames) > 0 {
		f := &c.frames[len(c.frames)-1]
		if len(f.items) > 0 {
			return f.items[0], f.sub, true
		}
		c.frames = c.frames[:len(c.frames)-1]
	}
	return Entry{}, false, false
}

// next steps past the item peek returned.
func (c *listCursor) next() {
	f := &c.frames[len(c.frames)-1]
	f.items = f.items[1:]
}

// open replaces the subtree peek returned with its node's items.
func (c *listCursor) open(ctx context.Context) error {
	e, _, _ := c.peek()
	if c.depth+len(c.frames) > c.r.limits().MaxDepth {
		return depthLimit("list nesting", c.r.limits().MaxDepth)
	}
	n, err := c.r.Node(ctx, e.Ref)
	if err != nil {
		return err
	}
	var sub bool
	switch n.Type {
	case TypeList:
		sub = true
	case c.leaf:
	case TypeChunks:
		if c.leaf == TypeArray {
			return &chunksInArray{fmt.Errorf("%w: node %s: type %q inside a list of %q", cas.ErrCorrupt, e.Ref.ID.Short(), n.Type, c.leaf)}
		}
		fallthrough
	default:
		return fmt.Errorf("%w: node %s: type %q inside a list of %q", cas.ErrCorrupt, e.Ref.ID.Short(), n.Type, c.leaf)
	}
	c.next()
	if len(n.Entries) > 0 {
		c.frames = append(c.frames, listFrame{items: n.Entries, sub: sub})
	}
	return nil
}

// stepLists advances the cursors of two lists to their next elements,
// stepping over every subtree both share whole (skip, with its element
// count, which a diff of arrays needs to number what follows) and
// opening the others, the larger first. It returns the next element of
// each list (ok false: that list has ended).
func stepLists(ctx context.Context, ca, cb *listCursor, skip func(n int64) error) (ea, eb Entry, oka, okb bool, err error) {
	for {
		var sa, sb bool
		ea, sa, oka = ca.peek()
		eb, sb, okb = cb.peek()
		switch {
		case oka && okb && sa && sb && ea.Ref.Equal(eb.Ref) && ea.Ref.Size == eb.Ref.Size:
			if err := skip(ea.Ref.Size); err != nil {
				return ea, eb, oka, okb, err
			}
			ca.next()
			cb.next()
		case oka && sa && (!okb || !sb || ea.Ref.Size >= eb.Ref.Size):
			// a's subtree is the larger (or b's side has an element or
			// nothing here): open it, and b's too if it is as large.
			if okb && sb && ea.Ref.Size == eb.Ref.Size {
				if err := cb.open(ctx); err != nil {
					return ea, eb, oka, okb, err
				}
			}
			if err := ca.open(ctx); err != nil {
				return ea, eb, oka, okb, err
			}
		case okb && sb:
			if err := cb.open(ctx); err != nil {
				return ea, eb, oka, okb, err
			}
		default:
			return ea, eb, oka, okb, nil
		}
	}
}

// nodeType returns the node at ref and its type, or type 0 for a leaf.
func (r *Reader) nodeType(ctx context.Context, ref Ref) (*NodeData, byte, error) {
	if ref.Kind != Node {
		return nil, 0, nil
	}
	n, err := r.Node(ctx, ref)
	if err != nil {
		return nil, 0, err
	}
	return n, n.Type, nil
}

// keyName returns the name a raw JSON key token (quotes included)
// stands for, its escapes decoded as JSON decodes them ("\/" is "/",
// "\u0061" is "a"), as patch paths name members (memberIndex).
func keyName(raw string) string {
	if name, ok := keyBytes([]byte(raw)); ok {
		return string(name)
	}
	return raw
}

// keyBytes returns the name a raw JSON key token (quotes included)
// stands for, its escapes decoded as JSON decodes them; without escapes,
// a slice of raw. ok is false if the token does not decode.
func keyBytes(raw []byte) (name []byte, ok bool) {
	if len(raw) < 2 {
		return nil, false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1], true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil, false
	}
	return []byte(s), true
}

// pointerToken turns a member name (keyName) into a JSON pointer token.
func pointerToken(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '~':
			out = append(out, '~', '0')
		case '/':
			out = append(out, '~', '1')
		default:
			out = append(out, s[i])
		}
	}
	return string(out)
}

// DiffDir compares two directory states file by file.
func (r *Reader) DiffDir(ctx context.Context, a, b Ref, fn func(Change) error) error {
	return r.diffDir(ctx, "", a, b, 0, fn)
}

func (r *Reader) diffDir(ctx context.Context, p string, a, b Ref, depth int, fn func(Change) error) error {
	if a.Equal(b) {
		return nil
	}
	if depth > r.limits().MaxDepth {
		return depthLimit("diff nesting", r.limits().MaxDepth)
	}
	if a.Kind != Node || b.Kind != Node {
		return fmt.Errorf("%w: directory is not a node", cas.ErrCorrupt)
	}
	// Both directories' entries are merged by name, stepping over the
	// runs of entries both share (a large directory is a list of
	// nodes): a change costs the nodes on its path, not the directory.
	// Removed and changed entries are said in name order as met, then the
	// added ones.
	ca, cb := r.newListCursor(a, TypeDir, depth), r.newListCursor(b, TypeDir, depth)
	var lastA, lastB string // the last entry read of each, to check the order
	var added []string
	noSkip := func(int64) error { return nil }
	for {
		ea, eb, oka, okb, err := stepLists(ctx, ca, cb, noSkip)
		if err != nil {
			return err
		}
		if !oka && !okb {
			break
		}
		// Each entry is checked once, as it is consumed; the one left
		// for the next round is checked then.
		switch {
		case !okb || oka && ea.Name < eb.Name:
			if err := checkDirEntry(a, ea, lastA); err != nil {
				return err
			}
			err = fn(Change{Path: path.Join(p, ea.Name), Kind: Removed})
			lastA = ea.Name
			ca.next()
		case !oka || eb.Name < ea.Name:
			if err := checkDirEntry(b, eb, lastB); err != nil {
				return err
			}
			added = append(added, path.Join(p, eb.Name))
			lastB = eb.Name
			cb.next()
		default:
			if err := checkDirEntry(a, ea, lastA); err != nil {
				return err
			}
			if err := checkDirEntry(b, eb, lastB); err != nil {
				return err
			}
			ep := path.Join(p, ea.Name)
			switch {
			case ea.Mode == ModeDir && eb.Mode == ModeDir:
				err = r.diffDir(ctx, ep, ea.Ref, eb.Ref, depth+1, fn)
			case ea.Mode != eb.Mode || !ea.Ref.Equal(eb.Ref):
				err = fn(Change{Path: ep, Kind: Changed})
			}
			lastA, lastB = ea.Name, eb.Name
			ca.next()
			cb.next()
		}
		if err != nil {
			return err
		}
	}
	for _, ap := range added {
		if err := fn(Change{Path: ap, Kind: Added}); err != nil {
			return err
		}
	}
	return nil
}

// checkDirEntry refuses an entry of the directory at dir whose name is
// not one a directory may hold, or does not sort after last, the entry
// read before it.
func checkDirEntry(dir Ref, e Entry, last string) error {
	if err := ValidName(e.Name); err != nil {
		return fmt.Errorf("%w: directory %s: %v", cas.ErrCorrupt, dir.ID.Short(), err)
	}
	if last != "" && e.Name <= last {
		return fmt.Errorf("%w: directory %s: entries out of order at %q", cas.ErrCorrupt, dir.ID.Short(), e.Name)
	}
	return nil
}
