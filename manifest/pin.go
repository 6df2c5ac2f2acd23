package manifest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cairnlog/cairn/cas"
)

// Limits on pin objects.
const (
	maxPinSize = 1024
	// MaxPins bounds how many pins gc reads in one run.
	MaxPins      = 1 << 16
	pinVersion   = 1
	pinNonceSize = 8
)

// A pin is a fork's intent, stored under pins/<target>/<nonce> before
// the forker reads its source and deleted once the fork's step landed or
// lost. While a pin's target slot is empty, gc keeps the source's chain
// from the source step down to the pin's floor: a forker paused between
// reading its source and writing its step never names data gc deleted
// meanwhile. Gc expires a pin only by fencing its slot (see GC), so a
// forker that comes back after that loses its conditional put.

// Pin is the stored intent of one fork.
type Pin struct {
	Version int       `json:"version"`
	Target  string    `json:"target"` // the new session
	Step    uint64    `json:"step"`   // the slot the fork writes: Target@Step
	Source  string    `json:"source"` // the forked step is Source@Step
	ID      string    `json:"id"`     // its manifest hash, hex
	Floor   uint64    `json:"floor"`  // when the pin was written, the base of the session whose history holds the source (its own, or a fork's: see Repo.Fork)
	Time    time.Time `json:"time"`
}

// SourcePointer returns the pointer to the forked step.
func (p *Pin) SourcePointer() (Pointer, error) {
	id, err := cas.ParseID(p.ID)
	if err != nil {
		return Pointer{}, fmt.Errorf("%w: pin of %s@%d: bad source id", cas.ErrCorrupt, p.Target, p.Step)
	}
	return Pointer{Session: p.Source, Number: p.Step, ID: id}, nil
}

// DecodePin parses a pin object, refusing anything that is not one.
// what names it in errors.
func DecodePin(b []byte, what string) (*Pin, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", cas.ErrCorrupt, what, fmt.Sprintf(format, a...))
	}
	if len(b) > maxPinSize {
		return nil, bad("%d bytes exceeds %d", len(b), maxPinSize)
	}
	var p Pin
	if err := decodeStrict(b, &p); err != nil {
		return nil, bad("%v", err)
	}
	switch {
	case p.Version != pinVersion:
		return nil, bad("unsupported version %d", p.Version)
	case ValidSession(p.Target) != nil || ValidSession(p.Source) != nil:
		return nil, bad("bad session name")
	case p.Step == 0 || p.Step > 1<<62 || p.Floor == 0 || p.Floor > p.Step:
		return nil, bad("bad step %d or floor %d", p.Step, p.Floor)
	case p.Time.Year() < 1 || p.Time.Year() > 9999:
		return nil, bad("time out of range")
	}
	if _, err := cas.ParseID(p.ID); err != nil {
		return nil, bad("bad source id")
	}
	p.Time = p.Time.UTC()
	return &p, nil
}

// WritePin stores p under a fresh key and returns the key.
func (r *Repo) WritePin(ctx context.Context, p *Pin) (string, error) {
	var nonce [pinNonceSize]byte
	if _, err := rand.Read(nonce[:]); err != nil {
		return "", fmt.Errorf("write pin: %w", err)
	}
	p.Version = pinVersion
	key := PinKey(p.Target, hex.EncodeToString(nonce[:]))
	b, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("write pin: %w", err)
	}
	if err := r.store.Put(ctx, key, b, cas.PutOptions{IfAbsent: true}); err != nil {
		return "", fmt.Errorf("write %s: %w", DescribeKey(key), err)
	}
	return key, nil
}

// DeletePin removes a pin. A missing pin is no error.
func (r *Repo) DeletePin(ctx context.Context, key string) error {
	if err := r.store.Delete(ctx, key); err != nil && !errors.Is(err, cas.ErrNotFound) {
		return fmt.Errorf("delete %s: %w", DescribeKey(key), err)
	}
	return nil
}

// ErrForkInFlight reports that a fork to the same name, one that may
// land above a just-written step and hide it, had not ended when the
// wait for it (Repo.ForkWait) did: the step's fate is the fork's.
var ErrForkInFlight = errors.New("a fork to the same name has not ended")

// DefaultForkWait is Repo.ForkWait's default. A fork takes a few
// requests; one paused longer leaves the steps beside it to its fate.
const DefaultForkWait = 2 * time.Second

// AwaitForks waits until no fork to target that writes a slot above n is
// in flight, or fails with ErrForkInFlight once r.ForkWait has passed.
// A session's first step (number n, just put) calls it after its put.
// The pins' ages are read on the store's clock (storeClock, from that
// step's object), never by comparing the store's times with this
// machine's: a writer whose clock runs minutes ahead of the store's
// would otherwise take a fork in flight for a dead one.
//
// A fork writes its pin before it looks at its target name (which must
// have no steps) and deletes it after its own put; it may set the name's
// base before its step, and it writes at its source's step number, not at
// the name's first slot: so a first step put beside it is not fenced off
// by its slot, and the fork's step, landing above, or its base would hide
// it and all built on it: two writers extending one session unnoticed.
// Read after the put, the pins show every fork whose last look came
// before it; once they are gone the head and base, read next, show
// whether one landed above (a fork that lost takes its base back before
// its pin goes). A fork at or below n cannot hide the step (the same slot
// is fenced by the conditional put). Forks never wait for first steps,
// and wait for each other only in the order of their pins
// (awaitOlderForks), so no two wait for each other. A pin older than
// ForkPinGrace by the store's clock is not waited for: gc expires it by
// fencing its slot.
func (r *Repo) AwaitForks(ctx context.Context, target string, n uint64) error {
	now := r.storeClock(StepKey(target, n))
	busy, err := r.waitForks(ctx, func() (bool, error) { return r.forkAbove(ctx, target, n, now) })
	if err == nil && busy {
		err = fmt.Errorf("%s@%d: %w", target, n, ErrForkInFlight)
	}
	return err
}

// waitForks calls busy until it reports no fork in the way, pausing
// between calls (2 ms doubling to 250 ms), for at most r.ForkWait; it
// returns true if a fork was still in the way then.
func (r *Repo) waitForks(ctx context.Context, busy func() (bool, error)) (bool, error) {
	wait := r.ForkWait
	if wait <= 0 {
		wait = DefaultForkWait
	}
	start := time.Now()
	pause := 2 * time.Millisecond
	for {
		b, err := busy()
		if err != nil || !b {
			return false, err
		}
		if time.Since(start) >= wait {
			return true, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 250*time.Millisecond)
	}
}

// pinsOf lists the pins of target: one LIST.
func (r *Repo) pinsOf(ctx context.Context, target string) ([]cas.Info, error) {
	prefix := pinsPrefix + target + "/"
	pins, err := r.listPins(ctx, prefix, "of session "+target)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", DescribePrefix(prefix), err)
	}
	return pins, nil
}

// listPins lists the pins under prefix, at most MaxPins (more is an
// error saying which pins: what).
func (r *Repo) listPins(ctx context.Context, prefix, what string) ([]cas.Info, error) {
	var pins []cas.Info
	err := r.listKeys(ctx, prefix, "", func(i cas.Info) error {
		if !IsPinKey(i.Key) {
			return nil
		}
		if len(pins) == MaxPins {
			return fmt.Errorf("more than %d fork pins %s", MaxPins, what)
		}
		pins = append(pins, i)
		return nil
	})
	return pins, err
}

// ErrForkFirst reports that another fork to the same name held its lock
// and had not ended when the wait for it did: the fork gives way before
// writing anything. It matches ErrSlotTaken.
var ErrForkFirst = fmt.Errorf("%w: another fork to the name began first and has not ended", ErrSlotTaken)

// lockForks takes the lock of forks to target (ForkLockKey, created with
// a conditional put: one holder at a time, whatever the store's clocks
// say), waiting up to r.ForkWait for a holder to let go; ErrForkFirst
// then. A fork of a pruned session sets its name's base before its step,
// and a base only rises: two forks at once could leave the loser's base
// above the winner's step, and the lower of two forks landing both would
// be in no history. One at a time, the later fork finds the name taken
// and loses having written nothing. A lock older than ForkPinGrace was
// left by a fork that died (or is paused that long, and whose pin gc
// expires): it is taken over.
//
// The lock's age is read on the store's clock, from the fork's own pin
// (storeClock), never by comparing the store's time with this machine's:
// a forker whose clock runs minutes ahead would take over a live lock.
func (r *Repo) lockForks(ctx context.Context, target, pin string) (unlock func(), err error) {
	key := ForkLockKey(target)
	now := r.storeClock(pin)
	busy, err := r.waitForks(ctx, func() (bool, error) {
		err := r.store.Put(ctx, key, nil, cas.PutOptions{IfAbsent: true})
		if err == nil {
			return false, nil
		}
		if !errors.Is(err, cas.ErrExists) {
			return false, fmt.Errorf("write %s: %w", DescribeKey(key), err)
		}
		info, err := r.store.Stat(ctx, key)
		if errors.Is(err, cas.ErrNotFound) {
			return true, nil // let go since: try again
		}
		if err != nil {
			return false, fmt.Errorf("read %s: %w", DescribeKey(key), err)
		}
		if old, err := olderThan(ctx, now, info, ForkPinGrace); err != nil {
			return false, err
		} else if old {
			if err := r.store.Delete(ctx, key); err != nil && !errors.Is(err, cas.ErrNotFound) {
				return false, fmt.Errorf("delete %s: %w", DescribeKey(key), err)
			}
		}
		return true, nil
	})
	if err == nil && busy {
		err = fmt.Errorf("fork to %s: %w", target, ErrForkFirst)
	}
	if err != nil {
		return nil, err
	}
	return func() { _ = r.store.Delete(context.WithoutCancel(ctx), key) }, nil
}

// forkAbove reports whether a pin of target younger than ForkPinGrace (a
// pin of unknown age counts) names a slot above n: one LIST, and a GET
// of each such pin.
func (r *Repo) forkAbove(ctx context.Context, target string, n uint64, now func(context.Context) (time.Time, error)) (bool, error) {
	pins, err := r.pinsOf(ctx, target)
	if err != nil {
		return false, err
	}
	for _, i := range pins {
		if old, err := olderThan(ctx, now, i, ForkPinGrace); err != nil {
			return false, err
		} else if old {
			continue
		}
		p, err := r.readPin(ctx, i.Key)
		if errors.Is(err, cas.ErrNotFound) {
			continue // its fork ended since the listing
		}
		if err != nil {
			return false, err
		}
		if p.Step > n {
			return true, nil
		}
	}
	return false, nil
}

// PinInfo is one pin as gc reads it.
type PinInfo struct {
	Key  string
	Info cas.Info
	Pin  *Pin
}

// Pins reads every pin in the store. More than MaxPins is an error.
func (r *Repo) Pins(ctx context.Context) ([]PinInfo, error) {
	infos, err := r.listPins(ctx, pinsPrefix, "under "+pinsPrefix)
	if err != nil {
		return nil, fmt.Errorf("list pins: %w", err)
	}
	out := make([]PinInfo, 0, len(infos))
	for _, i := range infos {
		p, err := r.readPin(ctx, i.Key)
		if errors.Is(err, cas.ErrNotFound) {
			continue // its fork finished since the listing
		}
		if err != nil {
			return nil, err
		}
		out = append(out, PinInfo{Key: i.Key, Info: i, Pin: p})
	}
	return out, nil
}

// readPin reads and checks the pin at key, as gc does.
func (r *Repo) readPin(ctx context.Context, key string) (*Pin, error) {
	b, err := r.store.Get(ctx, key, 0, maxPinSize+1)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", DescribeKey(key), err)
	}
	p, err := DecodePin(b, DescribeKey(key))
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(key, pinsPrefix+p.Target+"/") {
		return nil, fmt.Errorf("%w: %s: pin names target %s", cas.ErrCorrupt, DescribeKey(key), p.Target)
	}
	return p, nil
}

// CheckPins reads every pin as gc does and calls bad for each that gc
// would refuse; its error is only for failing to list them.
func (r *Repo) CheckPins(ctx context.Context, bad func(key string, err error)) error {
	err := r.listKeys(ctx, pinsPrefix, "", func(i cas.Info) error {
		if !IsPinKey(i.Key) {
			return nil
		}
		if _, err := r.readPin(ctx, i.Key); err != nil && !errors.Is(err, cas.ErrNotFound) {
			bad(i.Key, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("list pins: %w", err)
	}
	return nil
}

// olderThan reports whether the object i is older than age on the
// store's clock now; an object or a clock of unknown time is not.
func olderThan(ctx context.Context, now func(context.Context) (time.Time, error), i cas.Info, age time.Duration) (bool, error) {
	if i.ModTime.IsZero() {
		return false, nil
	}
	t, err := now(ctx)
	if err != nil || t.IsZero() {
		return false, err
	}
	return t.Sub(i.ModTime) >= age, nil
}
