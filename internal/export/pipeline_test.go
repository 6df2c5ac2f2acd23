package export

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"
)

func items(n int) func(context.Context, func(string) error) error {
	return func(ctx context.Context, yield func(string) error) error {
		for i := range n {
			if err := yield(strconv.Itoa(i)); err != nil {
				return err
			}
		}
		return nil
	}
}

func TestOrderedKeepsOrder(t *testing.T) {
	var got []int
	err := ordered(context.Background(), 8, 0, items(500), func(_ context.Context, s string) (int, error) {
		n, _ := strconv.Atoi(s)
		time.Sleep(time.Duration(n%7) * 100 * time.Microsecond) // finish out of order
		return n, nil
	}, func(n int) error { got = append(got, n); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 500 {
		t.Fatalf("%d results, want 500", len(got))
	}
	for i, n := range got {
		if n != i {
			t.Fatalf("result %d is %d: out of order", i, n)
		}
	}
}

func TestOrderedStopsOnError(t *testing.T) {
	boom := errors.New("boom")
	emitted := 0
	err := ordered(context.Background(), 4, 0, items(100000), func(_ context.Context, s string) (string, error) {
		if s == "50" {
			return "", fmt.Errorf("item %s: %w", s, boom)
		}
		return s, nil
	}, func(string) error { emitted++; return nil })
	if !errors.Is(err, boom) || emitted != 50 {
		t.Fatalf("err %v after %d emitted; want boom after 50", err, emitted)
	}
	err = ordered(context.Background(), 4, 0, items(100000), func(_ context.Context, s string) (string, error) { return s, nil },
		func(s string) error {
			if s == "10" {
				return boom
			}
			return nil
		})
	if !errors.Is(err, boom) {
		t.Fatalf("emit error lost: %v", err)
	}
}

// With a byte budget, the bytes reserved by results not yet emitted stay
// within it (plus the one item next in line), and nothing deadlocks,
// also when one item is larger than the whole budget.
func TestOrderedBoundsBytes(t *testing.T) {
	var mu sync.Mutex
	var held, peak int64
	const item, max = 10, 35
	err := ordered(context.Background(), 8, max, items(300), func(ctx context.Context, s string) (int64, error) {
		n := int64(item)
		if s == "7" {
			n = 3 * max // larger than the budget
		}
		for range n / 5 {
			if err := reserve(ctx, 5); err != nil {
				return 0, err
			}
			mu.Lock()
			held += 5
			peak = max64(peak, held)
			mu.Unlock()
		}
		return n, nil
	}, func(n int64) error {
		mu.Lock()
		held -= n
		mu.Unlock()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if peak > max+3*max {
		t.Fatalf("%d bytes held at once, budget %d", peak, max)
	}
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
