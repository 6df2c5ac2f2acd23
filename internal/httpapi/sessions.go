package httpapi

import (
	"container/list"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/cairnlog/cairn"
)

// table holds the sessions that requests are using, and a bounded number
// of idle ones, so that a session's cached head survives from one request
// to the next without the server keeping every name it was ever asked
// about. A session evicted from the table is forgotten by the workspace
// too. Each session that has waiters gets one poller, shared by them all.
type table struct {
	ws       *cairn.Workspace
	maxIdle  int
	maxBytes int64 // bound of the idle entries' weights together
	minPoll  time.Duration
	maxPoll  time.Duration
	// sleep returns a channel that fires after d; tests replace it to
	// drive pollers without a clock.
	sleep func(d time.Duration) <-chan time.Time

	mu        sync.Mutex
	entries   map[string]*entry
	idle      list.List // of *entry with refs == 0, least recently used first
	idleBytes int64     // the weights of the idle entries
}

// entry is one session in the table.
type entry struct {
	name string
	sess *cairn.Session
	refs int           // requests using the entry
	elem *list.Element // in table.idle while refs == 0
	// weight estimates the bytes the workspace holds for the session:
	// the size of the last state committed through the server, which
	// the session keeps cached with its head.
	weight int64

	// news is closed, and replaced, whenever a newer head becomes known:
	// committed through this server, or found by the poller.
	news    chan struct{}
	head    *cairn.Step // the newest head known, or nil
	removed bool        // the poller found the session removed
	waiters int
	stop    chan struct{} // closed to end the poller; nil when none runs
}

func newTable(ws *cairn.Workspace, maxIdle int, maxBytes int64, minPoll, maxPoll time.Duration) *table {
	return &table{
		ws: ws, maxIdle: maxIdle, maxBytes: maxBytes, minPoll: minPoll, maxPoll: maxPoll,
		sleep:   time.After,
		entries: map[string]*entry{},
	}
}

// acquire returns the entry for session name, creating it if needed; the
// caller must release it. A bad name is an error in the API's words.
func (t *table) acquire(name string) (*entry, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entries[name]
	if !ok {
		sess, err := t.ws.Session(name)
		if err != nil {
			return nil, badSession(name)
		}
		e = &entry{name: name, sess: sess, news: make(chan struct{})}
		t.entries[name] = e
	}
	if e.elem != nil {
		t.idle.Remove(e.elem)
		e.elem = nil
		t.idleBytes -= e.weight
	}
	e.refs++
	return e, nil
}

// weigh records a commit of a whole state of n bytes to e's session, or
// (patch) of a patch of n bytes to its state, for entry.weight.
func (t *table) weigh(e *entry, n int64, patch bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if patch {
		n += e.weight
	}
	e.weight = n
}

// release ends one use of e. An unused entry joins the idle list; the
// least recently used idle entries beyond maxIdle, or beyond maxBytes of
// weight together, are dropped.
func (t *table) release(e *entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e.refs--
	if e.refs > 0 {
		return
	}
	e.head = nil // only waiters need it; an idle entry keeps just its session
	e.elem = t.idle.PushBack(e)
	t.idleBytes += e.weight
	for t.idle.Len() > t.maxIdle || t.idleBytes > t.maxBytes {
		old := t.idle.Remove(t.idle.Front()).(*entry)
		old.elem = nil
		t.idleBytes -= old.weight
		delete(t.entries, old.name)
		t.ws.Forget(old.sess)
	}
}

// size returns how many entries the table holds, in use and idle.
func (t *table) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.entries)
}

// publish records st as e's head if it is newer than the head known, and
// wakes e's waiters. It reports whether st was news.
func (t *table) publish(e *entry, st *cairn.Step) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e.head != nil && st.Number <= e.head.Number {
		return false
	}
	e.head = st
	e.removed = false
	close(e.news)
	e.news = make(chan struct{})
	return true
}

// latest returns the channel closed at the next news about e, the
// newest head known, and whether the poller found the session removed.
func (t *table) latest(e *entry) (<-chan struct{}, *cairn.Step, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return e.news, e.head, e.removed
}

// publishRemoved records that the poller found e's session removed, and
// wakes e's waiters, who then answer so.
func (t *table) publishRemoved(e *entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e.removed {
		return
	}
	e.removed = true
	close(e.news)
	e.news = make(chan struct{})
}

// addWaiter registers a waiter on e, starting e's poller for the first.
func (t *table) addWaiter(e *entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e.waiters++
	if e.waiters == 1 {
		e.stop = make(chan struct{})
		go t.poll(e, e.stop)
	}
}

// removeWaiter ends a waiter on e, stopping e's poller after the last.
func (t *table) removeWaiter(e *entry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e.waiters--
	if e.waiters == 0 {
		close(e.stop)
		e.stop = nil
	}
}

// poll re-reads e's head from the store, for steps written by other
// processes, until stop is closed: first after minPoll, then at intervals
// that double up to maxPoll while nothing changes. One poller serves all
// of a session's waiters, so idle waiters cost the store one head read
// per interval whatever their number.
func (t *table) poll(e *entry, stop <-chan struct{}) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-stop
		cancel()
	}()
	interval := t.minPoll
	for {
		select {
		case <-stop:
			return
		case <-t.sleep(interval):
		}
		st, err := e.sess.Head(ctx)
		if err == nil && t.publish(e, st) {
			interval = t.minPoll
			continue
		}
		if errors.Is(err, cairn.ErrRemoved) {
			t.publishRemoved(e)
		}
		if errors.Is(err, cairn.ErrClosed) {
			// The workspace was closed under the server: it is not to be
			// used again, and its waiters are left to their deadlines.
			return
		}
		interval = min(2*interval, t.maxPoll)
	}
}
