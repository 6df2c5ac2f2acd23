package faulty_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/castest"
	"github.com/cairnlog/cairn/cas/faulty"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/cas/retry"
)

// patient retries often enough that a call failing every attempt at the
// fault rates below (about 0.45^40) never happens in practice.
var patient = retry.Policy{Attempts: 40, Base: time.Microsecond, Max: 50 * time.Microsecond}

var harsh = faulty.Faults{Fail: 0.2, Drop: 0.3, Delay: 0.1, MaxDelay: time.Millisecond}

// TestRetryOverFaultsConformance: retry(faulty(mem)) is a correct store.
func TestRetryOverFaultsConformance(t *testing.T) {
	var seed uint64
	var injected []*faulty.Store
	castest.Run(t, func(t *testing.T) cas.Store {
		seed++
		f := harsh
		f.Seed = seed
		fs := faulty.New(mem.New(), f)
		injected = append(injected, fs)
		return retry.New(fs, patient)
	})
	var total faulty.Counts
	for _, fs := range injected {
		c := fs.Counts()
		total.Failed += c.Failed
		total.Dropped += c.Dropped
		total.Delayed += c.Delayed
	}
	t.Logf("faults injected: %+v", total)
	if total.Failed == 0 || total.Dropped == 0 || total.Delayed == 0 {
		t.Fatalf("not every kind of fault was injected: %+v", total)
	}
}

// TestFaultsAreVisibleWithoutRetry makes sure the faults are real: the
// bare faulty store fails the calls that retry(faulty) gets through.
func TestFaultsAreVisibleWithoutRetry(t *testing.T) {
	ctx := context.Background()
	m := mem.New()
	s := faulty.New(m, faulty.Faults{Seed: 7, Drop: 1, Ops: faulty.OpPut})
	err := s.Put(ctx, "k", []byte("v"), cas.PutOptions{IfAbsent: true})
	if !errors.Is(err, faulty.ErrInjected) || !cas.IsTransient(err) {
		t.Fatalf("dropped Put = %v, want a transient injected error", err)
	}
	if got, err := m.Get(ctx, "k", 0, -1); err != nil || string(got) != "v" {
		t.Fatalf("a dropped put must still take effect: %q, %v", got, err)
	}
	// A naive retry of that conditional create meets its own object.
	if err := s.Put(ctx, "k", []byte("v"), cas.PutOptions{IfAbsent: true}); !errors.Is(err, faulty.ErrInjected) {
		t.Fatalf("second Put = %v", err)
	}
	if err := m.Put(ctx, "k", []byte("v"), cas.PutOptions{IfAbsent: true}); !errors.Is(err, cas.ErrExists) {
		t.Fatalf("bare retry = %v, want ErrExists: the false conflict the retry wrapper must hide", err)
	}
}

// TestSingleWriterNeverFalseConflict: a lone conditional writer under
// dropped responses always succeeds, though many of its creates landed
// on the first attempt and came back as conflicts on the next.
func TestSingleWriterNeverFalseConflict(t *testing.T) {
	ctx := context.Background()
	fs := faulty.New(mem.New(), faulty.Faults{Seed: 42, Fail: 0.2, Drop: 0.5, Ops: faulty.OpPut | faulty.OpGet})
	s := retry.New(fs, patient)
	for i := 0; i < 500; i++ {
		key := fmt.Sprintf("slot/%d", i)
		if err := s.Put(ctx, key, []byte(key), cas.PutOptions{IfAbsent: true}); err != nil {
			t.Fatalf("lone writer Put(%s) = %v, want success", key, err)
		}
	}
	if c := fs.Counts(); c.Dropped < 100 {
		t.Fatalf("only %d dropped responses; the test is not testing much", c.Dropped)
	}
}

// TestRacingWritersUnderDroppedResponses: racing conditional writers of
// different bytes, with failures and lost responses: exactly one wins
// every slot (none losing to its own lost success, never two), and the
// stored bytes are the winner's.
func TestRacingWritersUnderDroppedResponses(t *testing.T) {
	const writers, rounds = 8, 150
	ctx := context.Background()
	m := mem.New()
	fs := faulty.New(m, faulty.Faults{Seed: 3, Fail: 0.2, Drop: 0.4, Delay: 0.3, MaxDelay: 200 * time.Microsecond})
	s := retry.New(fs, patient)
	for round := 0; round < rounds; round++ {
		key := fmt.Sprintf("race/%d", round)
		var mu sync.Mutex
		var winners []int
		var wg sync.WaitGroup
		start := make(chan struct{})
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				<-start
				err := s.Put(ctx, key, []byte(fmt.Sprintf("writer-%d", w)), cas.PutOptions{IfAbsent: true})
				switch {
				case err == nil:
					mu.Lock()
					winners = append(winners, w)
					mu.Unlock()
				case errors.Is(err, cas.ErrExists):
				default:
					t.Errorf("round %d writer %d: %v", round, w, err)
				}
			}(w)
		}
		close(start)
		wg.Wait()
		if len(winners) != 1 {
			t.Fatalf("round %d: winners %v, want exactly one", round, winners)
		}
		got, err := m.Get(ctx, key, 0, -1)
		if want := fmt.Sprintf("writer-%d", winners[0]); err != nil || string(got) != want {
			t.Fatalf("round %d: stored %q (%v), winner wrote %q", round, got, err, want)
		}
	}
	t.Logf("faults injected: %+v", fs.Counts())
}

func TestSeededFaultsRepeat(t *testing.T) {
	run := func() []bool {
		s := faulty.New(mem.New(), faulty.Faults{Seed: 9, Fail: 0.5})
		var out []bool
		for i := 0; i < 64; i++ {
			_, err := s.Stat(context.Background(), "k")
			out = append(out, errors.Is(err, faulty.ErrInjected))
		}
		return out
	}
	if a, b := run(), run(); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatal("the same seed injected different faults")
	}
}

func TestDelayHonoursContext(t *testing.T) {
	s := faulty.New(mem.New(), faulty.Faults{Delay: 1, MaxDelay: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	// With MaxDelay an hour, the drawn delay is almost surely > 20ms.
	if _, err := s.Get(ctx, "k", 0, -1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Get = %v, want DeadlineExceeded", err)
	}
}
