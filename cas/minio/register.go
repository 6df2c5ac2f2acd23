package minio

import (
	"context"
	"net/url"

	"github.com/cairnlog/cairn/cas"
)

// minio://HOST:PORT/BUCKET/PREFIX?... URLs (see ParseURL) open a Store.
func init() {
	cas.Register("minio", cas.Backend{Remote: true, Open: func(ctx context.Context, u *url.URL) (cas.Store, error) {
		return OpenURL(ctx, u)
	}})
}
