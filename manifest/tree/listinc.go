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
	levels []listLevel
}

// listLevel is one level of a list: cuts[i] is the end (exclusive) of
// node i among the level's entries. open says the last node ended with
// the level rather than at a boundary.
type listLevel struct {
	cuts  []int
	open  bool
	refs  []Ref
	sizes []int64
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
			olv = &old.levels[level]
		} else {
			a, tail = 0, 0
		}
		lv, na, nt, err := olv.update(typ, n, at, size, a, tail, sink)
		if err != nil {
			return nil, Ref{}, err
		}
		st.levels = append(st.levels, lv)
		if len(lv.refs) == 1 {
			return st, lv.refs[0], nil
		}
		refs, sizes := lv.refs, lv.sizes
		n, a, tail, typ = len(refs), na, nt, TypeList
		at = func(i int) Ref { return refs[i] }
		size = func(i int) int64 { return sizes[i] }
	}
}

// update returns the level over n entries (at, size), given lv, the same
// level before, over entries of which the first a and the last tail are
// unchanged (lv nil: none). It also returns how many of the new level's
// nodes are unchanged at its front and at its end.
func (lv *listLevel) update(typ byte, n int, at func(int) Ref, size func(int) int64, a, tail int, sink Sink) (out listLevel, front, back int, err error) {
	var old listLevel
	if lv != nil {
		old = *lv
	}
	oldN := 0
	if k := len(old.cuts); k > 0 {
		oldN = old.cuts[k-1]
	}
	d := n - oldN
	// Keep the nodes that end at a boundary within the unchanged front.
	j0 := sort.Search(len(old.cuts), func(j int) bool { return old.cuts[j] > a })
	if j0 == len(old.cuts) && old.open && j0 > 0 {
		j0--
	}
	start := 0
	if j0 > 0 {
		start = old.cuts[j0-1]
	}
	out.cuts = append(make([]int, 0, len(old.cuts)+2), old.cuts[:j0]...)
	out.refs = append(make([]Ref, 0, len(old.refs)+2), old.refs[:j0]...)
	out.sizes = append(make([]int64, 0, len(old.sizes)+2), old.sizes[:j0]...)
	emit := func(end int) error {
		node := &NodeData{Type: typ, Entries: make([]Entry, 0, end-start)}
		var total int64
		for i := start; i < end; i++ {
			node.Entries = append(node.Entries, Entry{Ref: at(i)})
			total += size(i)
		}
		ref, err := putNode(sink, node, total)
		if err != nil {
			return err
		}
		out.cuts, out.refs, out.sizes = append(out.cuts, end), append(out.refs, ref), append(out.sizes, total)
		start = end
		return nil
	}
	var enc []byte
	for i := start; i < n; i++ {
		enc = AppendRef(enc[:0], at(i))
		if i+1-start < listMax && !boundary(enc, i+1-start) {
			continue
		}
		if err := emit(i + 1); err != nil {
			return out, 0, 0, err
		}
		if i+1 < n-tail {
			continue
		}
		// A boundary within the unchanged end: if the old level has one at
		// the same entry, every node after it is the same.
		j, ok := slices.BinarySearch(old.cuts, i+1-d)
		if !ok || old.open && j == len(old.cuts)-1 {
			continue
		}
		for k := j + 1; k < len(old.cuts); k++ {
			out.cuts = append(out.cuts, old.cuts[k]+d)
		}
		out.refs = append(out.refs, old.refs[j+1:]...)
		out.sizes = append(out.sizes, old.sizes[j+1:]...)
		out.open = old.open
		return out, j0, len(old.cuts) - j - 1, nil
	}
	if start < n || n == 0 {
		if err := emit(n); err != nil {
			return out, 0, 0, err
		}
		out.open = true
	}
	return out, j0, 0, nil
}
