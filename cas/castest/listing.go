package castest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/s3compat"
)

// BrokenListings runs an S3 backend's List against servers whose answer
// to a listing names keys out of order, a key twice, or a key outside
// the prefix asked for, or hands the same page again for its next: no
// S3 server. open returns the backend's store of bucket "bucket",
// prefix "p", at the server's URL. The listing must fail saying so
// (cas.UnavailableError), after the page that showed it: passed over, a
// key out of order hides a key (a session's step) from the listing, and
// a page that names itself as its next keeps the listing going round
// (here, until the server stops, at 50 pages), as do pages without a
// key that each name a new next (s3compat.MaxEmptyPages).
func BrokenListings(t *testing.T, open func(t *testing.T, url string) cas.Store) {
	const page = `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>bucket</Name><Prefix>p/steps/a/</Prefix>%s<IsTruncated>%v</IsTruncated>%s</ListBucketResult>`
	contents := func(keys ...string) string {
		var b strings.Builder
		for _, k := range keys {
			fmt.Fprintf(&b, "<Contents><Key>%s</Key><Size>1</Size></Contents>", k)
		}
		return b.String()
	}
	step := func(n int) string { return fmt.Sprintf("p/steps/a/%020d", n) }
	again := func(keys ...string) func(int64) string {
		return func(n int64) string {
			if n >= 50 {
				return fmt.Sprintf(page, "", false, "")
			}
			return fmt.Sprintf(page, contents(keys...), true, "<NextContinuationToken>t</NextContinuationToken>")
		}
	}
	// Pages without a key, each saying more are to come with a new
	// token, for three times the bound (then the server stops): the
	// listing must end at the bound, not when the server does.
	emptyRun := func(n int64) string {
		if n > 3*s3compat.MaxEmptyPages {
			return fmt.Sprintf(page, "", false, "")
		}
		return fmt.Sprintf(page, "", true, fmt.Sprintf("<NextContinuationToken>t%d</NextContinuationToken>", n))
	}
	for _, tc := range []struct {
		name     string
		pages    func(n int64) string // the answer to the nth listing request
		says     string               // what the error says (or, between '|', one of them)
		requests int64                // the requests it may take (0: 2)
	}{
		{"reversed", func(int64) string { return fmt.Sprintf(page, contents(step(3), step(2), step(1)), false, "") }, "keys out of order", 0},
		{"twice", func(int64) string { return fmt.Sprintf(page, contents(step(1), step(1), step(2)), false, "") }, "names a key twice", 0},
		{"outside", func(int64) string { return fmt.Sprintf(page, contents(step(1), "p/steps/b/x", step(2)), false, "") }, "keys outside the prefix", 0},
		{"same page", again(step(1)), "names a key twice|whose next page is the page it gave", 0},
		{"same empty page", again(), "whose next page is the page it gave", 0},
		{"empty pages without end", emptyRun, "pages in a row without a key", s3compat.MaxEmptyPages + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/xml")
				fmt.Fprint(w, tc.pages(n.Add(1)))
			}))
			defer srv.Close()
			s := open(t, srv.URL)
			// A backstop only: a listing that went on until the server
			// stopped fails below, as one cut off here does.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			var listed []string
			err := s.List(ctx, "steps/a/", "", func(i cas.Info) error { listed = append(listed, i.Key); return nil })
			says := false
			for _, w := range strings.Split(tc.says, "|") {
				says = says || err != nil && strings.Contains(err.Error(), w)
			}
			requests := max(tc.requests, 2)
			var ue *cas.UnavailableError
			if !errors.As(err, &ue) || !says || n.Load() > requests {
				t.Errorf("List after %d requests: %q, %v; want it refused after the page that showed it (at most %d requests), saying %q", n.Load(), listed, err, requests, tc.says)
			}
		})
	}
	// S3 may answer a few pages without a key that say more are to come
	// (see s3compat.MaxEmptyPages): the listing goes on to the keys.
	t.Run("a few empty pages", func(t *testing.T) {
		var n atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/xml")
			if i := n.Add(1); i <= 3 {
				fmt.Fprintf(w, page, "", true, fmt.Sprintf("<NextContinuationToken>t%d</NextContinuationToken>", i))
				return
			}
			fmt.Fprintf(w, page, contents(step(1), step(2)), false, "")
		}))
		defer srv.Close()
		var listed []string
		err := open(t, srv.URL).List(context.Background(), "steps/a/", "", func(i cas.Info) error { listed = append(listed, i.Key); return nil })
		if want := []string{"steps/a/" + fmt.Sprintf("%020d", 1), "steps/a/" + fmt.Sprintf("%020d", 2)}; err != nil || !slices.Equal(listed, want) {
			t.Errorf("List = %q, %v; want %q", listed, err, want)
		}
	})
}
