package s3_test

import (
	"context"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/s3"
	"github.com/cairnlog/cairn/internal/s3test"
)

// closeWatch is a TCP proxy in front of a server that says when a client
// closes a connection it made through it.
type closeWatch struct {
	addr   string
	closed chan struct{} // one value per connection the client closed
}

func watchCloses(t *testing.T, target string) *closeWatch {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	w := &closeWatch{addr: l.Addr().String(), closed: make(chan struct{}, 64)}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer up.Close()
				go io.Copy(c, up)
				io.Copy(up, c) // returns when the client closes its side
				w.closed <- struct{}{}
			}()
		}
	}()
	return w
}

// TestCloseDropsIdleConnections: Close (called by the workspace that
// opened the store, when it is closed) closes the keep-alive connections
// the store's client holds to a real server, which otherwise outlived
// the workspace until their idle timeout (90 s): the SDK's default
// client builds a transport no one can reach.
func TestCloseDropsIdleConnections(t *testing.T) {
	ctx := context.Background()
	b := s3test.StartMinIO(t)
	w := watchCloses(t, strings.TrimPrefix(b.Endpoint, "http://"))
	s, err := s3.Open(ctx, b.Name, "close", s3.Options{
		Endpoint:    "http://" + w.addr,
		Region:      b.Region,
		PathStyle:   true,
		Credentials: credentials.NewStaticCredentialsProvider(b.AccessKey, b.SecretKey, ""),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "k", []byte("v"), cas.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "k", 0, -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.closed:
		t.Fatal("a connection closed before Close: nothing to test")
	case <-time.After(100 * time.Millisecond):
	}
	c, ok := cas.Store(s).(io.Closer)
	if !ok {
		t.Fatal("s3.Store has no Close: the workspace cannot drop its connections")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the store's idle connection is still open 5 s after Close")
	}
}

// TestOwnClientKeepsCABundle: the client Open makes in place of the
// SDK's default (so that Close can reach its connections) trusts the
// certificates of $AWS_CA_BUNDLE as the SDK's own does; without the
// bundle, the same server is refused.
func TestOwnClientKeepsCABundle(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(404)
		w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>none</Message></Error>`))
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	srv.StartTLS()
	defer srv.Close()
	bundle := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	get := func() error {
		s, err := s3.Open(ctx, "bucket", "p", s3.Options{
			Endpoint: srv.URL, Region: "us-east-1", PathStyle: true,
			Credentials: credentials.NewStaticCredentialsProvider("ak", "sk", ""),
		})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		_, err = s.Get(ctx, "k", 0, -1)
		return err
	}
	t.Setenv("AWS_CA_BUNDLE", "")
	if err := get(); err == nil || errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("Get over HTTPS from a server of an unknown authority: %v, want a TLS failure", err)
	}
	t.Setenv("AWS_CA_BUNDLE", bundle)
	if err := get(); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("Get with the server's certificate in $AWS_CA_BUNDLE: %v, want not found", err)
	}
}
