package minio

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"net/http"
	"net/url"

	"github.com/cairnlog/cairn/cas/s3compat"
)

// maxListing bounds the answer to one listing request that is read
// before minio-go decodes it: a page of 1,000 keys of the longest a key
// may be is well under it.
const maxListing = 16 << 20

// notListing is the error minio-go meets reading the body of an answer
// to a listing that no S3 server sends (see listingCheck); what says how
// it is no listing, for s3compat.NotS3, or err is the listing's own
// failure (s3compat.Lister.Page).
type notListing struct {
	what string
	err  error
}

func (e *notListing) Error() string {
	if e.err != nil {
		return e.err.Error()
	}
	return "not an S3 listing: " + e.what
}

// listerKey is the key of the context value that carries a List's
// s3compat.Lister to listingCheck, which alone sees where minio-go's
// pages begin and end.
type listerKey struct{}

// withLister returns ctx carrying l, for the requests of one listing.
func withLister(ctx context.Context, l *s3compat.Lister) context.Context {
	return context.WithValue(ctx, listerKey{}, l)
}

// failingBody is a body that fails every read with err.
type failingBody struct{ err error }

func (b failingBody) Read([]byte) (int, error) { return 0, b.err }
func (b failingBody) Close() error             { return nil }

// listingCheck is the transport of a Store's client. It reads the answer
// to every listing request (ListObjectsV2, a GET with list-type=2) that
// came back 200 before minio-go does, and makes it fail to read unless
// it is an S3 listing: an XML ListBucketResult that repeats the prefix it
// was asked for, as every S3 server's does. minio-go decodes any XML
// document, a web page (a captive portal's, a web server's at the
// endpoint) included, as a listing with no keys, and hands a listing
// nothing of its answer but the keys it holds; without this check such
// a page lists an empty store. minio-go also asks for page after page
// without handing anything over while the pages are empty and say more
// are to come, so each page is shown to the listing's Lister (carried by
// the request's context: withLister), which ends such a run
// (s3compat.Lister.Page). Every other request and answer passes
// untouched.
type listingCheck struct{ next http.RoundTripper }

func (t listingCheck) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK || req.Method != http.MethodGet ||
		req.URL.Query().Get("list-type") != "2" {
		return resp, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxListing+1))
	resp.Body.Close()
	switch {
	case err != nil:
		// The answer was cut off or stalled: minio-go meets the same
		// error after what was read, as it would have without this.
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), failingBody{err}), failingBody{}}
	case len(body) > maxListing:
		resp.Body = failingBody{&notListing{what: "a listing larger than any S3 server sends"}}
	default:
		what, names, more := notS3Listing(body, req.URL.Query().Get("prefix"), req.URL.Query().Get("continuation-token"))
		var perr error
		if l, ok := req.Context().Value(listerKey{}).(*s3compat.Lister); ok && what == "" {
			perr = l.Page(names, more)
		}
		switch {
		case what != "":
			resp.Body = failingBody{&notListing{what: what}}
		case perr != nil:
			resp.Body = failingBody{&notListing{err: perr}}
		default:
			resp.Body = io.NopCloser(bytes.NewReader(body))
		}
	}
	return resp, nil
}

// notS3Listing says how body, the answer to a listing of prefix from
// the page token (none: the first page), is no S3 listing, or returns ""
// if it is one, with how many names it lists and whether it says more
// are to come. A page whose next page is itself is none: minio-go would
// ask for it again for as long as the server answered.
func notS3Listing(body []byte, prefix, token string) (what string, names int, more bool) {
	if len(bytes.TrimSpace(body)) == 0 {
		return "a listing with an empty body", 0, false
	}
	var l struct {
		XMLName               xml.Name
		Prefix                *string
		EncodingType          string
		IsTruncated           bool
		NextContinuationToken string
		Contents              []struct{}
	}
	listing := xml.Unmarshal(body, &l) == nil && l.XMLName.Local == "ListBucketResult"
	names, more = len(l.Contents), l.IsTruncated
	switch {
	case listing && token != "" && l.IsTruncated && l.NextContinuationToken == token:
		return "a listing whose next page is the page it gave", names, more
	case prefix == "" && listing:
		return "", names, more // some servers leave an empty prefix out
	case prefix == "":
		return "an answer to a listing that is no S3 listing", names, more
	case !listing || l.Prefix == nil:
		// A web page is said as s3:// says it.
		return "a listing without the prefix it was asked for", names, more
	}
	got := *l.Prefix
	if l.EncodingType == "url" {
		if u, err := url.QueryUnescape(got); err == nil {
			got = u
		}
	}
	if got != prefix {
		return "a listing of another prefix than it was asked for", names, more
	}
	return "", names, more
}
