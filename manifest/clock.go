package manifest

import (
	"context"
	"fmt"
	"time"

	"github.com/cairnlog/cairn/cas"
)

// Ages that decide what a fork waits for and what gc keeps (a fork's pin
// and lock, a step slot's fence, gc's grace) are read on the store's
// clock, from the time the store gave an object this process wrote a
// moment ago, never by comparing the store's times with this machine's:
// a machine whose clock is minutes off (S3 accepts requests up to 15
// minutes off; a directory shared over NFS takes its times from the
// server, whatever its skew) would take a live writer's pin, lock or
// slot for a dead one's. storeClock is that clock; gcNow is gc's reading
// of it.

// storeClock returns the store's clock, as told by key, an object this
// process wrote a moment ago: its modification time (set by the store)
// plus the time passed since, by this machine's monotonic clock. Ages
// measured on it compare the store's times with each other, so a
// machine whose wall clock is off by minutes measures them as any other
// does. The object is read (one HEAD) only when an age is first needed,
// and at most once. Its time is no later than the store's when the read
// is sent, so the clock never runs ahead of the store's: an age it gives
// is never more than the true one. A store that keeps no times gives the
// zero time: every age is unknown.
func (r *Repo) storeClock(key string) func(context.Context) (time.Time, error) {
	return r.storeClockOn(key, time.Now)
}

// storeClockOn is storeClock measuring the time passed since the read on
// clock (time.Now; tests move it).
func (r *Repo) storeClockOn(key string, clock func() time.Time) func(context.Context) (time.Time, error) {
	var (
		ref   time.Time // the object's time, by the store's clock
		start time.Time // when it was asked for, by this machine's
		read  bool
	)
	return func(ctx context.Context) (time.Time, error) {
		if !read {
			start = clock()
			info, err := r.store.Stat(ctx, key)
			if err != nil {
				return time.Time{}, fmt.Errorf("read %s: %w", DescribeKey(key), err)
			}
			ref, read = info.ModTime, true
		}
		if ref.IsZero() {
			return time.Time{}, nil
		}
		return ref.Add(clock().Sub(start)), nil
	}
}

// gcNow returns the time a gc run measures ages at, and records as when
// it first found an object unreachable: the store's clock, read from
// GCClockKey, which it overwrites for that (one PUT and one HEAD a run),
// so that runs on machines whose clocks disagree, and the times the
// store gives objects, all agree. opts.Now, if set, is taken as the
// store's time (tests). A dry run writes nothing, so it measures on this
// machine's clock (opts.Clock), as does a run on a store that keeps no
// times.
func (r *Repo) gcNow(ctx context.Context, opts GCOptions) (time.Time, error) {
	clock := opts.Clock
	if clock == nil {
		clock = time.Now
	}
	switch {
	case !opts.Now.IsZero():
		return opts.Now, nil
	case opts.DryRun:
		return clock(), nil
	}
	if err := r.store.Put(ctx, GCClockKey, nil, cas.PutOptions{}); err != nil {
		return time.Time{}, fmt.Errorf("write %s: %w", DescribeKey(GCClockKey), err)
	}
	now, err := r.storeClockOn(GCClockKey, clock)(ctx)
	if err != nil || !now.IsZero() {
		return now, err
	}
	return clock(), nil
}
