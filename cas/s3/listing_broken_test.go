package s3_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/castest"
	"github.com/cairnlog/cairn/cas/s3"
)

// TestListingBrokenServer: see castest.BrokenListings. Before, s3://
// passed over every key that did not sort after the last (a reversed
// listing of a session's three steps handed over the newest alone) and
// followed a page that named itself as its next for as long as the
// server went on.
func TestListingBrokenServer(t *testing.T) {
	castest.BrokenListings(t, func(t *testing.T, url string) cas.Store {
		s, err := s3.Open(context.Background(), "bucket", "p", s3.Options{
			Endpoint: url, PathStyle: true,
			Credentials: credentials.NewStaticCredentialsProvider("ak", "sk", ""),
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
