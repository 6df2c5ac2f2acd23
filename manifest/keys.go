package manifest

import (
	"fmt"
	"strconv"
	"strings"
)

// Key layout under a workspace's store. This file is the only place that
// spells a key; every other package names objects through Repo's typed
// calls (docs/architecture.md).
//
//	steps/<session>/<number, 20 digits>  step object: manifest + new blobs (pack format)
//	steps/<session>/head                 head hint: a step number, rewritten every HintEvery steps
//	steps/<session>/base.<n, 20 digits>  base marker: the session's history starts at step n (see ReadBase)
//	steps/<session>/base                 the single, overwritten base marker older cairns read; still written first
//	sessions/<session>                   marker written before a session's first step
//	packs/<session>/<number, 20 digits>  pack compacted by that step's commit (pack format, no manifest)
//	packs/<session>/<number>.<k, 6 digits> spill pack k of that step: new file chunks of a large commit
//	gc/state                             the last gc run's sweep candidates (GCState)
//	gc/clock                             empty, overwritten by each gc run to read the store's clock (Repo.gcNow)
//	pins/<session>/<nonce, 16 hex>       a fork in flight: its source, kept by gc until the fork lands (Pin)
//	pins/<session>/lock                  held by the one fork to the session writing at a time (Repo.lockForks)
const (
	stepsPrefix    = "steps/"
	sessionsPrefix = "sessions/"
	packsPrefix    = "packs/"
	pinsPrefix     = "pins/"
	hintName       = "head"
	baseName       = "base"
	forkLockName   = "lock"
	// GCStateKey holds the sweep candidates of the last gc run, under gc/,
	// a prefix no step, pack or marker uses.
	GCStateKey = "gc/state"
	// GCClockKey is an empty object each gc run overwrites, and reads
	// the time of, to measure ages on the store's clock (Repo.gcNow).
	GCClockKey = "gc/clock"
	// HintEvery is how often (in steps) a writer refreshes the head hint.
	// Head discovery lists at most this many keys past the hint.
	HintEvery = 32
)

// StepKey returns the key of step n of session.
func StepKey(session string, n uint64) string { return numberedKey(stepsPrefix, session, n) }

// numberedKey returns prefix, session, "/" and n in 20 digits (as
// fmt's %020d: a uint64 has at most 20). Every read builds the keys of
// its step's layout, dozens of them, so they are built without fmt: a
// replay of 2,000 steps spent a sixth of its time in Sprintf.
func numberedKey(prefix, session string, n uint64) string {
	b := make([]byte, len(prefix)+len(session)+21)
	i := copy(b, prefix)
	i += copy(b[i:], session)
	b[i] = '/'
	for j := len(b) - 1; j > i; j-- {
		b[j] = byte('0' + n%10)
		n /= 10
	}
	return string(b)
}

// HintKey returns the key of a session's head hint.
func HintKey(session string) string { return stepsPrefix + session + "/" + hintName }

// BaseKey returns the key of a session's base marker as cairn wrote it
// before base markers were monotonic: one object whose content is the
// base, overwritten by each prune or removal. It is still written, for
// older readers, and read (see ReadBase).
func BaseKey(session string) string { return stepsPrefix + session + "/" + baseName }

// BaseKeyAt returns the key of the base marker that sets session's base
// to n. Each prune or removal creates one, never overwrites one: the
// base is the highest, so no write, however late, can lower it.
func BaseKeyAt(session string, n uint64) string {
	return fmt.Sprintf("%s%s/%s.%020d", stepsPrefix, session, baseName, n)
}

// ParseBaseKey returns the session and step number of a key BaseKeyAt
// made; ok is false for any other key.
func ParseBaseKey(key string) (session string, n uint64, ok bool) {
	rest, ok := strings.CutPrefix(key, stepsPrefix)
	if !ok {
		return "", 0, false
	}
	session, name, ok := strings.Cut(rest, "/")
	num, isBase := strings.CutPrefix(name, baseName+".")
	if !ok || !isBase || len(num) != 20 || ValidSession(session) != nil {
		return "", 0, false
	}
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil || n == 0 || n > maxBase {
		return "", 0, false
	}
	return session, n, true
}

// stepsKeySession returns the session a key under steps/ belongs to: a
// step key, the session's head hint or one of its base markers. Any
// other key (such as another workspace's, nested under this one's
// prefix, or an operator's stray object) belongs to no session.
func stepsKeySession(key string) (session string, ok bool) {
	rest, ok := strings.CutPrefix(key, stepsPrefix)
	if !ok {
		return "", false
	}
	session, name, ok := strings.Cut(rest, "/")
	if !ok || ValidSession(session) != nil {
		return "", false
	}
	if _, _, isStep := ParseStepKey(key); isStep || name == hintName || name == baseName {
		return session, true
	}
	if _, _, isBase := ParseBaseKey(key); isBase {
		return session, true
	}
	return "", false
}

// baseListStart is where a listing of session's keys starts to see only
// its markers and hint: after every step key (all begin with 0, a step
// number being at most 2^62).
func baseListStart(session string) string { return stepsPrefix + session + "/1" }

// SessionKey returns the key of a session's marker.
func SessionKey(session string) string { return sessionsPrefix + session }

// PackKey returns the key of the compacted pack written by the commit of
// step n of session.
func PackKey(session string, n uint64) string { return numberedKey(packsPrefix, session, n) }

// ParsePackKey returns the session and step number of a pack key.
func ParsePackKey(key string) (string, uint64, bool) {
	rest, ok := strings.CutPrefix(key, packsPrefix)
	if !ok {
		return "", 0, false
	}
	return ParseStepKey(stepsPrefix + rest)
}

// SpillKey returns the key of spill pack k (from 1) of step n of session.
func SpillKey(session string, n, k uint64) string {
	return fmt.Sprintf("%s%s/%020d.%06d", packsPrefix, session, n, k)
}

// ParseSpillKey returns the session, step number and pack number of a
// spill pack's key; ok is false for any other key, including one whose
// session name is invalid.
func ParseSpillKey(key string) (session string, n, k uint64, ok bool) {
	i := strings.LastIndexByte(key, '.')
	if i < 0 || len(key)-i-1 != 6 {
		return "", 0, 0, false
	}
	base, num := key[:i], key[i+1:]
	k, err := strconv.ParseUint(num, 10, 64)
	if err != nil || k == 0 || k > MaxSpills {
		return "", 0, 0, false
	}
	session, n, ok = ParsePackKey(base)
	if !ok || ValidSession(session) != nil {
		return "", 0, 0, false
	}
	return session, n, k, true
}

// ParseStepKey returns the session and step number of a step key.
func ParseStepKey(key string) (string, uint64, bool) {
	rest, ok := strings.CutPrefix(key, stepsPrefix)
	if !ok {
		return "", 0, false
	}
	session, num, ok := strings.Cut(rest, "/")
	if !ok || len(num) != 20 {
		return "", 0, false
	}
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil || n == 0 {
		return "", 0, false
	}
	return session, n, true
}

// keySession returns the session whose data object key is (a step
// object, a pack or a spill pack), or "".
func keySession(key string) string {
	if s, _, ok := ParseStepKey(key); ok {
		return s
	}
	if s, _, _, ok := ParseSpillKey(key); ok {
		return s
	}
	if s, _, ok := ParsePackKey(key); ok {
		return s
	}
	return ""
}

// DescribeKey says in the user's words which object key is: its session
// and step, and what the object is to them ("session d, step 2", "the
// base marker of session d"). Every error that leaves this package naming
// a stored object names it so: keys are the store's layout, not words a
// user of sessions and steps knows (the operator's view, cairn verify's
// BAD lines and gc --verbose, still lists keys).
func DescribeKey(key string) string {
	if s, n, ok := ParseStepKey(key); ok {
		return fmt.Sprintf("session %s, step %d", s, n)
	}
	if s, n, k, ok := ParseSpillKey(key); ok {
		return fmt.Sprintf("session %s, large-file pack %d of step %d", s, k, n)
	}
	if s, n, ok := ParsePackKey(key); ok {
		return fmt.Sprintf("session %s, a pack of steps up to %d", s, n)
	}
	return describeOther(key)
}

// describeOther is DescribeKey for the objects that are no step or pack:
// hints, markers, pins and gc's state.
func describeOther(key string) string {
	if rest, ok := strings.CutPrefix(key, stepsPrefix); ok {
		session, name, _ := strings.Cut(rest, "/")
		if _, _, ok := ParseBaseKey(key); ok || name == baseName {
			return "the base marker of session " + session
		}
		if name == hintName {
			return "the head hint of session " + session
		}
	}
	if session, ok := strings.CutPrefix(key, sessionsPrefix); ok {
		return "the marker of session " + session
	}
	if target := pinTarget(key); target != "" {
		return "a fork pin of session " + target
	}
	if target, name, ok := strings.Cut(strings.TrimPrefix(key, pinsPrefix), "/"); ok && name == forkLockName && strings.HasPrefix(key, pinsPrefix) {
		return "the fork lock of session " + target
	}
	if key == GCStateKey {
		return "gc's saved state"
	}
	if key == GCClockKey {
		return "gc's clock object"
	}
	return describeUnknown
}

// describeUnknown is DescribeKey's words for a key of no kind it knows.
const describeUnknown = "an object of unknown kind"

// DescribePrefix says in the user's words which objects a listing of
// prefix looks for ("the steps of session d", "the sessions"), as
// DescribeKey does for one object.
func DescribePrefix(prefix string) string {
	switch prefix {
	case sessionsPrefix:
		return "the sessions"
	case stepsPrefix:
		return "the steps of every session"
	case packsPrefix:
		return "the packs of every session"
	case pinsPrefix:
		return "the fork pins"
	}
	for _, p := range []struct{ prefix, what string }{
		{stepsPrefix, "the steps of session "}, {packsPrefix, "the packs of session "}, {pinsPrefix, "the fork pins of session "},
	} {
		if rest, ok := strings.CutPrefix(prefix, p.prefix); ok {
			if session, ok := strings.CutSuffix(rest, "/"); ok && ValidSession(session) == nil {
				return p.what + session
			}
		}
	}
	return "the store's objects"
}

// DescribePlace names, for a message about what stands there instead
// (cas.NotObjectError), the place where the object key belongs ("step
// a@3", "the head hint of session a") or, if parent, a directory holding
// it ("a directory holding step a@3"); if list, or if key ends in "/"
// (no key does: a store names the directory, as the prefix that lists
// it), key is a listing's prefix ("a directory holding the steps of
// session a").
func DescribePlace(key string, list, parent bool) string {
	if strings.HasPrefix(key, ".") {
		// No key's: a dot-name is the backend's own (cas.ValidateKey),
		// as a local store's directory of temporary files.
		return "the directory " + key + " the store keeps for itself"
	}
	what := objectWords(key)
	if list || strings.HasSuffix(key, "/") {
		what = DescribePrefix(key)
	}
	if parent {
		return "a directory holding " + what
	}
	return what
}

// sessionStepsPrefix is the prefix of every key of session under steps/.
func sessionStepsPrefix(session string) string { return stepsPrefix + session + "/" }

// LayoutKeys returns the keys of every object a layout names.
func LayoutKeys(l Layout) []string {
	var keys []string
	for _, p := range l.Packs {
		keys = append(keys, p.Key())
	}
	for _, rg := range l.Steps {
		for n := rg.First; n <= rg.Last; n++ {
			keys = append(keys, StepKey(rg.Session, n))
		}
	}
	for _, sp := range l.Spills {
		for k := sp.First; k <= sp.Last; k++ {
			keys = append(keys, SpillKey(sp.Session, sp.Number, k))
		}
	}
	return keys
}

// isDataKey reports whether key is a step object's or a pack's: the
// only objects gc deletes.
func isDataKey(key string) bool {
	return strings.HasPrefix(key, stepsPrefix) || strings.HasPrefix(key, packsPrefix)
}

// pinTarget returns the session a pin's key forks to, or "".
func pinTarget(key string) string {
	if !IsPinKey(key) {
		return ""
	}
	target, _, _ := strings.Cut(strings.TrimPrefix(key, pinsPrefix), "/")
	return target
}

// PinKey returns the key of a pin with the given nonce.
func PinKey(target, nonce string) string { return pinsPrefix + target + "/" + nonce }

// ForkLockKey returns the key of the lock a fork to target holds while it
// writes (see Repo.lockForks).
func ForkLockKey(target string) string { return pinsPrefix + target + "/" + forkLockName }

// IsPinKey reports whether key is the key of a pin.
func IsPinKey(key string) bool {
	target, nonce, ok := strings.Cut(strings.TrimPrefix(key, pinsPrefix), "/")
	return strings.HasPrefix(key, pinsPrefix) && ok && ValidSession(target) == nil &&
		len(nonce) == 2*pinNonceSize && strings.Trim(nonce, "0123456789abcdef") == ""
}
