package cas_test

import (
	"context"
	"net/url"
	"slices"
	"testing"

	"github.com/cairnlog/cairn/cas"
)

func TestRegister(t *testing.T) {
	open := func(context.Context, *url.URL) (cas.Store, error) { return nil, nil }
	cas.Register("test-scheme", cas.Backend{Open: open, Remote: true})
	b, ok := cas.Lookup("test-scheme")
	if !ok || !b.Remote {
		t.Fatalf("Lookup = %+v, %v", b, ok)
	}
	if !slices.Contains(cas.Schemes(), "test-scheme") {
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
	cas.Register("test-scheme", cas.Backend{Open: open})
}
