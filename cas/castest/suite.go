// Package castest is the conformance suite every cas.Store backend must
// pass. A backend's own test is a few lines that hand Run a factory:
//
//	func TestConformance(t *testing.T) {
//		castest.Run(t, func(t *testing.T) cas.Store { return mem.New() })
//	}
//
// The factory must return an empty store (a fresh directory, bucket or
// prefix) on every call.
package castest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cairnlog/cairn/cas"
)

// Factory returns a new, empty store for one subtest.
type Factory func(t *testing.T) cas.Store

// Run runs every conformance test against stores made by newStore.
func Run(t *testing.T, newStore Factory) {
	tests := []struct {
		name string
		fn   func(*testing.T, cas.Store)
	}{
		{"PutGet", testPutGet},
		{"Overwrite", testOverwrite},
		{"GetRange", testGetRange},
		{"NotFound", testNotFound},
		{"Empty", testEmpty},
		{"IfAbsent", testIfAbsent},
		{"RaceIfAbsent", testRaceIfAbsent},
		{"Stat", testStat},
		{"List", testList},
		{"ListStartAfter", testListStartAfter},
		{"ListStop", testListStop},
		{"ListCancel", testListCancel},
		{"Delete", testDelete},
		{"InvalidKey", testInvalidKey},
		{"Large", testLarge},
		{"Concurrent", testConcurrent},
		{"ReaderIsolation", testReaderIsolation},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
}

func randBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func mustPut(t *testing.T, s cas.Store, key string, data []byte) {
	t.Helper()
	if err := s.Put(context.Background(), key, data, cas.PutOptions{}); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

func mustGet(t *testing.T, s cas.Store, key string) []byte {
	t.Helper()
	b, err := s.Get(context.Background(), key, 0, -1)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	return b
}

func testPutGet(t *testing.T, s cas.Store) {
	data := randBytes(1, 1000)
	mustPut(t, s, "a/b/c", data)
	if got := mustGet(t, s, "a/b/c"); !bytes.Equal(got, data) {
		t.Fatalf("Get returned %d bytes that differ from the %d put", len(got), len(data))
	}
	// The store must not keep a reference to the caller's buffer.
	data[0] ^= 0xff
	if got := mustGet(t, s, "a/b/c"); got[0] == data[0] {
		t.Fatal("store aliases the caller's buffer")
	}
}

func testOverwrite(t *testing.T, s cas.Store) {
	mustPut(t, s, "k", []byte("one"))
	mustPut(t, s, "k", []byte("second"))
	if got, want := string(mustGet(t, s, "k")), "second"; got != want {
		t.Fatalf("after overwrite Get = %q, want %q", got, want)
	}
}

func testGetRange(t *testing.T, s cas.Store) {
	data := randBytes(2, 4096)
	mustPut(t, s, "r", data)
	ctx := context.Background()
	cases := []struct{ off, n int64 }{
		{0, 1}, {0, 4096}, {100, 200}, {4095, 1}, {4000, -1}, {0, -1}, {1000, 10000},
	}
	for _, c := range cases {
		got, err := s.Get(ctx, "r", c.off, c.n)
		if err != nil {
			t.Fatalf("Get(off=%d, n=%d): %v", c.off, c.n, err)
		}
		end := int64(len(data))
		if c.n >= 0 && c.off+c.n < end {
			end = c.off + c.n
		}
		if want := data[c.off:end]; !bytes.Equal(got, want) {
			t.Fatalf("Get(off=%d, n=%d) = %d bytes, want %d matching bytes", c.off, c.n, len(got), len(want))
		}
	}
}

func testNotFound(t *testing.T, s cas.Store) {
	ctx := context.Background()
	if _, err := s.Get(ctx, "missing", 0, -1); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("Get(missing) error = %v, want ErrNotFound", err)
	}
	if _, err := s.Get(ctx, "missing", 10, 5); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("ranged Get(missing) error = %v, want ErrNotFound", err)
	}
	if _, err := s.Stat(ctx, "missing/deeper"); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("Stat(missing) error = %v, want ErrNotFound", err)
	}
}

func testEmpty(t *testing.T, s cas.Store) {
	mustPut(t, s, "empty", nil)
	if got := mustGet(t, s, "empty"); len(got) != 0 {
		t.Fatalf("Get(empty) = %d bytes, want 0", len(got))
	}
	info, err := s.Stat(context.Background(), "empty")
	if err != nil || info.Size != 0 {
		t.Fatalf("Stat(empty) = %+v, %v; want size 0", info, err)
	}
}

func testIfAbsent(t *testing.T, s cas.Store) {
	ctx := context.Background()
	if err := s.Put(ctx, "slot/1", []byte("first"), cas.PutOptions{IfAbsent: true}); err != nil {
		t.Fatalf("first conditional Put: %v", err)
	}
	err := s.Put(ctx, "slot/1", []byte("second"), cas.PutOptions{IfAbsent: true})
	if !errors.Is(err, cas.ErrExists) {
		t.Fatalf("second conditional Put error = %v, want ErrExists", err)
	}
	if got := string(mustGet(t, s, "slot/1")); got != "first" {
		t.Fatalf("after losing conditional Put, Get = %q, want %q", got, "first")
	}
}

// testRaceIfAbsent races many goroutines on conditional creates of the
// same keys: exactly one must win each key, and the stored bytes must be
// the winner's.
func testRaceIfAbsent(t *testing.T, s cas.Store) {
	const writers, rounds = 16, 8
	ctx := context.Background()
	for round := 0; round < rounds; round++ {
		key := fmt.Sprintf("race/%d", round)
		var wins, losses atomic.Int32
		winner := make(chan int, writers)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				<-start
				err := s.Put(ctx, key, []byte(fmt.Sprintf("writer-%02d", w)), cas.PutOptions{IfAbsent: true})
				switch {
				case err == nil:
					wins.Add(1)
					winner <- w
				case errors.Is(err, cas.ErrExists):
					losses.Add(1)
				default:
					t.Errorf("writer %d: %v", w, err)
				}
			}(w)
		}
		close(start)
		wg.Wait()
		if wins.Load() != 1 || losses.Load() != writers-1 {
			t.Fatalf("round %d: %d wins, %d losses; want 1 and %d", round, wins.Load(), losses.Load(), writers-1)
		}
		w := <-winner
		if got, want := string(mustGet(t, s, key)), fmt.Sprintf("writer-%02d", w); got != want {
			t.Fatalf("round %d: stored %q, but the winner was %q", round, got, want)
		}
	}
}

func testStat(t *testing.T, s cas.Store) {
	mustPut(t, s, "x/y", randBytes(3, 777))
	info, err := s.Stat(context.Background(), "x/y")
	if err != nil {
		t.Fatal(err)
	}
	if info.Key != "x/y" || info.Size != 777 {
		t.Fatalf("Stat = %+v, want key x/y size 777", info)
	}
	if info.ModTime.IsZero() {
		t.Fatal("Stat ModTime is zero")
	}
}

func listKeys(t *testing.T, s cas.Store, prefix, after string) []string {
	t.Helper()
	var keys []string
	err := s.List(context.Background(), prefix, after, func(i cas.Info) error {
		keys = append(keys, i.Key)
		return nil
	})
	if err != nil {
		t.Fatalf("List(%q, %q): %v", prefix, after, err)
	}
	return keys
}

func testList(t *testing.T, s cas.Store) {
	want := []string{"p/a", "p/b/1", "p/b/2", "p/c", "pq/x"}
	for _, k := range append([]string{"q/z", "o"}, want...) {
		mustPut(t, s, k, []byte(k))
	}
	if got := listKeys(t, s, "p", ""); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("List(p) = %v, want %v", got, want)
	}
	if got, w := listKeys(t, s, "p/", ""), want[:4]; fmt.Sprint(got) != fmt.Sprint(w) {
		t.Fatalf("List(p/) = %v, want %v", got, w)
	}
	if got := listKeys(t, s, "nothing/", ""); len(got) != 0 {
		t.Fatalf("List(nothing/) = %v, want none", got)
	}
	all := listKeys(t, s, "", "")
	if !sort.StringsAreSorted(all) || len(all) != 7 {
		t.Fatalf("List() = %v, want 7 sorted keys", all)
	}
	var sizes int64
	s.List(context.Background(), "p/b/", "", func(i cas.Info) error { sizes += i.Size; return nil })
	if sizes != int64(len("p/b/1")+len("p/b/2")) {
		t.Fatalf("List reported sizes summing to %d", sizes)
	}
}

func testListStartAfter(t *testing.T, s cas.Store) {
	var keys []string
	for i := 1; i <= 30; i++ {
		k := fmt.Sprintf("steps/s/%020d", i)
		keys = append(keys, k)
		mustPut(t, s, k, nil)
	}
	mustPut(t, s, "steps/s/head", nil)
	got := listKeys(t, s, "steps/s/", keys[24])
	want := append(append([]string{}, keys[25:]...), "steps/s/head")
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("List start-after = %v, want %v", got, want)
	}
	// A startAfter that is not itself a key still works.
	if got := listKeys(t, s, "steps/s/", "steps/s/00000000000000000029x"); len(got) != 2 {
		t.Fatalf("List after a non-key = %v, want the last step and head", got)
	}
}

func testListStop(t *testing.T, s cas.Store) {
	for i := 0; i < 10; i++ {
		mustPut(t, s, fmt.Sprintf("l/%d", i), nil)
	}
	stop := errors.New("stop")
	n := 0
	err := s.List(context.Background(), "l/", "", func(cas.Info) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 3 {
		t.Fatalf("List stopped after %d calls with %v, want 3 and the callback's error", n, err)
	}
}

func testListCancel(t *testing.T, s cas.Store) {
	mustPut(t, s, "c/1", nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.List(ctx, "c/", "", func(cas.Info) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("List with canceled context = %v, want context.Canceled", err)
	}
}

func testDelete(t *testing.T, s cas.Store) {
	ctx := context.Background()
	mustPut(t, s, "d/1", []byte("x"))
	if err := s.Delete(ctx, "d/1"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := s.Get(ctx, "d/1", 0, -1); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("Get after Delete = %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "d/1"); err != nil {
		t.Fatalf("Delete of missing key = %v, want nil", err)
	}
	if got := listKeys(t, s, "d/", ""); len(got) != 0 {
		t.Fatalf("List after Delete = %v", got)
	}
	// A deleted slot can be conditionally created again.
	if err := s.Put(ctx, "d/1", []byte("y"), cas.PutOptions{IfAbsent: true}); err != nil {
		t.Fatalf("conditional Put after Delete: %v", err)
	}
}

func testInvalidKey(t *testing.T, s cas.Store) {
	ctx := context.Background()
	for _, k := range []string{"", "../x", "a/../b", "/abs", "a//b", "a/./b", "sp ace", "a\\b", "x\x00"} {
		if err := s.Put(ctx, k, []byte("x"), cas.PutOptions{}); !errors.Is(err, cas.ErrInvalidKey) {
			t.Errorf("Put(%q) = %v, want ErrInvalidKey", k, err)
		}
		if _, err := s.Get(ctx, k, 0, -1); !errors.Is(err, cas.ErrInvalidKey) {
			t.Errorf("Get(%q) = %v, want ErrInvalidKey", k, err)
		}
	}
}

func testLarge(t *testing.T, s cas.Store) {
	data := randBytes(4, 6<<20+123)
	mustPut(t, s, "big", data)
	if got := mustGet(t, s, "big"); !bytes.Equal(got, data) {
		t.Fatal("large object round trip differs")
	}
	part, err := s.Get(context.Background(), "big", 5<<20, 1<<20)
	if err != nil || !bytes.Equal(part, data[5<<20:6<<20]) {
		t.Fatalf("ranged read of large object: %v", err)
	}
}

func testConcurrent(t *testing.T, s cas.Store) {
	const n = 32
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			key := fmt.Sprintf("conc/%02d", i)
			data := randBytes(uint64(100+i), 1000+i)
			if err := s.Put(context.Background(), key, data, cas.PutOptions{}); err != nil {
				t.Errorf("Put(%s): %v", key, err)
				return
			}
			got, err := s.Get(context.Background(), key, 0, -1)
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("Get(%s) after Put: %v", key, err)
			}
		}(i)
	}
	wg.Wait()
	if got := listKeys(t, s, "conc/", ""); len(got) != n {
		t.Fatalf("List after concurrent puts = %d keys, want %d", len(got), n)
	}
}

// testReaderIsolation checks atomic puts: readers racing overwrites of a
// key see one whole version, never a torn mix.
func testReaderIsolation(t *testing.T, s cas.Store) {
	ctx := context.Background()
	a := bytes.Repeat([]byte{'a'}, 256<<10)
	b := bytes.Repeat([]byte{'b'}, 256<<10)
	mustPut(t, s, "atomic", a)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 20; i++ {
			v := a
			if i%2 == 0 {
				v = b
			}
			if err := s.Put(ctx, "atomic", v, cas.PutOptions{}); err != nil {
				t.Errorf("Put: %v", err)
				return
			}
		}
	}()
	for i := 0; ; i++ {
		select {
		case <-done:
			return
		default:
		}
		got, err := s.Get(ctx, "atomic", 0, -1)
		if err != nil {
			t.Fatalf("Get during overwrite: %v", err)
		}
		if len(got) != len(a) || !(bytes.Equal(got, a) || bytes.Equal(got, b)) {
			t.Fatalf("read %d: torn object of %d bytes", i, len(got))
		}
	}
}
