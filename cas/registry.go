package cas

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"sync"
)

// Backend opens the stores of one URL scheme. Each backend package
// registers itself from its init function, so that a program links only
// the backends it imports (an object-store SDK only if it asks for one):
//
//	import _ "github.com/cairnlog/cairn/cas/s3" // s3:// URLs
type Backend struct {
	// Open returns the store u names. It should make no request: a
	// missing bucket or bad credentials show on first use. A store that
	// holds resources (connections, files) is an io.Closer: the
	// workspace that opened it closes it when the workspace is closed.
	Open func(ctx context.Context, u *url.URL) (Store, error)
	// Remote says the store is reached over a network, so its users stack
	// the retry wrapper (package retry) over it.
	Remote bool
}

var (
	backendsMu sync.RWMutex
	backends   = map[string]Backend{}
)

// Register makes b the backend of URLs with scheme. It panics if scheme
// is empty, b has no Open, or scheme already has a backend: two packages
// claiming one scheme is a programming error.
func Register(scheme string, b Backend) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	if scheme == "" || b.Open == nil {
		panic("cas: Register with an empty scheme or a nil Open")
	}
	if _, dup := backends[scheme]; dup {
		panic(fmt.Sprintf("cas: Register called twice for scheme %q", scheme))
	}
	backends[scheme] = b
}

// Lookup returns the backend registered for scheme.
func Lookup(scheme string) (Backend, bool) {
	backendsMu.RLock()
	defer backendsMu.RUnlock()
	b, ok := backends[scheme]
	return b, ok
}

// Schemes returns the registered schemes in order.
func Schemes() []string {
	backendsMu.RLock()
	defer backendsMu.RUnlock()
	out := make([]string, 0, len(backends))
	for s := range backends {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
