package tree

import (
	"slices"
	"sort"
)

// listState is a JSON array as putList stored it: its elements and, level
// by level, where its nodes end and their refs. It lets the next version
// of the array store only the nodes whose entries changed, plus those up
// to the next boundary both versions share.
type listState struct {
	elems  []*jnode
	levels []*listLevel
}

// listLevel is one level of a list: the nodes that end at a boundary
// (cuts[i] is the end, exclusive, of node i among the level's entries),
// then, if the level does not end at a boundary, the open node that ends
// with it. An append rewrites only the open node, and later versions
// share the arrays of closed nodes, appending past their ends.
type listLevel struct {
	cuts  []int
	refs  []Ref
	sizes []int64
	open  *listNode
}

type listNode struct {
	cut  int
	ref  Ref
	size int64
}

// count returns the number of nodes of the level.
func (lv *listLevel) count() int {
	if lv.open != nil {
		return len(lv.refs) + 1
	}
	return len(lv.refs)
}

func (lv *listLevel) ref(i int) Ref {
	if i == len(lv.refs) {
		return lv.open.ref
	}
	return lv.refs[i]
}

func (lv *listLevel) size(i int) int64 {
	if i == len(lv.refs) {
		return lv.open.size
	}
	return lv.sizes[i]
}

// updateList stores the array of elems (built) as putList would,
// updating old, and returns the new state and the root ref. The first
// front and last back of elems are known to be old's.
func updateList(old *listState, elems []*jnode, front, back int, sink Sink) (*listState, Ref, error) {
	st := &listState{elems: elems}
	n := len(elems)
	at := func(i int) Ref { return elems[i].ref }
	size := func(int) int64 { return 1 }
	a, tail := 0, 0
	if old != nil {
		nOld := len(old.elems)
		m := min(n, nOld)
		same := func(x, y *jnode) bool { return x == y || x.ref.Equal(y.ref) }
		a = front
		for a < m && same(elems[a], old.elems[a]) {
			a++
		}
		tail = min(back, m-a)
		for tail < m-a && same(elems[n-1-tail], old.elems[nOld-1-tail]) {
			tail++
		}
	}
	typ := TypeArray
	for level := 0; ; level++ {
		var olv *listLevel
		if old != nil && level < len(old.levels) {
			olv = old.levels[level]
		} else {
			a, tail = 0, 0
		}
		lv, na, nt, err := olv.update(typ, n, at, size, a, tail, sink)
		if err != nil {
			return nil, Ref{}, err
		}
		st.levels = append(st.levels, lv)
		if lv.count() == 1 {
			return st, lv.ref(0), nil
		}
		n, a, tail, typ = lv.count(), na, nt, TypeList
		at, size = lv.ref, lv.size
	}
}

// update returns the level over n entries (at, size), given lv, the same
// level before, over entries of which the first a and the last tail are
// unchanged (lv nil: none). It also returns how many of the new level's
// nodes are unchanged at its front and at its end.
func (lv *listLevel) update(typ byte, n int, at func(int) Ref, size func(int) int64, a, tail int, sink Sink) (out *listLevel, front, back int, err error) {
	var old listLevel
	if lv != nil {
		old = *lv
	}
	oldN := 0
	if old.open != nil {
		oldN = old.open.cut
	} else if k := len(old.cuts); k > 0 {
		oldN = old.cuts[k-1]
	}
	d := n - oldN
	// Keep the closed nodes that end within the unchanged front.
	j0 := sort.Search(len(old.cuts), func(j int) bool { return old.cuts[j] > a })
	start := 0
	if j0 > 0 {
		start = old.cuts[j0-1]
	}
	out = &listLevel{}
	if j0 == len(old.cuts) {
		// Share the arrays, appending past their ends.
		out.cuts, out.refs, out.sizes = old.cuts, old.refs, old.sizes
	} else {
		out.cuts = append(make([]int, 0, len(old.cuts)+2), old.cuts[:j0]...)
		out.refs = append(make([]Ref, 0, len(old.refs)+2), old.refs[:j0]...)
		out.sizes = append(make([]int64, 0, len(old.sizes)+2), old.sizes[:j0]...)
	}
	node := func(end int) (Ref, int64, error) {
		nd := &NodeData{Type: typ, Entries: make([]Entry, 0, end-start)}
		var total int64
		for i := start; i < end; i++ {
			nd.Entries = append(nd.Entries, Entry{Ref: at(i)})
			total += size(i)
		}
		ref, err := putNode(sink, nd, total)
		return ref, total, err
	}
	var enc []byte
	for i := start; i < n; i++ {
		enc = AppendRef(enc[:0], at(i))
		if i+1-start < listMax && !boundary(enc, i+1-start) {
			continue
		}
		ref, total, err := node(i + 1)
		if err != nil {
			return nil, 0, 0, err
		}
		out.cuts, out.refs, out.sizes = append(out.cuts, i+1), append(out.refs, ref), append(out.sizes, total)
		start = i + 1
		if i+1 < n-tail {
			continue
		}
		// A boundary within the unchanged end: if the old level has one at
		// the same entry, every node after it is the same.
		j, ok := slices.BinarySearch(old.cuts, i+1-d)
		if !ok {
			continue
		}
		for k := j + 1; k < len(old.cuts); k++ {
			out.cuts = append(out.cuts, old.cuts[k]+d)
		}
		out.refs = append(out.refs, old.refs[j+1:]...)
		out.sizes = append(out.sizes, old.sizes[j+1:]...)
		back = len(old.cuts) - j - 1
		if old.open != nil {
			out.open = &listNode{cut: old.open.cut + d, ref: old.open.ref, size: old.open.size}
			back++
		}
		return out, j0, back, nil
	}
	if start < n || n == 0 {
		ref, total, err := node(n)
		if err != nil {
			return nil, 0, 0, err
		}
		out.open = &listNode{cut: n, ref: ref, size: total}
	}
	return out, j0, 0, nil
}
