package cairn_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// stallPut holds the first put of key until its context is done, then
// fails it without storing anything: a request the caller gave up on.
type stallPut struct {
	cas.Store
	key     string
	stalled *bool
}

func (s stallPut) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	if key == s.key && !*s.stalled {
		*s.stalled = true
		<-ctx.Done()
		return ctx.Err()
	}
	return s.Store.Put(ctx, key, data, opts)
}

// TestForkTimedOutDuringItsPut: a fork whose context expires while its
// step's put is in flight says the fork may have been written
// (ErrMaybeWritten), in a fork's words: it said "commit", which the
// program never called. Forking again then lands.
func TestForkTimedOutDuringItsPut(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	src, _ := cairn.OpenStore(store).Session("src")
	stepOf(t, src, cairn.JSON([]byte(`{"a":1}`)))
	ws := cairn.OpenStore(stallPut{store, manifest.StepKey("dst", 1), new(bool)})
	from, err := ws.ReadHead(ctx, "src")
	if err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = ws.Fork(tctx, from, "dst")
	if !errors.Is(err, cairn.ErrMaybeWritten) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("fork with its put stalled past the deadline: %v; want ErrMaybeWritten and the deadline", err)
	}
	if msg := err.Error(); strings.Contains(msg, "commit dst") || !strings.HasPrefix(msg, "fork src@1 to dst") {
		t.Errorf("fork's error %q; want it said as a fork of src@1 to dst", msg)
	}
	st, err := ws.Fork(ctx, from, "dst")
	if err != nil || st.Number != 1 {
		t.Fatalf("fork again: %v, %v; want dst@1", st, err)
	}
}
