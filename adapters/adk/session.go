package adk

import (
	"iter"
	"maps"
	"sync"
	"time"

	"google.golang.org/adk/session"
)

// adkSession is the session.Session this service hands out: a snapshot of
// the stored session that AppendEvent keeps up to date.
type adkSession struct {
	appName, userID, id string

	// appending serialises the service's appends to this session, so
	// that each sees the one before it in seen.
	appending sync.Mutex
	// seen is how many events the stored session held when this snapshot
	// was read, or after its last append through it. Guarded by
	// appending.
	seen int

	mu      sync.RWMutex
	state   map[string]any
	events  []*session.Event
	updated time.Time
}

var _ session.Session = (*adkSession)(nil)

func (s *adkSession) ID() string      { return s.id }
func (s *adkSession) AppName() string { return s.appName }
func (s *adkSession) UserID() string  { return s.userID }

func (s *adkSession) State() session.State { return &state{mu: &s.mu, m: &s.state} }

func (s *adkSession) Events() session.Events {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return events(s.events)
}

func (s *adkSession) LastUpdateTime() time.Time {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.updated
}

// apply records an appended event in the snapshot: the whole delta (temp:
// keys included, which last for the invocation) goes into the state, the
// event without its temp: keys into the events.
func (s *adkSession) apply(ev, stored *session.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(ev.Actions.StateDelta) > 0 {
		if s.state == nil {
			s.state = make(map[string]any)
		}
		maps.Copy(s.state, ev.Actions.StateDelta)
	}
	s.events = append(s.events, stored)
	s.updated = ev.Timestamp
	s.seen++
}

type events []*session.Event

func (e events) All() iter.Seq[*session.Event] {
	return func(yield func(*session.Event) bool) {
		for _, ev := range e {
			if !yield(ev) {
				return
			}
		}
	}
}

func (e events) Len() int { return len(e) }

func (e events) At(i int) *session.Event {
	if i >= 0 && i < len(e) {
		return e[i]
	}
	return nil
}

// state is a session's state map, guarded by the session's lock.
type state struct {
	mu *sync.RWMutex
	m  *map[string]any
}

func (s *state) Get(key string) (any, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := (*s.m)[key]
	if !ok {
		return nil, session.ErrStateKeyNotExist
	}
	return v, nil
}

func (s *state) Set(key string, value any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if *s.m == nil {
		*s.m = make(map[string]any)
	}
	(*s.m)[key] = value
	return nil
}

func (s *state) All() iter.Seq2[string, any] {
	s.mu.RLock()
	c := maps.Clone(*s.m)
	s.mu.RUnlock()
	return func(yield func(string, any) bool) {
		for k, v := range c {
			if !yield(k, v) {
				return
			}
		}
	}
}
