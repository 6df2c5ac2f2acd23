package mem

import (
	"context"
	"net/url"

	"github.com/cairnlog/cairn/cas"
)

// mem:// names a new, empty in-memory store (tests).
func init() {
	cas.Register("mem", cas.Backend{Open: func(context.Context, *url.URL) (cas.Store, error) {
		return New(), nil
	}})
}
