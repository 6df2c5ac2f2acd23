package s3_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/castest"
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
			castest.RunThroughFaults(t, l, func(t *testing.T, n int) cas.Store {
				return open(t, b, fmt.Sprintf("cut-%d", n), &http.Client{Transport: l})
			})
		})
	}
}
