package manifest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cairnlog/cairn/cas"
)

// Limits on the gc state object.
const (
	MaxGCStateSize  = 64 << 20
	MaxGCCandidates = 1 << 20
	gcStateVersion  = 1
)

// GCState is what one gc run leaves for the next: every data object it
// found unreachable, with when a run first found it so.
type GCState struct {
	Version    int                  `json:"version"`
	Time       time.Time            `json:"time"`
	Candidates map[string]time.Time `json:"candidates"`
}

// NewGCState returns an empty state stamped with t.
func NewGCState(t time.Time) *GCState {
	return &GCState{Version: gcStateVersion, Time: t, Candidates: map[string]time.Time{}}
}

// DecodeGCState parses a gc state object, refusing anything that is not
// one: oversized input, unknown fields or versions, trailing data, and
// candidate keys outside steps/ and packs/. what names it in errors.
func DecodeGCState(b []byte, what string) (*GCState, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", cas.ErrCorrupt, what, fmt.Sprintf(format, a...))
	}
	if len(b) > MaxGCStateSize {
		return nil, bad("%d bytes exceeds %d", len(b), MaxGCStateSize)
	}
	var st GCState
	if err := decodeStrict(b, &st); err != nil {
		return nil, bad("%v", err)
	}
	if st.Version != gcStateVersion {
		return nil, bad("unsupported version %d", st.Version)
	}
	if len(st.Candidates) > MaxGCCandidates {
		return nil, bad("%d candidates exceeds %d", len(st.Candidates), MaxGCCandidates)
	}
	validTime := func(t time.Time) (time.Time, bool) {
		t = t.UTC()
		return t, GCTimeOK(t)
	}
	var ok bool
	if st.Time, ok = validTime(st.Time); !ok {
		return nil, bad("time %v out of range", st.Time)
	}
	for k, t := range st.Candidates {
		if err := cas.ValidateKey(k); err != nil || !(isDataKey(k) || IsPinKey(k)) {
			return nil, bad("candidate %q is not a step, pack or pin key", k)
		}
		if st.Candidates[k], ok = validTime(t); !ok {
			return nil, bad("candidate %q: time %v out of range", k, t)
		}
	}
	if st.Candidates == nil {
		st.Candidates = map[string]time.Time{}
	}
	return &st, nil
}

// GCTimeOK reports whether the gc state can record t: a time in years
// 1..9999 UTC, what Encode can write and DecodeGCState reads back. A
// run's time (GCOptions.Now, or the store's clock) must be one, as it is
// recorded for every new candidate.
func GCTimeOK(t time.Time) bool {
	t = t.UTC()
	return t.Year() >= 1 && t.Year() <= 9999
}

// Encode returns the stored form of st. Its times must be in years
// 1..9999 (any clock reading is; DecodeGCState refuses others).
func (st *GCState) Encode() ([]byte, error) {
	b, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("encode gc state: %w", err)
	}
	return b, nil
}

// readGCState returns the last gc run's state, or an empty one.
func (r *Repo) readGCState(ctx context.Context) (*GCState, error) {
	b, err := r.store.Get(ctx, GCStateKey, 0, MaxGCStateSize+1)
	if errors.Is(err, cas.ErrNotFound) {
		return NewGCState(time.Time{}), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", DescribeKey(GCStateKey), err)
	}
	return DecodeGCState(b, DescribeKey(GCStateKey))
}

// writeGCState stores st for the next gc run.
func (r *Repo) writeGCState(ctx context.Context, st *GCState) error {
	enc, err := st.Encode()
	if err != nil {
		return err
	}
	if err := r.store.Put(ctx, GCStateKey, enc, cas.PutOptions{}); err != nil {
		return fmt.Errorf("write %s: %w", DescribeKey(GCStateKey), err)
	}
	return nil
}
