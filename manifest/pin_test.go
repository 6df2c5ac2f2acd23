package manifest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/mem"
	"github.com/cairnlog/cairn/manifest"
)

// FuzzDecodePin checks that DecodePin never panics, fails only with
// ErrCorrupt, and that what it accepts is a pin gc can act on.
func FuzzDecodePin(f *testing.F) {
	f.Add([]byte(`{"version":1,"target":"F","step":8,"source":"W","id":"` + cas.Sum([]byte("x")).String() + `","floor":3,"time":"2026-11-23T08:00:00Z"}`))
	f.Add([]byte(`{"version":1,"target":"F","step":8,"source":"W","id":"zz","floor":9,"time":"2026-11-23T08:00:00Z"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := manifest.DecodePin(data, "fuzz")
		if err != nil {
			if !errors.Is(err, cas.ErrCorrupt) || p != nil {
				t.Fatalf("DecodePin = %v, %v; want nil and ErrCorrupt", p, err)
			}
			return
		}
		if manifest.ValidSession(p.Target) != nil || manifest.ValidSession(p.Source) != nil || p.Floor == 0 || p.Floor > p.Step {
			t.Fatalf("accepted a pin gc cannot use: %+v", p)
		}
		if _, err := p.SourcePointer(); err != nil {
			t.Fatalf("accepted pin has no source pointer: %v", err)
		}
	})
}

// TestPinsRoundTrip: a written pin is listed and decoded as written; a
// deleted one is gone; keys that are not pins are ignored.
func TestPinsRoundTrip(t *testing.T) {
	ctx := context.Background()
	store := mem.New()
	repo := manifest.NewRepo(store, 0)
	want := &manifest.Pin{Target: "F", Step: 8, Source: "W", ID: cas.Sum([]byte("x")).String(), Floor: 3,
		Time: time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)}
	key, err := repo.WritePin(ctx, want)
	if err != nil {
		t.Fatal(err)
	}
	store.Put(ctx, "pins/F/not-a-pin", []byte("x"), cas.PutOptions{})
	pins, err := repo.Pins(ctx)
	if err != nil || len(pins) != 1 || pins[0].Key != key {
		t.Fatalf("pins = %+v, %v", pins, err)
	}
	a, _ := json.Marshal(pins[0].Pin)
	b, _ := json.Marshal(want)
	if !bytes.Equal(a, b) {
		t.Fatalf("pin read back as %s, want %s", a, b)
	}
	if err := repo.DeletePin(ctx, key); err != nil {
		t.Fatal(err)
	}
	if pins, err := repo.Pins(ctx); err != nil || len(pins) != 0 {
		t.Fatalf("pins after delete = %+v, %v", pins, err)
	}
}
