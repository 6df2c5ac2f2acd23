package eino

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnlog/cairn"
)

// TestOverlappingPrefixesDoNotMix: two stores over one workspace whose
// prefixes overlap ("e" and "ex-") name checkpoint "x-y" of one and "y" of
// the other by the same session. Get must not hand one store's checkpoint
// to the other: it fails, saying whose checkpoint the session holds.
func TestOverlappingPrefixesDoNotMix(t *testing.T) {
	ctx := context.Background()
	ws, err := cairn.Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	a, err := NewWithOptions(ws, Options{Prefix: "e"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewWithOptions(ws, Options{Prefix: "ex-"})
	if err != nil {
		t.Fatal(err)
	}
	if a.SessionName("x-y") != b.SessionName("y") {
		t.Fatalf("names differ (%s, %s): the test no longer sets up an overlap", a.SessionName("x-y"), b.SessionName("y"))
	}
	if err := a.Set(ctx, "x-y", []byte(`{"owner":"a"}`)); err != nil {
		t.Fatal(err)
	}
	got, ok, err := b.Get(ctx, "y")
	if err == nil {
		t.Fatalf("Get of the other store's checkpoint = %s, %v; want an error", got, ok)
	}
	if !strings.Contains(err.Error(), `holds checkpoint "x-y", not "y"`) {
		t.Fatalf("error %q does not say whose checkpoint the session holds", err)
	}
	if _, ok, err := a.Get(ctx, "x-y"); err != nil || !ok {
		t.Fatalf("the owner's Get: ok=%v err=%v", ok, err)
	}
}
