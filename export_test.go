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
