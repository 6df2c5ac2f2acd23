package fs

import (
	"context"
	"net/url"

	"github.com/cairnlog/cairn/cas"
)

// file:// URLs (and plain paths, which cairn.Open hands over as file
// URLs with the path unescaped) name a local directory.
func init() {
	cas.Register("file", cas.Backend{Open: func(_ context.Context, u *url.URL) (cas.Store, error) {
		return Open(u.Path)
	}})
}
