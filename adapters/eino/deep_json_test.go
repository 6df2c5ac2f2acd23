package eino

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestDeepJSON: compact JSON nested deeper than cairn stores JSON (512
// levels, the envelope included) is stored base64-encoded, not refused;
// brackets inside strings do not count.
func TestDeepJSON(t *testing.T) {
	ctx := context.Background()
	s := memStore(t)
	for _, d := range []int{511, 512, 2000} {
		v := []byte(strings.Repeat(`{"k\"[{":`, d) + "1" + strings.Repeat("}", d))
		if err := s.Set(ctx, "deep", v); err != nil {
			t.Fatalf("Set at depth %d: %v", d, err)
		}
		got, ok, err := s.Get(ctx, "deep")
		if err != nil || !ok || !bytes.Equal(got, v) {
			t.Fatalf("Get at depth %d: ok=%v err=%v, same bytes %v", d, ok, err, bytes.Equal(got, v))
		}
	}
}
