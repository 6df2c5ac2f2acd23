package minio

import (
	"context"
	"net/url"

	"github.com/cairnlog/cairn/cas"
)

// minio://HOST:PORT/BUCKET/PREFIX?... URLs (see ParseURL) open a Store.
func init() {
	cas.Register("minio", cas.Backend{Remote: true, Open: func(ctx context.Context, u *url.URL) (cas.Store, error) {
		bucket, prefix, opts, err := ParseURL(u)
		if err != nil {
			return nil, cas.URLError(err)
		}
		return Open(ctx, bucket, prefix, opts)
	}})
}
