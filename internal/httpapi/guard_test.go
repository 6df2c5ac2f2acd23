package httpapi

import (
	"net/http"
	"testing"
)

// TestSameOrigin pins which Origin headers name the server a request was
// addressed to.
func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		origin, host string
		ok           bool
	}{
		{"http://127.0.0.1:7474", "127.0.0.1:7474", true},
		{"http://localhost:7474", "127.0.0.1:7474", true},
		{"http://[::1]:7474", "localhost:7474", true},
		{"http://LOCALHOST:7474", "localhost:7474", true},
		{"http://cairn.example.com", "cairn.example.com", true},
		{"http://cairn.example.com:80", "cairn.example.com", true},
		{"http://127.0.0.1:7475", "127.0.0.1:7474", false},
		{"http://127.0.0.1", "127.0.0.1:7474", false},
		{"https://evil.example", "127.0.0.1:7474", false},
		{"http://evil.example:7474", "127.0.0.1:7474", false},
		{"http://localhost:7474", "cairn.example.com:7474", false},
		{"null", "127.0.0.1:7474", false},
		{"file://", "127.0.0.1:7474", false},
		{"http://u@127.0.0.1:7474", "127.0.0.1:7474", false},
	} {
		r := &http.Request{Host: tc.host}
		if got := sameOrigin(tc.origin, r); got != tc.ok {
			t.Errorf("sameOrigin(%q) with Host %q = %v, want %v", tc.origin, tc.host, got, tc.ok)
		}
	}
}
