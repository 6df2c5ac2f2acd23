package eino

import (
	"bytes"
	"context"
	"testing"
)

// TestExactBytesEscapesAndUTF8: compact JSON whose strings hold '<', '>',
// '&', U+2028 or U+2029 (what a serializer that does not escape HTML
// writes, sonic's default) reads back byte for byte, not \u-escaped; and
// "JSON" that json.Valid accepts but is not UTF-8 is stored (base64), not
// refused.
func TestExactBytesEscapesAndUTF8(t *testing.T) {
	ctx := context.Background()
	s := memStore(t)
	values := []string{
		`{"html":"<b>&amp;</b>"}`,
		"{\"ls\":\"a\u2028b\u2029c\"}",
		"{\"bad\":\"\xff\xfe\"}",
		"\"\xc3\"",
	}
	for i, v := range values {
		id := "exact-" + string(rune('a'+i))
		if err := s.Set(ctx, id, []byte(v)); err != nil {
			t.Errorf("Set(%q): %v", v, err)
			continue
		}
		got, ok, err := s.Get(ctx, id)
		if err != nil || !ok || !bytes.Equal(got, []byte(v)) {
			t.Errorf("Get after Set(%q) = %q, %v, %v", v, got, ok, err)
		}
	}
}
