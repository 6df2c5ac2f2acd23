package retry_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/cas/retry"
)

// TestGivingUpSaysTheAttempts: a call that gives up after retrying says
// how many attempts it made; with one attempt allowed (?attempts=1)
// nothing was retried, and it used to say "after 1 attempts".
func TestGivingUpSaysTheAttempts(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		attempts int
		want     string
	}{{1, "503 slow down"}, {3, "after 3 attempts: 503 slow down"}} {
		s := &script{Store: mem.New()}
		s.put = func(int32, string, []byte, cas.PutOptions) error { return errTransient }
		p := fast
		p.Attempts = tc.attempts
		err := retry.New(s, p).Put(ctx, "k", []byte("x"), cas.PutOptions{})
		if err == nil || err.Error() != tc.want || strings.Contains(err.Error(), "1 attempts") {
			t.Errorf("attempts=%d: Put = %v, want %q", tc.attempts, err, tc.want)
		}
	}
}
