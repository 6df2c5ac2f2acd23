package cairn_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
)

// brokenLister is a store whose List breaks the contract as a broken or
// hostile S3-compatible server may: keys handed over in reverse order,
// each twice, with a key outside the prefix, or the first key over and
// over without end (bounded here, so that a reader that loops fails the
// test instead of hanging it). With only set, only the listing of that
// prefix breaks.
type brokenLister struct {
	cas.Store
	mode string
	only string
}

const endlessBound = 1_000_000

func (b *brokenLister) List(ctx context.Context, prefix, after string, fn func(cas.Info) error) error {
	if b.only != "" && prefix != b.only {
		return b.Store.List(ctx, prefix, after, fn)
	}
	var got []cas.Info
	if err := b.Store.List(ctx, prefix, after, func(i cas.Info) error { got = append(got, i); return nil }); err != nil {
		return err
	}
	switch b.mode {
	case "reversed":
		slices.Reverse(got)
	case "repeated":
		var twice []cas.Info
		for _, i := range got {
			twice = append(twice, i, i)
		}
		got = twice
	case "foreign":
		// What another prefix holds, in the middle of the listing.
		foreign := cas.Info{Key: "packs/zz/00000000000000000001", Size: 1}
		if strings.HasPrefix(foreign.Key, prefix) {
			foreign.Key = "gc/zz"
		}
		got = append(got[:len(got)/2:len(got)/2], append([]cas.Info{foreign}, got[len(got)/2:]...)...)
	case "endless":
		if len(got) > 0 {
			for range endlessBound {
				if err := fn(got[0]); err != nil {
					return err
				}
			}
			return fmt.Errorf("listing %q: handed the same key over %d times and the reader never stopped", prefix, endlessBound)
		}
	}
	for _, i := range got {
		if err := fn(i); err != nil {
			return err
		}
	}
	return nil
}

// TestListingContractBroken: a store whose listing hands over keys out
// of order, twice, outside the prefix asked for, or the same key without
// end, is said to be damaged (ErrCorrupt, in words naming what the
// listing was of and what it gave), by every reader of listings:
// sessions, head discovery, du, verify and gc, which deletes nothing.
// None loops. Before, the readers took such a listing as it came: a
// repeated listing listed each session twice (a a b b) and doubled du's
// stored bytes, a reversed one listed the sessions out of order, gc ran
// on listings it could not trust, and every reader of the endless one
// kept reading (here until the bound of a million keys).
func TestListingContractBroken(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []string{"reversed", "repeated", "foreign", "endless"} {
		t.Run(mode, func(t *testing.T) {
			store := mem.New()
			ws := cairn.OpenStore(store)
			commitN(t, ws, "a", "a", 1, 3)
			commitN(t, ws, "b", "b", 1, 2)
			commitN(t, ws, "g", "g", 1, 2)
			if _, err := ws.Remove(ctx, "g"); err != nil {
				t.Fatal(err)
			}
			keys := func() []string {
				var ks []string
				if err := store.List(ctx, "", "", func(i cas.Info) error { ks = append(ks, i.Key); return nil }); err != nil {
					t.Fatal(err)
				}
				return ks
			}
			before := keys()
			bad := cairn.OpenStore(&brokenLister{Store: store, mode: mode})
			check := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, cairn.ErrCorrupt) || !strings.Contains(err.Error(), "the store's listing of ") || !strings.Contains(err.Error(), "its server is broken or not S3-compatible") {
					t.Errorf("%s: %v; want ErrCorrupt saying the store's listing is broken", what, err)
					return
				}
				noStoreWords(t, what, err.Error())
			}
			_, err := bad.SessionNames(ctx)
			check("sessions", err)
			_, err = bad.Resolve(ctx, "a")
			check("head of a", err)
			_, err = bad.Usage(ctx)
			check("du", err)
			_, err = bad.Verify(ctx)
			check("verify", err)
			for run := range 2 {
				_, err = bad.GC(ctx, cairn.GCOptions{Grace: 0, Now: slotsAged})
				check(fmt.Sprintf("gc run %d", run+1), err)
			}
			if after := keys(); !slices.Equal(after, before) {
				t.Errorf("gc beside a broken listing changed the store: %q, was %q", after, before)
			}
		})
	}
}
