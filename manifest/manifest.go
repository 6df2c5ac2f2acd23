// Package manifest is cairn's protocol over a store: the one package that
// knows the store's key layout (keys.go) and reads or writes its objects.
//
// A session is a chain of immutable step manifests linked by parent hash,
// one per slot steps/<session>/<n>, each created with a conditional put so
// that the slot itself is the fence between writers. A step object
// (package pack) carries the manifest and the new blobs of the step, so
// committing a step is one PUT. The manifest's Layout names every object
// that holds blobs its state may use, so reading a step never scans the
// store.
//
// Repo is the entry point: Commit, Fork and GC's tombstones are the write
// path (commit.go); ReadStep, FindHead and Index the read path, bounded by
// Repo.MaxObjectBytes (repo.go, index.go); compaction (compact.go), and gc,
// usage and verify (gc.go, live.go, usage.go, verify.go) go through the
// same typed calls. See docs/architecture.md.
package manifest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/internal/wire"
	"github.com/cairnlog/cairn/manifest/tree"
)

// FormatVersion is the version of the manifest encoding and of the trees
// it names. Version 2 names packs by the step that wrote them, with a
// compaction level; version 1 manifests stay readable if they name no
// pack (no version 1 writer wrote packs). Version 3 encodes manifests as
// version 2 does, but a directory in its state may be a list of
// directory leaves (tree.TypeList over tree.TypeDir nodes) rather than
// one directory node, so that a reader of version 2 refuses it clearly
// instead of calling it corrupt; version 2 steps read as before.
// Version 4 adds the layout's spill packs (Layout.Spills): a manifest
// is written as version 4 only if its layout names some, else as
// version 3, so steps without spill packs stay readable by version 3
// readers and keep their bytes. Version 5 adds packs held in a step
// object (PackRef.InStep): a compaction's merged blobs travel in the
// step object of the commit that merged them, so that a merge costs no
// PUT of its own. A manifest is written as version 5 only if its layout
// names such a pack; older versions read as before. Version 6 adds the
// commit's idempotency key (Manifest.IdempotencyKey) after the fields of
// version 5: a manifest is written as version 6 only if its commit
// carried a key, so steps without one keep their bytes and stay
// readable by older readers.
const FormatVersion = 6

// spillVersion is the first version whose layout may name spill packs.
const spillVersion = 4

// inStepVersion is the first version whose layout may name packs held in
// step objects.
const inStepVersion = 5

// keyVersion is the first version whose manifest may carry an
// idempotency key.
const keyVersion = 6

// Status is the state of the agent loop after a step.
type Status uint8

// Statuses.
const (
	Running       Status = 0
	AwaitingInput Status = 1
	Done          Status = 2
)

var statusNames = []string{"running", "awaiting_input", "done"}

// String returns the status name used by the CLI and the APIs.
func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("status(%d)", s)
}

// ParseStatus parses a status name.
func ParseStatus(s string) (Status, error) {
	for i, n := range statusNames {
		if n == s {
			return Status(i), nil
		}
	}
	return 0, fmt.Errorf("unknown status %q (want running, awaiting_input or done)", s)
}

// StateKind says what a step's state is.
type StateKind uint8

// State kinds.
const (
	StateJSON StateKind = 1 // one JSON document
	StateDir  StateKind = 2 // a directory tree
)

// String names the kind.
func (k StateKind) String() string {
	switch k {
	case StateJSON:
		return "json"
	case StateDir:
		return "dir"
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Pointer names one step and pins its content by hash.
type Pointer struct {
	Session string
	Number  uint64
	ID      cas.ID
}

// String formats p as session@step.
func (p Pointer) String() string { return fmt.Sprintf("%s@%d", p.Session, p.Number) }

// Range is a run of step objects First..Last of one session.
type Range struct {
	Session     string
	First, Last uint64
}

// PackRef names a compacted pack by the step whose commit wrote it, and
// its compaction level: a pack merged from step objects is level 1, one
// merged from level-L packs (and anything newer) is level L+1. A pack is
// not pinned by hash: every blob in it is verified by its own id when
// read, and a commit only names a pack it created itself with a
// conditional put.
type PackRef struct {
	Session string
	Number  uint64
	Level   uint8
	// InStep says the pack is the step object of step Number (its
	// commit merged the blobs into its own step object, written with
	// the step's one conditional put: format version 5); else it is the
	// object at PackKey(Session, Number), written before the step by
	// earlier versions.
	InStep bool
}

// Key returns the key of the object holding the pack.
func (p PackRef) Key() string {
	if p.InStep {
		return StepKey(p.Session, p.Number)
	}
	return PackKey(p.Session, p.Number)
}

// MaxLevel bounds the compaction level of a pack.
const MaxLevel = 32

// SpillRef names a run of spill packs of one step: a commit whose new
// file chunks outgrow SpillThreshold writes them in packs (keys
// SpillKey(Session, Number, First..Last)) before its step object, which
// holds the rest. Spill packs hold only file chunks (leaves, never tree
// nodes), so compaction leaves them where they are: no node below them
// needs merging. A step's packs are numbered from 1; a number already
// taken (by a crashed attempt) is skipped, so one step may have several
// runs.
type SpillRef struct {
	Session     string
	Number      uint64
	First, Last uint64
}

// MaxSpills bounds the spill packs of one step (at 16 MiB a pack, 8 TiB);
// their numbers have at most six digits.
const MaxSpills = 1 << 19

// Layout names the objects holding every blob a step's state may use:
// compacted packs, then runs of step objects (level 0), then the spill
// packs of large steps. Objects are listed oldest first, and packs by
// descending level; a blob held by several objects is read from the
// first (see Compact). A blob is in at most one object of a chain
// unless compaction copied it, and compaction never merges spill packs,
// so their place in the order does not matter.
type Layout struct {
	Packs  []PackRef
	Steps  []Range
	Spills []SpillRef
}

// Manifest is one step of a session.
type Manifest struct {
	Session string
	Number  uint64
	// Parent is the previous step of the chain (nil for the first step of
	// a new session). A fork's first step has the forked step's parent.
	Parent *Pointer
	// Origin is set on the first step of a fork: the step it copies.
	Origin *Pointer
	Time   time.Time
	Status Status
	// Writer identifies the process that wrote the step (host and pid),
	// so a fenced-out writer can be told who holds the session.
	Writer string
	// Record is the step record as compact JSON (may be empty).
	Record []byte
	Kind   StateKind
	Root   tree.Ref
	Layout Layout
	// Truncated marks a step whose older history was pruned.
	Truncated bool
	// Copies is how many of the step object's blobs, the last ones, are
	// a compaction's copies of blobs older objects hold (its layout then
	// names the object as a pack: PackRef.InStep); the others are the
	// step's new blobs. Format version 5.
	Copies uint64
	// IdempotencyKey is the key the commit that wrote the step carried
	// (see ValidIdempotencyKey), or "": a retry of that commit with the
	// same key is answered with this step rather than written again
	// (Manifest.Retries). Format version 6.
	IdempotencyKey string
}

// MaxIdempotencyKey bounds the length of an idempotency key in bytes.
const MaxIdempotencyKey = 128

// IdempotencyKeyRule says in words which keys ValidIdempotencyKey takes.
const IdempotencyKeyRule = "1-128 printable ASCII characters, no spaces"

// ErrInvalidIdempotencyKey reports a key ValidIdempotencyKey refuses.
var ErrInvalidIdempotencyKey = errors.New("invalid idempotency key")

// ValidIdempotencyKey reports whether key may be a commit's idempotency
// key: 1 to MaxIdempotencyKey bytes of printable ASCII without spaces
// (a UUID, a hash in hex or base64, a caller's own "job-17/step-4").
// The error matches ErrInvalidIdempotencyKey.
func ValidIdempotencyKey(key string) error {
	if len(key) == 0 || len(key) > MaxIdempotencyKey {
		return keyError(key)
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return keyError(key)
		}
	}
	return nil
}

type keyError string

func (e keyError) Error() string {
	k := string(e)
	if len(k) > MaxIdempotencyKey+8 {
		k = k[:MaxIdempotencyKey+8] + "…"
	}
	return fmt.Sprintf("invalid idempotency key %q (%d bytes): want %s", k, len(e), IdempotencyKeyRule)
}

func (e keyError) Is(target error) bool { return target == ErrInvalidIdempotencyKey }

// Retries reports whether m, a commit about to be written, is a retry of
// o, a step already written with the same idempotency key: the same
// slot, parent, state, record and status. Time, writer and layout may
// differ: a retry is built again, perhaps in another process.
func (m *Manifest) Retries(o *Manifest) bool {
	return m.IdempotencyKey != "" && m.IdempotencyKey == o.IdempotencyKey &&
		m.Session == o.Session && m.Number == o.Number && samePointer(m.Parent, o.Parent) &&
		m.Status == o.Status && m.Kind == o.Kind && m.Root.Equal(o.Root) && bytes.Equal(m.Record, o.Record)
}

func samePointer(a, b *Pointer) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// ErrInvalidName reports a session name ValidSession refuses.
var ErrInvalidName = errors.New("invalid session name")

// ValidSession reports whether name is a valid session name: the error
// matches ErrInvalidName.
func ValidSession(name string) error {
	if len(name) == 0 || len(name) > 128 || name[0] == '.' {
		return nameError(name)
	}
	for i := 0; i < len(name); i++ {
		if !sessionByte(name[i]) {
			return nameError(name)
		}
	}
	return nil
}

// sessionByte reports whether c may appear in a session name: a byte loop
// rather than a regular expression, whose compiled {1,128} repetition
// cost every process ~0.7 ms and 1,700 allocations at start.
func sessionByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

// SessionNameRule says in words what a session name may hold: the one
// text of the rule, which every error for a bad name gives (the root
// package's SessionNameRule is this).
const SessionNameRule = "1-128 of A-Z a-z 0-9 . _ -, not starting with '.'"

type nameError string

func (e nameError) Error() string {
	return fmt.Sprintf("invalid session name %q: want %s", string(e), SessionNameRule)
}

func (e nameError) Is(target error) bool { return target == ErrInvalidName }

// Limits on decoded manifests.
const (
	MaxRecordSize = 8 << 20
	maxLayout     = 1 << 16
	maxWriter     = 256
	// MaxLayoutObjects bounds the number of objects one layout may name
	// (its packs plus every step object of its ranges), and so what a
	// reader of a step allocates for them. A compacting writer names
	// O(fanout * log(steps)) objects; only a session of more than this
	// many steps written with compaction off reaches it, and its next
	// commit is refused rather than written unreadable.
	MaxLayoutObjects = 1 << 20
)

// Check reports an error (wrapping cas.ErrCorrupt) if l cannot be the
// layout of step n: an object numbered above n (a step's layout names
// only objects written before or with it), an empty or inverted range,
// or more than MaxLayoutObjects objects in all.
func (l Layout) Check(n uint64) error {
	if msg := l.problem(n); msg != "" {
		return fmt.Errorf("%w: %s", cas.ErrCorrupt, msg)
	}
	return nil
}

func (l Layout) problem(n uint64) string {
	total := uint64(len(l.Packs))
	for _, p := range l.Packs {
		if p.Number == 0 || p.Number > n {
			return fmt.Sprintf("layout of step %d names pack %s@%d", n, p.Session, p.Number)
		}
	}
	for _, r := range l.Steps {
		if r.First == 0 || r.First > r.Last || r.Last > n {
			return fmt.Sprintf("layout of step %d names step range %s@%d..%d", n, r.Session, r.First, r.Last)
		}
		if total += r.Last - r.First + 1; total > MaxLayoutObjects {
			break
		}
	}
	for _, sp := range l.Spills {
		if sp.Number == 0 || sp.Number > n || sp.First == 0 || sp.First > sp.Last || sp.Last > MaxSpills {
			return fmt.Sprintf("layout of step %d names spill packs %d..%d of step %s@%d", n, sp.First, sp.Last, sp.Session, sp.Number)
		}
		if total += sp.Last - sp.First + 1; total > MaxLayoutObjects {
			break
		}
	}
	if total > MaxLayoutObjects {
		return fmt.Sprintf("layout of step %d names more than %d objects", n, MaxLayoutObjects)
	}
	return ""
}

// Encode returns the canonical bytes of m; the step id is their hash.
func (m *Manifest) Encode() []byte {
	out := []byte("CRNM")
	// The oldest version that can say what the layout holds, so that a
	// step keeps the bytes (and readers) it had before a later version.
	v := byte(spillVersion - 1)
	if len(m.Layout.Spills) > 0 {
		v = spillVersion
	}
	for _, p := range m.Layout.Packs {
		if p.InStep {
			v = inStepVersion
		}
	}
	if m.Copies > 0 {
		v = inStepVersion
	}
	if m.IdempotencyKey != "" {
		v = keyVersion
	}
	out = append(out, v)
	out = appendString(out, m.Session)
	out = binary.AppendUvarint(out, m.Number)
	out = appendPointer(out, m.Parent)
	out = appendPointer(out, m.Origin)
	out = binary.AppendVarint(out, m.Time.UnixNano())
	out = append(out, byte(m.Status), byte(m.Kind))
	flags := byte(0)
	if m.Truncated {
		flags |= 1
	}
	out = append(out, flags)
	out = appendString(out, m.Writer)
	out = binary.AppendUvarint(out, uint64(len(m.Record)))
	out = append(out, m.Record...)
	out = tree.AppendRef(out, m.Root)
	out = binary.AppendUvarint(out, uint64(len(m.Layout.Packs)))
	for _, p := range m.Layout.Packs {
		out = append(out, p.Level)
		// Bit 0: another session's pack (its name follows); bit 1: a
		// pack held in a step object (version 5).
		flag := byte(0)
		if p.InStep {
			flag = 2
		}
		if p.Session == m.Session {
			out = append(out, flag)
		} else {
			out = append(out, flag|1)
			out = appendString(out, p.Session)
		}
		out = binary.AppendUvarint(out, p.Number)
	}
	out = binary.AppendUvarint(out, uint64(len(m.Layout.Steps)))
	for _, r := range m.Layout.Steps {
		out = appendString(out, r.Session)
		out = binary.AppendUvarint(out, r.First)
		out = binary.AppendUvarint(out, r.Last)
	}
	if v >= spillVersion { // version 4 names at least one; later versions any number
		out = binary.AppendUvarint(out, uint64(len(m.Layout.Spills)))
		for _, sp := range m.Layout.Spills {
			out = appendString(out, sp.Session)
			out = binary.AppendUvarint(out, sp.Number)
			out = binary.AppendUvarint(out, sp.First)
			out = binary.AppendUvarint(out, sp.Last)
		}
	}
	if v >= inStepVersion {
		out = binary.AppendUvarint(out, m.Copies)
	}
	if v >= keyVersion {
		out = appendString(out, m.IdempotencyKey)
	}
	return out
}

func appendString(out []byte, s string) []byte {
	out = binary.AppendUvarint(out, uint64(len(s)))
	return append(out, s...)
}

func appendPointer(out []byte, p *Pointer) []byte {
	if p == nil {
		return append(out, 0)
	}
	out = append(out, 1)
	out = appendString(out, p.Session)
	out = binary.AppendUvarint(out, p.Number)
	return append(out, p.ID[:]...)
}

// decoder reads a manifest's fields; its faults are ErrCorrupt naming
// what was read.
type decoder struct{ wire.Reader }

func newDecoder(p []byte, what string) *decoder {
	return &decoder{wire.Reader{P: p, Fault: func(msg string) error {
		return fmt.Errorf("%w: %s: %s", cas.ErrCorrupt, what, msg)
	}}}
}

func (d *decoder) session() string {
	s := string(d.Take(d.Uvarint(128)))
	if d.Err == nil {
		if err := ValidSession(s); err != nil {
			d.Fail("%v", err)
		}
	}
	return s
}

func (d *decoder) pointer() *Pointer {
	switch d.Byte() {
	case 0:
		return nil
	case 1:
		p := &Pointer{Session: d.session(), Number: d.Uvarint(1 << 62)}
		copy(p.ID[:], d.Take(cas.IDSize))
		return p
	}
	d.Fail("bad pointer flag")
	return nil
}

// Decode parses manifest bytes. what names the manifest in errors.
func Decode(b []byte, what string) (*Manifest, error) {
	d := newDecoder(b, what)
	if string(d.Take(4)) != "CRNM" {
		d.Fail("bad magic")
		return nil, d.Err
	}
	v := d.Byte()
	if (v < 1 || v > FormatVersion) && d.Err == nil {
		d.Fail("unsupported manifest version %d", v)
	}
	m := &Manifest{}
	m.Session = d.session()
	m.Number = d.Uvarint(1 << 62)
	m.Parent = d.pointer()
	m.Origin = d.pointer()
	if d.Err == nil {
		t, n := binary.Varint(d.P)
		if n <= 0 {
			d.Fail("bad time")
		} else {
			d.P = d.P[n:]
			m.Time = time.Unix(0, t).UTC()
		}
	}
	m.Status = Status(d.Byte())
	m.Kind = StateKind(d.Byte())
	flags := d.Byte()
	m.Truncated = flags&1 != 0
	m.Writer = string(d.Take(d.Uvarint(maxWriter)))
	// A copy, as every other field is: a manifest outlives the object
	// it was read from (a walk down a history holds its steps), and a
	// record aliasing it pinned the whole object, blobs and any pack a
	// compaction merged into it included.
	m.Record = bytes.Clone(d.Take(d.Uvarint(MaxRecordSize)))
	if d.Err == nil {
		switch {
		case m.Number == 0:
			d.Fail("step 0")
		case m.Status > Done:
			d.Fail("unknown status %d", m.Status)
		case m.Kind != StateJSON && m.Kind != StateDir:
			d.Fail("unknown state kind %d", m.Kind)
		case flags > 1:
			d.Fail("unknown flags %#x", flags)
		case m.Parent != nil && m.Parent.Number >= m.Number:
			d.Fail("parent step %d is not before step %d", m.Parent.Number, m.Number)
		}
	}
	if d.Err == nil {
		ref, rest, err := tree.ReadRef(d.P, what)
		if err != nil {
			return nil, err
		}
		ref.Data = bytes.Clone(ref.Data) // an inline state: a copy, as Record
		m.Root, d.P = ref, rest
	}
	n := d.Uvarint(maxLayout)
	if n > 0 && v < 2 && d.Err == nil {
		d.Fail("version 1 layout names packs")
	}
	if n > 0 && d.Err == nil {
		// Sized once (each ref takes 3 bytes or more, so a hostile count
		// allocates no more than the manifest's bytes allow): a walk holds
		// many layouts, and appending doubled each one's share of memory.
		m.Layout.Packs = make([]PackRef, 0, min(n, uint64(len(d.P))/3))
	}
	for i := uint64(0); i < n && d.Err == nil; i++ {
		p := PackRef{Level: d.Byte(), Session: m.Session}
		flag := d.Byte()
		if flag > 3 || flag&2 != 0 && v < inStepVersion {
			d.Fail("bad pack flag %d", flag)
		}
		p.InStep = flag&2 != 0
		if flag&1 != 0 {
			p.Session = d.session()
		}
		p.Number = d.Uvarint(1 << 62)
		if d.Err == nil && (p.Level == 0 || p.Level > MaxLevel || p.Number == 0) {
			d.Fail("bad pack %s@%d level %d", p.Session, p.Number, p.Level)
		}
		m.Layout.Packs = append(m.Layout.Packs, p)
	}
	n = d.Uvarint(maxLayout)
	for i := uint64(0); i < n && d.Err == nil; i++ {
		r := Range{Session: d.session(), First: d.Uvarint(1 << 62), Last: d.Uvarint(1 << 62)}
		if d.Err == nil && (r.First == 0 || r.First > r.Last) {
			d.Fail("bad step range %d..%d", r.First, r.Last)
		}
		m.Layout.Steps = append(m.Layout.Steps, r)
	}
	if v >= spillVersion && d.Err == nil {
		n = d.Uvarint(maxLayout)
		if n == 0 && v == spillVersion && d.Err == nil {
			d.Fail("version %d layout names no spill packs", v)
		}
		for i := uint64(0); i < n && d.Err == nil; i++ {
			sp := SpillRef{Session: d.session(), Number: d.Uvarint(1 << 62), First: d.Uvarint(MaxSpills), Last: d.Uvarint(MaxSpills)}
			if d.Err == nil && (sp.Number == 0 || sp.First == 0 || sp.First > sp.Last) {
				d.Fail("bad spill packs %s@%d", sp.Session, sp.Number)
			}
			m.Layout.Spills = append(m.Layout.Spills, sp)
		}
	}
	if v >= inStepVersion {
		m.Copies = d.Uvarint(pack.MaxBlobs)
		inStep := m.Copies > 0
		for _, p := range m.Layout.Packs {
			inStep = inStep || p.InStep
		}
		if !inStep && v == inStepVersion && d.Err == nil {
			d.Fail("version %d layout names no pack in a step object", v) // not canonical
		}
	}
	if v >= keyVersion && d.Err == nil {
		// Canonical: a step without a key is written as an older version.
		m.IdempotencyKey = string(d.Take(d.Uvarint(MaxIdempotencyKey)))
		if err := ValidIdempotencyKey(m.IdempotencyKey); err != nil && d.Err == nil {
			d.Fail("%v", err)
		}
	}
	if d.Err == nil {
		if msg := m.Layout.problem(m.Number); msg != "" {
			d.Fail("%s", msg)
		}
	}
	if d.Err == nil && len(d.P) != 0 {
		d.Fail("%d trailing bytes", len(d.P))
	}
	if d.Err != nil {
		return nil, d.Err
	}
	return m, nil
}
