package main

import (
	"net"
	"strings"
	"testing"
)

// TestServeAddressInUseSaidInWords: cairn serve on a port another
// program listens on (a second cairn serve, the usual case) exits 1
// saying the address is in use and what to do, without the net
// package's text. It said "listen on 127.0.0.1:7474: listen tcp
// 127.0.0.1:7474: bind: address already in use".
func TestServeAddressInUseSaidInWords(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	out, errs, code := cli(t, t.TempDir(), "", "serve", "--listen", addr)
	if code != 1 || out != "" {
		t.Fatalf("serve --listen %s, taken: exit %d, stdout %q, stderr %q; want exit 1", addr, code, out, errs)
	}
	for _, want := range []string{"cannot listen on " + addr, "address already in use", "another port"} {
		if !strings.Contains(errs, want) {
			t.Errorf("serve --listen %s, taken: stderr %q; want it to say %q", addr, errs, want)
		}
	}
	for _, not := range []string{"listen tcp", "bind:"} {
		if strings.Contains(errs, not) {
			t.Errorf("serve --listen %s, taken: stderr %q holds the net package's %q", addr, errs, not)
		}
	}
}
