package minio_test

import (
	"context"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/castest"
	"github.com/cairnlog/cairn/cas/minio"
)

// TestListingBrokenServer: see castest.BrokenListings. Before, minio://
// passed over every key that did not sort after the last (a reversed
// listing of a session's three steps handed over the newest alone) and
// minio-go followed a page that named itself as its next for as long as
// the server went on.
func TestListingBrokenServer(t *testing.T) {
	castest.BrokenListings(t, func(t *testing.T, url string) cas.Store {
		s, err := minio.Open(context.Background(), "bucket", "p", minio.Options{
			Endpoint: strings.TrimPrefix(url, "http://"), AccessKey: "ak", SecretKey: "sk",
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
