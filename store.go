package cairn

import (
	"context"
	"fmt"
	neturl "net/url"
	"strings"

	"github.com/cairnlog/cairn/cas"
	_ "github.com/cairnlog/cairn/cas/fs"  // file:// and plain paths: the local default
	_ "github.com/cairnlog/cairn/cas/mem" // mem://
	"github.com/cairnlog/cairn/internal/storeurl"
)

// openStore opens the backend a store URL names, and says whether it is
// remote (see cas.Backend). A plain path is a local directory.
func openStore(ctx context.Context, url string) (cas.Store, bool, error) {
	scheme, rest := storeurl.Split(url)
	b, ok := cas.Lookup(scheme)
	if !ok {
		var want []string
		for _, s := range cas.Schemes() {
			want = append(want, s+"://")
		}
		hint := ""
		if scheme == "s3" || scheme == "minio" {
			// Only a program embedding cairn can lack them; the CLI links both.
			hint = "; a program links the s3:// and minio:// backends by importing github.com/cairnlog/cairn/cas/s3 and cas/minio"
		}
		return nil, false, invalid(fmt.Errorf("open store %q: unknown scheme %q (want a path, or one of %s%s)",
			url, scheme, strings.Join(want, ", "), hint))
	}
	if scheme == "file" && rest == "" {
		return nil, false, invalid(fmt.Errorf("open store %q: names no directory (want file://PATH or a plain path)", url))
	}
	u := &neturl.URL{Scheme: "file", Path: rest} // paths are not URL-escaped
	if scheme != "file" {
		var err error
		if u, err = neturl.Parse(url); err != nil {
			return nil, false, invalid(fmt.Errorf("open store %q: %w", url, err))
		}
	}
	s, err := b.Open(ctx, u)
	if err != nil {
		return nil, false, err
	}
	return s, b.Remote, nil
}
