package cairn

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/cairnlog/cairn/manifest"
	"github.com/cairnlog/cairn/manifest/tree"
)

// Limits bound what a reader builds from stored bytes, so that a hostile
// or corrupt store cannot make it allocate or write without bound (see
// docs/limits.md). A zero field takes its default; a negative one is a
// mistake, which SetLimits refuses.
type Limits struct {
	// MaxObjectBytes bounds the size of one object read from the store
	// (a step object or a pack). Default 4 GiB.
	MaxObjectBytes int64
	// MaxValueBytes bounds the bytes of one materialised value: a JSON
	// state, a file written by checkout. Default 64 GiB.
	MaxValueBytes int64
	// MaxTotalBytes bounds the bytes one read writes in all: a whole
	// checkout or show of a state, every file of it together, however
	// many files name the same stored content. Default 64 GiB.
	MaxTotalBytes int64
	// MaxDepth bounds the nesting of tree nodes. Default 528.
	MaxDepth int
	// MaxForkLevels bounds the forks of forks a read of a step below a
	// fork's first step passes through (Session.Step: a LIST and a GET
	// each). Default 65,536.
	MaxForkLevels int
}

// DefaultLimits are the limits of a workspace unless SetLimits says otherwise.
var DefaultLimits = Limits{
	MaxObjectBytes: 4 << 30,
	MaxValueBytes:  64 << 30,
	MaxTotalBytes:  64 << 30,
	MaxDepth:       528,
	MaxForkLevels:  manifest.MaxForkLevels,
}

// Environment variables read by LimitsFromEnv.
const (
	EnvMaxObjectBytes = "CAIRN_MAX_OBJECT_BYTES"
	EnvMaxValueBytes  = "CAIRN_MAX_VALUE_BYTES"
	EnvMaxTotalBytes  = "CAIRN_MAX_TOTAL_BYTES"
	EnvMaxDepth       = "CAIRN_MAX_DEPTH"
	EnvMaxForkLevels  = "CAIRN_MAX_FORK_LEVELS"
)

// LimitsFromEnv returns DefaultLimits overridden by $CAIRN_MAX_OBJECT_BYTES,
// $CAIRN_MAX_VALUE_BYTES, $CAIRN_MAX_TOTAL_BYTES, $CAIRN_MAX_DEPTH and
// $CAIRN_MAX_FORK_LEVELS (positive integers).
func LimitsFromEnv() (Limits, error) {
	l := DefaultLimits
	for _, v := range []struct {
		name string
		set  func(int64)
	}{
		{EnvMaxObjectBytes, func(n int64) { l.MaxObjectBytes = n }},
		{EnvMaxValueBytes, func(n int64) { l.MaxValueBytes = n }},
		{EnvMaxTotalBytes, func(n int64) { l.MaxTotalBytes = n }},
		{EnvMaxDepth, func(n int64) { l.MaxDepth = int(min(n, 1<<20)) }},
		{EnvMaxForkLevels, func(n int64) { l.MaxForkLevels = int(min(n, 1<<30)) }},
	} {
		s := os.Getenv(v.name)
		if s == "" {
			continue
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return Limits{}, invalid(fmt.Errorf("$%s=%q: want a positive integer", v.name, s))
		}
		v.set(n)
	}
	return l, nil
}

func (l Limits) withDefaults() Limits {
	if l.MaxObjectBytes <= 0 {
		l.MaxObjectBytes = DefaultLimits.MaxObjectBytes
	}
	if l.MaxValueBytes <= 0 {
		l.MaxValueBytes = DefaultLimits.MaxValueBytes
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = DefaultLimits.MaxTotalBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultLimits.MaxDepth
	}
	if l.MaxForkLevels <= 0 {
		l.MaxForkLevels = DefaultLimits.MaxForkLevels
	}
	return l
}

// check reports a negative field of l: a mistake (there is no
// "unlimited"; a limit as large as the platform allows is
// math.MaxInt64, or math.MaxInt for MaxDepth), not a request for the
// default, which is zero.
func (l Limits) check() error {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"MaxObjectBytes", l.MaxObjectBytes},
		{"MaxValueBytes", l.MaxValueBytes},
		{"MaxTotalBytes", l.MaxTotalBytes},
		{"MaxDepth", int64(l.MaxDepth)},
		{"MaxForkLevels", int64(l.MaxForkLevels)},
	} {
		if f.v < 0 {
			return invalid(fmt.Errorf("Limits.%s is negative (%d): want 0 for the default or a positive bound (there is no unlimited)", f.name, f.v))
		}
	}
	return nil
}

// SetLimits sets the workspace's read limits; a zero field takes its
// default. A negative field is an error matching ErrInvalid, and the
// limits stay as they were. Set them before use: limits lowered after
// reads hold for every read after, whatever the earlier ones cached (a
// state now over them is refused, naming the limit, with nothing
// written), but a read in progress goes on under those it began with.
// After Close it fails with ErrClosed.
func (w *Workspace) SetLimits(l Limits) error {
	if err := w.enter("set limits"); err != nil {
		return err
	}
	defer w.exit()
	if err := l.check(); err != nil {
		return err
	}
	l = l.withDefaults()
	// SetLimits may run beside reads and beside itself: the limits are
	// set under limitsMu, so a read takes one whole set of them.
	w.limitsMu.Lock()
	defer w.limitsMu.Unlock()
	w.limits = l
	w.repo.SetMaxObjectBytes(l.MaxObjectBytes)
	w.repo.SetMaxDepth(l.MaxDepth)
	w.repo.SetMaxForkLevels(l.MaxForkLevels)
	return nil
}

// Limits returns the workspace's read limits.
func (w *Workspace) Limits() Limits {
	if w == nil {
		return Limits{}
	}
	if w.copied() {
		// Not the copy's lock, which may have been copied held.
		return w.self.Limits()
	}
	w.limitsMu.Lock()
	defer w.limitsMu.Unlock()
	return w.limits
}

func (w *Workspace) treeLimits() tree.Limits {
	l := w.Limits()
	return tree.Limits{MaxDepth: l.MaxDepth, MaxBytes: l.MaxValueBytes, MaxTotal: l.MaxTotalBytes}
}

// LimitHint says how to raise the limit err ran into, in a Go
// program's terms ("the limit is N bytes: raise Limits.MaxTotalBytes or
// $CAIRN_MAX_TOTAL_BYTES ..."), or "" if err is no limit error.
func LimitHint(err error) string {
	return limitHint(err, true)
}

// LimitEnvHint is LimitHint for a command's user, who sets limits
// through the environment alone ("the limit is N bytes: raise
// $CAIRN_MAX_TOTAL_BYTES ...").
func LimitEnvHint(err error) string {
	return limitHint(err, false)
}

func limitHint(err error, api bool) string {
	var le *tree.LimitError
	if !errors.As(err, &le) {
		return ""
	}
	names, ok := map[string][2]string{
		"MaxBytes":       {"MaxValueBytes", EnvMaxValueBytes},
		"MaxTotal":       {"MaxTotalBytes", EnvMaxTotalBytes},
		"MaxObjectBytes": {"MaxObjectBytes", EnvMaxObjectBytes},
		"MaxDepth":       {"MaxDepth", EnvMaxDepth},
		"MaxForkLevels":  {"MaxForkLevels", EnvMaxForkLevels},
	}[le.Limit]
	if !ok {
		return ""
	}
	unit := le.Unit
	if unit == "" {
		unit = "bytes"
	}
	if !api {
		return fmt.Sprintf("the limit is %d %s: raise $%s if the store is trusted", le.Max, unit, names[1])
	}
	return fmt.Sprintf("the limit is %d %s: raise Limits.%s or $%s if the store is trusted", le.Max, unit, names[0], names[1])
}
