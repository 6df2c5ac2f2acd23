package cas_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/cairnlog/cairn/cas"
)

// registerRuns numbers TestRegister's runs: the registry is process-wide
// and has no way to remove a scheme, so each run (go test -count=N)
// registers a scheme of its own, or its first Register would panic.
var registerRuns atomic.Int64

func TestRegister(t *testing.T) {
	scheme := fmt.Sprintf("test-scheme-%d", registerRuns.Add(1))
	open := func(context.Context, *url.URL) (cas.Store, error) { return nil, nil }
	cas.Register(scheme, cas.Backend{Open: open, Remote: true})
	b, ok := cas.Lookup(scheme)
	if !ok || !b.Remote {
		t.Fatalf("Lookup = %+v, %v", b, ok)
	}
	if !slices.Contains(cas.Schemes(), scheme) {
		t.Errorf("Schemes() = %v", cas.Schemes())
	}
	if _, ok := cas.Lookup("nope"); ok {
		t.Error("Lookup found an unregistered scheme")
	}
	defer func() {
		if recover() == nil {
			t.Error("a second Register for one scheme did not panic")
		}
	}()
	cas.Register(scheme, cas.Backend{Open: open})
}
