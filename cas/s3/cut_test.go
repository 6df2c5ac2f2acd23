package s3_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/castest"
	"github.com/cairnlog/cairn/cas/retry"
	"net/http"
)

// TestRetryOverCutResponses is issue 13 item 11: responses cut off
// before their headers or mid-body (a server closing its connection)
// are retried like any lost response. minio-go turns the first kind's
// io.EOF into "Connection closed by foreign host ... Retry again.",
// which the minio backend must classify as transient; s3:// must too.
func TestRetryOverCutResponses(t *testing.T) {
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			b := srv.start(t)
			l := castest.NewCuttingTransport(0.3, 2)
			n := 0
			castest.Run(t, func(t *testing.T) cas.Store {
				n++
				s := open(t, b, fmt.Sprintf("cut-%d", n), &http.Client{Transport: l})
				return retry.New(s, retry.Policy{Attempts: 30, Base: time.Millisecond, Max: 5 * time.Millisecond})
			})
			t.Logf("responses cut: %d", l.Drops())
			if l.Drops() == 0 {
				t.Fatal("no response was cut")
			}
		})
	}
}
