package cairn

import (
	"time"

	"github.com/cairnlog/cairn/manifest"
)

// StepManifest returns a copy of a step's manifest, for tests.
func StepManifest(st *Step) manifest.Manifest { return *st.m.Manifest }

// SetClock makes w's sessions measure how long they have held their
// heads by now (tests of manifest.HeadTrust).
func SetClock(w *Workspace, now func() time.Time) { w.now = now }

// SetForkWait sets how long w's steps put beside a fork to their
// session's name wait for it to end (manifest.Repo.ForkWait).
func SetForkWait(w *Workspace, d time.Duration) { w.repo.ForkWait = d }

// SessionHolds reports whether s holds a head, index or document in
// memory (tests of Workspace.Close).
func SessionHolds(s *Session) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.head != nil || s.index != nil || s.doc != nil
}
