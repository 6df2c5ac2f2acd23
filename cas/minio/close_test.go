package minio_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas/minio"
)

// TestCloseDropsIdleConnections: Close (called by the workspace that
// opened the store, when it is closed) closes the keep-alive connections
// the store's own transport holds, which otherwise outlived the
// workspace until their idle timeout.
func TestCloseDropsIdleConnections(t *testing.T) {
	closed := make(chan struct{}, 16)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(404)
		w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>none</Message></Error>`))
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateClosed {
			closed <- struct{}{}
		}
	}
	srv.Start()
	defer srv.Close()
	s, err := minio.Open(context.Background(), "bucket", "p", minio.Options{
		Endpoint: strings.TrimPrefix(srv.URL, "http://"), AccessKey: "ak", SecretKey: "sk",
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(context.Background(), "k", 0, -1); err == nil {
		t.Fatal("Get of a missing key succeeded")
	}
	select {
	case <-closed:
		t.Fatal("the connection closed before Close: nothing to test")
	case <-time.After(100 * time.Millisecond):
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the store's idle connection is still open 5 s after Close")
	}
}
