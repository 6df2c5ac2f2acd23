package s3

import (
	"context"
	"net/url"

	"github.com/cairnlog/cairn/cas"
)

// s3://BUCKET/PREFIX?... URLs (see ParseURL) open a Store.
func init() {
	cas.Register("s3", cas.Backend{Remote: true, Open: func(ctx context.Context, u *url.URL) (cas.Store, error) {
		bucket, prefix, opts, err := ParseURL(u)
		if err != nil {
			return nil, cas.URLError(err)
		}
		return Open(ctx, bucket, prefix, opts)
	}})
}
