package manifest

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest/tree"
)

// TestDecodeKeepsNoAliasOfItsInput: a walk down a long history (export,
// du, replay) holds the manifests it read, and a record or inline state
// that aliased the bytes it was decoded from pinned the whole step
// object, blobs and merged packs included (110 MB of an export of a
// 100,000-step session). A decoded manifest must not change when the
// bytes it came from do.
func TestDecodeKeepsNoAliasOfItsInput(t *testing.T) {
	m := &Manifest{Session: "s", Number: 2, Parent: &Pointer{Session: "s", Number: 1}, Time: time.Unix(1, 2).UTC(),
		Kind: StateJSON, Record: []byte(`{"messages":[]}`), Root: tree.Ref{Kind: tree.Inline, Data: []byte(`{"a":1}`)}}
	enc := m.Encode()
	got, err := Decode(enc, "m")
	if err != nil {
		t.Fatal(err)
	}
	for i := range enc {
		enc[i] = 'X'
	}
	if want := `{"messages":[]}`; string(got.Record) != want {
		t.Errorf("record after its input was overwritten = %q, want %q", got.Record, want)
	}
	if want := `{"a":1}`; string(got.Root.Data) != want {
		t.Errorf("inline root after its input was overwritten = %q, want %q", got.Root.Data, want)
	}
}

// TestLiveSetRangesStayMerged: every step a mark walks adds its own step
// and every range its layout names, the same ones again step after step.
// Kept unmerged until the walk ended, they grew in the history's length
// times its layout's (du of a 100,000-step session held 1.7 GB); merged
// as they grow, they stay near the live ranges.
func TestLiveSetRangesStayMerged(t *testing.T) {
	ls := newLiveSet()
	const steps = 20000
	for n := uint64(steps); n >= 1; n-- {
		ls.addStep("s", n)
		// A layout as a long session's: older steps in a few runs,
		// and the recent ones, all live already.
		var l Layout
		for k := uint64(0); k < 8; k++ {
			if first := n / 8 * k; first+1 < n {
				l.Steps = append(l.Steps, Range{Session: "s", First: first + 1, Last: n - 1})
			}
		}
		ls.addLayout(l)
		if got, most := len(ls.ranges["s"]), 1000; got > most {
			t.Fatalf("after step %d the live set holds %d ranges of one session, want at most %d", n, got, most)
		}
	}
	ls.finish()
	if got := ls.ranges["s"]; len(got) != 1 || got[0].First != 1 || got[0].Last != steps {
		t.Errorf("merged ranges = %v, want [1..%d]", got, steps)
	}
}

// TestEachFindsWhatHasFinds: Usage counts each session's objects from
// its live set (each) rather than asking has of every object of the
// store for every session, which took time in the sessions times the
// objects (19 s for du of 5,000 three-step sessions). Both must agree.
func TestEachFindsWhatHasFinds(t *testing.T) {
	l := &listing{objects: map[string]cas.Info{}, steps: map[string][]uint64{}}
	for _, s := range []string{"a", "b"} {
		for n := uint64(1); n <= 40; n++ {
			if n%7 == 3 {
				l.steps[s] = append(l.steps[s], n) // listed, not an object (a link)
				continue
			}
			key := StepKey(s, n)
			l.objects[key] = cas.Info{Key: key, Size: int64(n)}
			l.steps[s] = append(l.steps[s], n)
		}
		for _, key := range []string{PackKey(s, 32), SpillKey(s, 33, 1)} {
			l.objects[key] = cas.Info{Key: key, Size: 100}
		}
	}
	ls := newLiveSet()
	ls.addRange(Range{Session: "a", First: 5, Last: 12})
	ls.addRange(Range{Session: "a", First: 30, Last: 50}) // past the listing
	ls.addRange(Range{Session: "b", First: 1, Last: 1})
	ls.addRange(Range{Session: "c", First: 1, Last: 9}) // not listed at all
	ls.packs[PackKey("a", 32)] = 2
	ls.packs[PackKey("b", 99)] = 1 // not listed
	ls.spills[SpillKey("b", 33, 1)] = true
	ls.finish()
	var got, want []string
	ls.each(l, func(key string, info cas.Info) {
		if info != l.objects[key] {
			t.Errorf("each gave %s with %+v, the listing has %+v", key, info, l.objects[key])
		}
		got = append(got, key)
	})
	for key := range l.objects {
		if ls.has(key) {
			want = append(want, key)
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("each found\n%v\nhas finds\n%v", got, want)
	}
	// A session that could not be read keeps every object of it live.
	ls.unread["b"] = true
	got, want = nil, nil
	ls.each(l, func(key string, _ cas.Info) { got = append(got, key) })
	for key := range l.objects {
		if ls.has(key) {
			want = append(want, key)
		}
	}
	sort.Strings(got)
	sort.Strings(want)
	if fmt.Sprint(got) != fmt.Sprint(want) || len(got) == 0 {
		t.Errorf("with b unread, each found\n%v\nhas finds\n%v", got, want)
	}
}

// TestChainReaderCacheBounded: a mark's reader keeps the steps it read
// last, not every step of the store: a cache of all of them held every
// manifest of a 100,000-step session at once.
func TestChainReaderCacheBounded(t *testing.T) {
	ctx := context.Background()
	repo := NewRepo(mem.New(), 0)
	cr := newChainReader(repo)
	for n := uint64(1); n <= chainCacheSteps+50; n++ {
		m := &Manifest{Session: "s", Number: n, Time: time.Unix(int64(n), 0).UTC(), Kind: StateJSON,
			Record: bytes.Repeat([]byte{'1'}, 10), Root: tree.Ref{Kind: tree.Inline, Data: []byte(`1`)}}
		if n > 1 {
			m.Parent = &Pointer{Session: "s", Number: n - 1}
		}
		if _, _, err := repo.WriteStep(ctx, m, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := cr.read(ctx, "s", n, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := cr.cache.Len(); got > chainCacheSteps {
		t.Errorf("the reader keeps %d steps, want at most %d", got, chainCacheSteps)
	}
}
