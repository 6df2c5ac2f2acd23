package export

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cairnlog/cairn"
)

// A framework adapter's session too long to hold (long.go) is read as
// fromState reads a held one, a step at a time: fromState counts each
// step's elements of the conversation (the diff with the step before,
// or the state read whole where the diff does not say), reads the
// newest state's list whole and hands its elements out by those counts.
// Here a check pass after the first pass counts them as fromState does,
// finding what makes it stop (a step that rewrote the conversation, a
// state that is not the adapter's) and the newest step that holds the
// conversation; each later read of the path counts them again as it
// goes, and reads the newest state's elements one at a time, in order,
// from the state as it is written out (stateElements), handing each
// step its own. What it holds is one element and the counts of two
// steps; a step whose diff does not say is read whole, as held.

// adapterPath is what the check pass learned of a long adapter session.
type adapterPath struct {
	c stateChat
	// none is set if fromState gives no step messages (a step rewrote
	// the conversation, or a state is not the adapter's): the adapter's
	// steps then have empty records, but those from keep, from on, the
	// records as parsed (fromState stopped before them).
	none bool
	keep int
	// broken are the steps (by index on the path) that are Broken.
	broken map[int]error
	// newest is the newest step that holds the conversation, at index
	// newestAt, and count the elements its list holds.
	newest   *cairn.Step
	newestAt int
	count    int
}

// counter counts the elements of the conversation in the states of a
// path's steps, oldest first, as fromState does.
type counter struct {
	ws      *cairn.Workspace
	ctx     context.Context
	c       stateChat
	prev    *cairn.Step // the last step that holds the conversation
	had     int         // its count
	checked bool        // compare a step read whole with the one before (fromState's check)
}

// readElems reads the elements of st's state whole, as fromState's read:
// broken is set if the state is not the adapter's.
func readElems(ctx context.Context, c stateChat, st *cairn.Step) (elems []json.RawMessage, broken error, err error) {
	state, err := st.JSON(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("read the conversation of %s: %w", st, err)
	}
	elems, _, err = c.elements(state)
	if err != nil {
		return nil, &stateChatError{fmt.Errorf("%s: %v", c.where(st.Record), err)}, nil
	}
	return elems, nil, nil
}

// next counts the elements of st, the next step that holds the
// conversation. With checked, it says as fromState does whether st
// rewrote the conversation before it, or whether st's state (or, when
// compared, prev's) is not the adapter's: stop is then set, with the
// Broken of st or of prev (brokenPrev).
func (k *counter) next(st *cairn.Step) (n int, stop bool, broken, brokenPrev error, err error) {
	if k.prev != nil {
		n, known, rewritten, err := appended(k.ctx, k.ws, k.prev, st, k.c.pointer(), k.had)
		if err != nil {
			return 0, false, nil, nil, err
		}
		if rewritten {
			return 0, true, rewroteError(k.c, st), nil, nil
		}
		if known {
			k.prev, k.had = st, n
			return n, false, nil, nil, nil
		}
	}
	elems, broken, err := readElems(k.ctx, k.c, st)
	if err != nil || broken != nil {
		return 0, broken != nil, broken, nil, err
	}
	if k.checked && k.prev != nil && k.had > 0 {
		before, brokenPrev, err := readElems(k.ctx, k.c, k.prev)
		if err != nil || brokenPrev != nil {
			return 0, brokenPrev != nil, nil, brokenPrev, err
		}
		if !samePrefix(before, elems) {
			return 0, true, rewroteError(k.c, st), nil, nil
		}
	}
	k.prev, k.had = st, len(elems)
	return len(elems), false, nil, nil, nil
}

func rewroteError(c stateChat, st *cairn.Step) error {
	return &stateChatError{fmt.Errorf("%s removed or changed messages of the conversation before it, so its steps are not one conversation", c.where(st.Record))}
}

// checkAdapter is the check pass of l, an adapter c's session: see the
// comment at the top of this file.
func (l *longPath) checkAdapter(c stateChat) error {
	a := &adapterPath{c: c, keep: l.n, broken: map[int]error{}}
	k := &counter{ws: l.ws, ctx: l.ctx, c: c, checked: true}
	i := -1
	err := l.eachStep(func(st *cairn.Step) error {
		i++
		reads, ok := c.step(st.Record)
		if !ok || !reads {
			return nil
		}
		n, stop, broken, brokenPrev, err := k.next(st)
		if err != nil {
			return err
		}
		if stop {
			a.none, a.keep = true, i+1
			if broken != nil {
				a.broken[i] = broken
			}
			if brokenPrev != nil {
				a.broken[a.newestAt] = brokenPrev
			}
			return errEnough
		}
		a.newest, a.newestAt, a.count = st, i, n
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return err
	}
	if !a.none && a.newest != nil {
		// fromState reads the newest state whole: its list must hold
		// what the steps added, and a state that is not the adapter's
		// leaves every step without messages.
		n := 0
		broken, err := stateElements(l.ctx, c, a.newest, func(json.RawMessage) error { n++; return nil })
		switch {
		case err != nil:
			return err
		case broken != nil:
			a.none = true
			a.broken[a.newestAt] = broken
		case n != a.count:
			return fmt.Errorf("read the conversation of %s: %d messages, but its steps added %d", a.newest, n, a.count)
		}
	}
	l.adapter = a
	return nil
}

// eachAdapted calls fn with each step of l, an adapter's session, from
// its index from on, oldest first, its record what fromState gives it
// (not yet settled: see eachSettled).
func (l *longPath) eachAdapted(from int, fn func(Step) error) error {
	a := l.adapter
	k := &counter{ws: l.ws, ctx: l.ctx, c: a.c}
	var (
		elems  *elemReader // the newest state's elements, read in order
		next   int         // the index of the next element
		halted bool        // a step's elements did not convert: no more are read
	)
	defer func() {
		if elems != nil {
			elems.close()
		}
	}()
	i := -1
	return l.eachStep(func(st *cairn.Step) error {
		i++
		s := stepOf(st)
		if a.none && i >= a.keep {
			return emitFrom(i, from, s, fn)
		}
		reads, ok := a.c.step(st.Record)
		if !ok {
			return emitFrom(i, from, s, fn)
		}
		s.Rec = &cairn.Record{}
		if b := a.broken[i]; b != nil {
			s.Broken = b
		}
		if a.none || !reads || halted || i > a.newestAt {
			return emitFrom(i, from, s, fn)
		}
		n, _, _, _, err := k.next(st)
		if err != nil {
			return err
		}
		if elems == nil {
			elems = newElemReader(l.ctx, a.c, a.newest)
		}
		rec := s.Rec
		for ; next < n; next++ {
			el, err := elems.next()
			if err != nil {
				return fmt.Errorf("read the conversation of %s again: %w", a.newest, err)
			}
			msgs, model, tokens, err := a.c.convert(el)
			if err != nil {
				s.Broken = &stateChatError{fmt.Errorf("%s: message %d: %v", a.c.where(s.Record), next+1, err)}
				s.Rec, halted = nil, true
				break
			}
			addConverted(rec, msgs, model, tokens)
		}
		return emitFrom(i, from, s, fn)
	})
}

func emitFrom(i, from int, s Step, fn func(Step) error) error {
	if i < from {
		return nil
	}
	return fn(s)
}

// foldAdapted sets what the first pass learned of l's messages (their
// count, the newest model and tools, the tool call ids a fresh one must
// not take, the raw records) from the steps as fromState gives them.
func (l *longPath) foldAdapted() error {
	l.msgs, l.raw, l.model, l.tools, l.toolsSeen = 0, 0, "", nil, false
	return l.eachAdapted(0, func(s Step) error {
		settle(&s, l.adapter.c)
		if s.Rec == nil && len(s.Record) > 0 {
			l.raw++
		}
		r := s.Rec
		if r == nil {
			return nil
		}
		l.msgs += len(r.Messages)
		if r.Model != "" {
			l.model = r.Model
		}
		if r.Tools != nil {
			l.toolsSeen, l.tools = true, nil
			if len(r.Tools) > 0 {
				l.tools = r.Tools
			}
		}
		l.takeIDs(r.Messages)
		return nil
	})
}

// settle gives s's tool calls their arguments as exporter.trajectory
// does: a step whose arguments cannot be read is Broken, said of the
// adapter's step if c is set.
func settle(s *Step, c stateChat) {
	if s.Rec == nil {
		return
	}
	if err := settleArguments(s.Rec); err != nil {
		s.Rec, s.Broken = nil, fmt.Errorf("step record: %w", err)
		if c != nil {
			s.Broken = &stateChatError{fmt.Errorf("%s: %w", c.where(s.Record), err)}
		}
	}
}

// errIrregular says a state is not of the simple shape stateElements
// reads as it is written out: it is then read whole.
var errIrregular = errors.New("irregular state")

// elemReader reads the elements of the conversation in a state one at a
// time, in order, as the state is written out.
type elemReader struct {
	ch     chan elemOrErr
	cancel context.CancelFunc
}

type elemOrErr struct {
	el  json.RawMessage
	err error
}

func newElemReader(ctx context.Context, c stateChat, st *cairn.Step) *elemReader {
	ctx, cancel := context.WithCancel(ctx)
	r := &elemReader{ch: make(chan elemOrErr), cancel: cancel}
	go func() {
		defer close(r.ch)
		broken, err := stateElements(ctx, c, st, func(el json.RawMessage) error {
			select {
			case r.ch <- elemOrErr{el: el}:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		if err == nil && broken != nil {
			err = broken // checkAdapter found none
		}
		if err == nil {
			err = io.EOF
		}
		select {
		case r.ch <- elemOrErr{err: err}:
		case <-ctx.Done():
		}
	}()
	return r
}

func (r *elemReader) next() (json.RawMessage, error) {
	e, ok := <-r.ch
	if !ok {
		return nil, io.ErrUnexpectedEOF
	}
	if e.err == io.EOF {
		return nil, fmt.Errorf("fewer messages than its steps added")
	}
	return e.el, e.err
}

func (r *elemReader) close() {
	r.cancel()
	for range r.ch {
	}
}

// stateElements calls fn with each element of the conversation in st's
// state, as c.elements returns them, reading the state as it is written
// out (Step.WriteJSON) rather than whole; broken is set if the state is
// not the adapter's, as fromState's read says it. A state of a shape it
// does not read this way (a key spelt otherwise than the adapter writes
// it, a value of another kind on the way to the list) is read whole.
func stateElements(ctx context.Context, c stateChat, st *cairn.Step, fn func(json.RawMessage) error) (broken error, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := st.WriteJSON(ctx, pw)
		pw.CloseWithError(err)
		done <- err
	}()
	n := 0
	err = streamList(json.NewDecoder(pr), c, func(el json.RawMessage) error { n++; return fn(el) })
	pr.CloseWithError(errStopped)
	werr := <-done
	if werr != nil && !errors.Is(werr, errStopped) && !errors.Is(werr, io.ErrClosedPipe) {
		return nil, fmt.Errorf("read the conversation of %s: %w", st, werr)
	}
	if !errors.Is(err, errIrregular) {
		return nil, err
	}
	if n > 0 {
		// Found irregular after elements were handed out: cannot be,
		// as only what lies before the list is checked.
		return nil, fmt.Errorf("read the conversation of %s: %w", st, err)
	}
	elems, broken, err := readElems(ctx, c, st)
	if err != nil || broken != nil {
		return broken, err
	}
	for _, el := range elems {
		if err := fn(el); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

var errStopped = errors.New("stopped reading")

// streamList finds the list at c.pointer() in the JSON text dec reads
// and calls fn with each of its elements; a state that holds no list
// there (null on the way, no such key) has none. A shape c.elements
// might read otherwise is errIrregular.
func streamList(dec *json.Decoder, c stateChat, fn func(json.RawMessage) error) error {
	path := strings.Split(strings.TrimPrefix(c.pointer(), "/"), "/")
	_, needVersion := c.(adkChat)
	return streamLevel(dec, path, needVersion, fn)
}

func streamLevel(dec *json.Decoder, path []string, needVersion bool, fn func(json.RawMessage) error) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil // null: no list
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return errIrregular
	}
	version := false
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := kt.(string)
		switch {
		case key == path[0] && len(path) > 1:
			return streamLevel(dec, path[1:], false, fn)
		case key == path[0]:
			if needVersion && !version {
				return errIrregular
			}
			return streamElems(dec, fn)
		case needVersion && key == "adk_session":
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return err
			}
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil || n == 0 || n != int64(int(n)) {
				return errIrregular
			}
			version = true
		case strings.EqualFold(key, path[0]) || needVersion && strings.EqualFold(key, "adk_session"):
			return errIrregular
		default:
			if err := skipValue(dec); err != nil {
				return err
			}
		}
	}
	return nil // no such key: no list
}

func streamElems(dec *json.Decoder, fn func(json.RawMessage) error) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		return nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return errIrregular
	}
	for dec.More() {
		var el json.RawMessage
		if err := dec.Decode(&el); err != nil {
			return err
		}
		if err := fn(el); err != nil {
			return err
		}
	}
	_, err = dec.Token()
	return err
}

// skipValue reads past the next value, a token at a time.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				depth++
			default:
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}
