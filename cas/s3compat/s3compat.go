// Package s3compat is what the cas backends that speak the S3 protocol
// (packages s3 and minio) share: the rule for a store's key prefix, the
// parsing of a store URL's booleans, the reading of an error reply (its
// code and HTTP status) as a cas sentinel or a transient failure, and
// the reading of a request that got no reply (cas.UnavailableError),
// TLS failures included (tls.go, whose client wrapper tells a plain HTTP
// request to an HTTPS server from other failures).
// Each backend only extracts the Reply from its SDK's error type; the
// meaning of a reply, or of its absence, is decided here, once.
package s3compat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/timeout"
)

// ShowURL returns a store URL as a message may show it: as the user
// wrote it, less any password (url.URL.Redacted), and with its "//" even
// when it names no host ("s3://", which Redacted prints as "s3:").
func ShowURL(u *url.URL) string {
	s := u.Redacted()
	if u.Host == "" && u.Opaque == "" && u.User == nil && !strings.HasPrefix(s, u.Scheme+"://") {
		s = u.Scheme + "://" + strings.TrimPrefix(s, u.Scheme+":")
	}
	return s
}

// URLBool parses the value of a store URL's boolean parameter name
// (s3:// path_style, minio:// secure): what strconv.ParseBool takes
// (true, false, 1, 0, t, f, TRUE, False, …). Anything else, the empty
// value included, is an error naming the parameter: "path_style
// \"maybe\": want true or false". Both backends parse their booleans
// here, so their spellings and words cannot drift apart.
func URLBool(name, value string) (bool, error) {
	b, err := strconv.ParseBool(value)
	if err != nil {
		return false, fmt.Errorf("%s %q: want true or false", name, value)
	}
	return b, nil
}

// URLParams returns a store URL's query parameters, one value each. A
// parameter given twice is an error naming it ("secure given twice (it
// takes one value)"), as the CLI refuses a flag given twice: neither
// value may silently win.
func URLParams(u *url.URL) (map[string]string, error) {
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, fmt.Errorf("query %q: %w", u.RawQuery, err)
	}
	out := make(map[string]string, len(q))
	for k, vs := range q {
		if len(vs) > 1 {
			return nil, fmt.Errorf("%s given twice (it takes one value)", k)
		}
		out[k] = vs[0]
	}
	return out, nil
}

// CheckPort checks the port of a server's HOST:PORT, as a store URL
// gives it: a port, when there is one, is a number from 1 to 65535. A
// port out of range was tried as a connection that could not be made.
func CheckPort(hostport string) error {
	u := url.URL{Host: hostport}
	p := u.Port()
	if p == "" {
		if strings.HasSuffix(hostport, ":") {
			return fmt.Errorf("%q: no port after the colon", hostport)
		}
		return nil
	}
	if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %s: want a number from 1 to 65535", p)
	}
	return nil
}

// CleanPrefix returns the prefix under which a store keeps its keys:
// empty, or a valid key followed by '/'. Slashes around prefix are
// dropped.
func CleanPrefix(prefix string) (string, error) {
	p := strings.Trim(prefix, "/")
	if p == "" {
		return "", nil
	}
	if err := cas.ValidateKey(p); err != nil {
		return "", fmt.Errorf("prefix: %w", err)
	}
	return p + "/", nil
}

// Reply is an S3 error reply: its error code (such as "NoSuchKey") and
// HTTP status, either of which may be missing.
type Reply struct {
	Code   string
	Status int
}

// NotFound reports a missing object (not a missing bucket).
func (r Reply) NotFound() bool {
	return r.Code == "NoSuchKey" || r.Code == "NotFound" ||
		r.Status == http.StatusNotFound && r.Code != "NoSuchBucket"
}

// Exists reports a conditional create (If-None-Match: *) that lost:
// 412 PreconditionFailed, or 409 ConditionalRequestConflict for a
// concurrent conflicting write.
func (r Reply) Exists() bool {
	return r.Code == "PreconditionFailed" || r.Status == http.StatusPreconditionFailed ||
		r.Code == "ConditionalRequestConflict"
}

// Directory reports a request refused because a directory stands at
// the object's key: versitygw's posix backend keeps an object as a file,
// so a key that other objects continue with "/" ("KEY/x"), or a folder
// marker object "KEY/", is a directory, and a put there is answered 409
// ExistingObjectIsDirectory. Nothing was stored, and no retry helps.
func (r Reply) Directory() bool { return r.Code == "ExistingObjectIsDirectory" }

// ParentIsFile reports a refusal to create an object beneath another
// object: a server that keeps objects as files (versitygw) cannot hold
// "a/b" while the object "a" stands, and says ObjectParentIsFile (HTTP
// 409). Nothing was stored, and no retry helps.
func (r Reply) ParentIsFile() bool { return r.Code == "ObjectParentIsFile" }

// parentIsFileWhy says ParentIsFile in words. What stands there may be
// another workspace's object (a store URL whose prefix lies beneath a
// session's marker of another), so removing it is not the advice.
const parentIsFileWhy = "an object stands where a folder above this key belongs, and this server keeps objects as files, so it cannot hold one beneath another (is the store URL's prefix beneath an object of another workspace, such as a session's marker?)"

// Folder is what a store said stands where an object belongs when a
// directory or a folder marker does (cas.NotObjectError.What).
const Folder = "a directory"

// Listed is the entry of a listing for the object named key (relative
// to the store's prefix), and false for a name that is no key: an
// object whose name is a valid key; a folder marker "K/" whose K is one,
// as K with Info.NotObject Folder and Info.Apart, which a caller passes
// over unless it wants to know what stands at its keys (cairn verify);
// nothing else. A listing must not hand it over where the object K was
// listed, nor out of key order (after a key between K and "K/"): see
// Lister.
func Listed(key string, size int64, mod time.Time) (cas.Info, bool) {
	if k, ok := strings.CutSuffix(key, "/"); ok && cas.ValidateKey(k) == nil {
		return cas.Info{Key: k, NotObject: Folder, Apart: true}, true
	}
	if cas.ValidateKey(key) != nil {
		return cas.Info{}, false
	}
	return cas.Info{Key: key, Size: size, ModTime: mod}, true
}

// Lister keeps what a backend's List has handed over, so that a listing
// stays in key order: every entry sorts after startAfter and after the
// last entry, and starts with prefix.
type Lister struct {
	Prefix, StartAfter string
	last               string
	lastRaw            string // the last name the server listed (Next)
	empty              int    // the pages in a row without a name that said more were to come (Page)
}

// MaxEmptyPages bounds the pages in a row that a listing takes without
// a name in them, each saying more are to come (IsTruncated) with a
// token for the next. S3 may answer a few so: a page's request has a
// time budget, and a server that passes over many deleted or expiring
// objects (delete markers of a versioned bucket, say) may run out of it
// before it finds a name to list. Each such page passes over up to a
// page's worth of objects that are not there, so a thousand in a row is
// a million of them before the next listed key, under one session's
// steps or one prefix of the layout: no store of cairn's holds that,
// and a server that goes on so is broken or hostile. A bound on pages,
// not on time, keeps the answer the same however fast the server is.
const MaxEmptyPages = 1000

// Page checks a page of the server's answer to a listing before its
// names are taken (Next): names is how many it lists, more whether it
// says more are to come. A listing that goes on past MaxEmptyPages
// pages in a row without a name, each with a new token (one that
// repeats its token is caught at once), would keep the listing going
// for as long as the server answered: the listing fails (NotS3), as
// every other break of the listing's contract does.
func (l *Lister) Page(names int, more bool) error {
	if names > 0 || !more {
		l.empty = 0
		return nil
	}
	if l.empty++; l.empty > MaxEmptyPages {
		return NotS3("list", l.Prefix, fmt.Sprintf("a listing that went on for more than %d pages in a row without a key, each saying more were to come", MaxEmptyPages))
	}
	return nil
}

// Next checks the next name in the server's answer to a listing of
// rawPrefix (the store's prefix and the listing's), before it is taken
// for an entry (Listed, Want): every S3 server lists each name once, in
// byte order, under the prefix asked for, across pages. A server that
// does not (a broken or hostile one) is no S3 server, and the listing
// fails (NotS3): passed over, a name out of order would hide a key (a
// session's step) from the listing, and a page repeated without end
// would keep the listing going round.
func (l *Lister) Next(rawPrefix, rawName string) error {
	var what string
	switch {
	case !strings.HasPrefix(rawName, rawPrefix):
		what = "a listing with keys outside the prefix it was asked for"
	case l.lastRaw != "" && rawName == l.lastRaw:
		what = "a listing that names a key twice"
	case rawName < l.lastRaw:
		what = "a listing with keys out of order"
	}
	if what != "" {
		return NotS3("list", l.Prefix, what)
	}
	l.lastRaw = rawName
	return nil
}

// Want reports whether the listing hands i over, and then takes it as
// the last entry.
func (l *Lister) Want(i cas.Info) bool {
	if i.Key <= l.StartAfter || i.Key <= l.last || !strings.HasPrefix(i.Key, l.Prefix) {
		return false
	}
	l.last = i.Key
	return true
}

// NotObject is the error of verb on key when a directory stands where
// the object belongs (Reply.Directory, or a backend's own check): the
// store's damage, said in words (cas.NotObjectError) as a refusal that
// stored nothing, never as a lost race or a put that may have landed.
// err is the reply that showed it.
func NotObject(verb, key string, err error) error {
	ne := &cas.NotObjectError{Key: key, What: Folder}
	cause := error(ne)
	if verb == "put" {
		cause = cas.NotStored(ne)
	}
	return fmt.Errorf("%s %s: %w (%v)", verb, key,
		&cas.RefusedError{Op: verb, Key: key, Why: ne.Error() + " (remove it to repair)", Err: cause}, err)
}

// LostCreate is the error of a conditional create of key that the
// server refused (err, whose Reply.Exists holds): cas.ErrExists, a lost
// race, unless no object holds key but a folder marker "key/" stands
// there. versitygw refuses the create (412) of a key its posix backend
// holds as an empty directory, though no writer ever created it; said
// as a lost race, the commit would fail as a conflict for ever, so it is
// the store's damage (NotObject). head stats a key through the backend
// and reply reads its error: two HEADs at most, only on a lost create
// (one when another writer did create key); any doubt is a lost race.
func LostCreate(key string, err error, head func(key string) error, reply func(error) Reply) error {
	if herr := head(key); herr != nil && reply(herr).NotFound() && head(key+"/") == nil {
		return NotObject("put", key, err)
	}
	return fmt.Errorf("put %s: %w", key, cas.ErrExists)
}

// Stored checks the answer to a PUT of key that succeeded: every S3
// server names the object it stored by its ETag; an HTTP server that
// answers every request 200 does not, and a step so "stored" would be
// acknowledged and lost.
func Stored(key, etag string) error {
	if etag == "" {
		return NotS3("put", key, "HTTP 200 to a PUT without an ETag")
	}
	return nil
}

// PastEnd reports a ranged read that starts at or past the object's end.
func (r Reply) PastEnd() bool {
	return r.Code == "InvalidRange" || r.Status == http.StatusRequestedRangeNotSatisfiable
}

// transientCodes are the error codes worth retrying, whatever the status.
var transientCodes = map[string]bool{
	"SlowDown": true, "InternalError": true, "ServiceUnavailable": true, "RequestTimeout": true,
	"Throttling": true, "ThrottlingException": true, "RequestThrottled": true, "RequestLimitExceeded": true,
	"TooManyRequestsException": true, "XMinioServerNotInitialized": true,
}

// Transient reports whether the reply is worth retrying: a throttling or
// server-side code, a 5xx other than 501, 429 or 408.
func (r Reply) Transient() bool {
	switch {
	case transientCodes[r.Code]:
		return true
	case r.Code == "NotImplemented":
		return false
	}
	return r.Status >= 500 && r.Status != http.StatusNotImplemented ||
		r.Status == http.StatusTooManyRequests || r.Status == http.StatusRequestTimeout
}

// Refused reports a reply by which the server refused a request outright
// (403 AccessDenied, 404 NoSuchBucket, 400, 413 …): a 4xx other than
// those worth retrying (408, 429) and a lost conditional create (409,
// 412). A put so refused stored nothing.
// A 301 (the bucket is in another region) and a 501 (the server does not
// implement the request) are refusals too.
func (r Reply) Refused() bool {
	if r.Status == http.StatusMovedPermanently || r.Code == "PermanentRedirect" || r.notImplemented() {
		return true
	}
	return r.Status >= 400 && r.Status < 500 && !r.Transient() && !r.Exists() && r.Status != http.StatusConflict
}

// notImplemented reports a request the server does not implement (an
// S3-compatible server without conditional creates, say): refused, and
// not worth retrying.
func (r Reply) notImplemented() bool {
	return r.Code == "NotImplemented" || r.Status == http.StatusNotImplemented
}

// credentialCodes are the codes of a request whose credentials the
// server did not accept (as opposed to credentials it knows that may not
// do what was asked: AccessDenied).
var credentialCodes = map[string]bool{
	"InvalidAccessKeyId": true, "SignatureDoesNotMatch": true, "InvalidToken": true,
	"InvalidClientTokenId": true, "InvalidSecurity": true, "MissingSecurityHeader": true,
	"UnrecognizedClientException": true,
}

// regionCodes are the codes of a request sent to, or signed for, a
// region other than the bucket's.
var regionCodes = map[string]bool{
	"PermanentRedirect": true, "AuthorizationHeaderMalformed": true,
	"IllegalLocationConstraintException": true, "InvalidRegion": true,
}

// Why says a refusal (see Refused) in words, with what to check: what a
// message shows instead of the server's reply, which names the object's
// key and the SDK's internals.
func (r Reply) Why() string {
	switch {
	case credentialCodes[r.Code]:
		return "the credentials were not accepted (check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or what supplies them: the AWS profile on s3://, MINIO_ROOT_USER and MINIO_ROOT_PASSWORD on minio://)"
	case r.Code == "ExpiredToken" || r.Code == "TokenRefreshRequired":
		return "the credentials have expired (renew them)"
	case r.Code == "NoSuchBucket":
		return "the bucket does not exist (check the bucket in the store URL, or create it)"
	case r.Code == "InvalidBucketName":
		return "the bucket's name is not valid (check the bucket in the store URL)"
	case regionCodes[r.Code] || r.Status == http.StatusMovedPermanently:
		return "the bucket is in another region than the request was signed for (set region= in the store URL, or AWS_REGION, to the bucket's)"
	case r.Code == "AccessDenied" || r.Code == "AllAccessDisabled" || r.Status == http.StatusForbidden:
		return "access denied (the credentials were accepted but may not do this in this bucket and prefix: check their policy, as in docs/s3.md)"
	case r.Code == "EntityTooLarge" || r.Status == http.StatusRequestEntityTooLarge:
		return "the object is larger than the server accepts"
	case r.notImplemented():
		return "the server does not implement the request (" + r.said() + "): cairn needs ranged reads, listing after a key and conditional creates (If-None-Match: *) of an S3 server (see docs/s3.md)"
	}
	return "the server answered " + r.said()
}

// said is the reply as a message shows it: "HTTP 500 InternalError",
// "HTTP 503" (a code that only repeats the status, as minio-go makes
// one, "503 Service Unavailable", from a reply without an S3 error
// body, is left out), or the code alone when the status is unknown.
func (r Reply) said() string {
	switch {
	case r.Status == 0:
		return r.Code
	case r.Code == "" || strings.HasPrefix(r.Code, strconv.Itoa(r.Status)):
		return fmt.Sprintf("HTTP %d", r.Status)
	}
	return fmt.Sprintf("HTTP %d %s", r.Status, r.Code)
}

// busyWhy says a reply worth retrying (see Transient) in words, to
// follow the store's URL: a server error, or a request the server
// throttled or timed out.
func (r Reply) busyWhy() string {
	if r.Status >= 500 || r.Status == 0 {
		return "answered with a server error (" + r.said() + ")"
	}
	return "answered that it is busy (" + r.said() + ")"
}

// Unconfigured is the error of opening a store whose configuration
// lacks what every request needs (credentials, a region), found before
// any request is made: a cas.UnavailableError of Op "open", whose words,
// "could not be used: " and what (which says what is missing and where
// it is looked for), follow the store's URL.
func Unconfigured(what string) error {
	return &cas.UnavailableError{Op: "open", Why: "could not be used: " + what, Err: errors.New("open store: " + what)}
}

// noCredentials marks the error of a backend that found no credentials
// to sign a request with (see NoCredentials).
type noCredentials struct{ err error }

func (e *noCredentials) Error() string { return e.err.Error() }
func (e *noCredentials) Unwrap() error { return e.err }

// NoCredentials marks err as a failure to find credentials to sign a
// request with (the AWS credential chain came up empty), so that
// MapError says so instead of what the chain's last source answered (an
// instance metadata service's 403 is no refusal by the store).
func NoCredentials(err error) error {
	if err == nil {
		return nil
	}
	return &noCredentials{err: err}
}

// Unavailable reports whether err is a request that got no answer from
// the store, and says why in words that follow the store's URL (see
// cas.UnavailableError): no credentials to sign it with (NoCredentials),
// a TLS failure (HTTPS to a plain HTTP server or the reverse, a
// certificate that cannot be verified), a timeout (package timeout's
// idle timeout, or a dial's), a host name that does not resolve, a
// refused, reset or unreachable connection. It
// is the one reading of both backends' transport errors; a reply from
// the server, however bad, is not one.
func Unavailable(err error) (string, bool) {
	var nc *noCredentials
	var te *timeout.Error
	var dns *net.DNSError
	var op *net.OpError
	var ne net.Error
	switch {
	case errors.As(err, &nc):
		return "could not be used: no AWS credentials were found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE; see docs/s3.md)", true
	case tlsWhy(err) != "":
		return tlsWhy(err), true
	case errors.As(err, &te):
		return fmt.Sprintf("did not answer within %v (set the timeout with ?timeout= or $%s)", te.Idle, timeout.EnvTimeout), true
	case errors.As(err, &dns) && dns.IsNotFound:
		return fmt.Sprintf("could not be reached (no such host %q: check the host in the store URL)", dns.Name), true
	case errors.As(err, &dns):
		return fmt.Sprintf("could not be reached (the host name %q could not be looked up)", dns.Name), true
	case errors.As(err, &op) && op.Op == "dial":
		why := "could not connect"
		switch {
		case op.Timeout():
			why = "the connection timed out"
		case errors.Is(err, syscall.ECONNREFUSED):
			why = "connection refused: is the server running, and is the port in the store URL right?"
		case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
			why = "the network or host is unreachable"
		}
		return "could not be reached (" + why + ")", true
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE):
		return "did not answer (the connection was reset)", true
	case errors.As(err, &ne) && ne.Timeout():
		return "did not answer (the request timed out)", true
	}
	return "", false
}

// MapError translates the error err of a verb ("get", "put", ...) on key,
// whose reply was r: a missing object to cas.ErrNotFound, a reply worth
// retrying (a server error, throttling) as a cas.UnavailableError marked
// cas.Transient, a request the server refused as a cas.RefusedError
// (and, a put, marked cas.NotStored), the rest wrapped as is. A
// cancelled or expired context is never transient.
func MapError(verb, key string, err error, r Reply) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s %s: %w", verb, key, err)
	}
	if why, ok := Unavailable(err); ok {
		// Not marked transient here: the retry wrapper decides that from
		// the cause, as it did before these words.
		return fmt.Errorf("%s %s: %w", verb, key, &cas.UnavailableError{Op: verb, Key: key, Why: why, Err: err})
	}
	switch {
	case r.Directory():
		return NotObject(verb, key, err)
	case r.ParentIsFile():
		refused := &cas.RefusedError{Op: verb, Key: key, Why: parentIsFileWhy, Err: err}
		if verb == "put" {
			return fmt.Errorf("%s %s: %w", verb, key, cas.NotStored(refused))
		}
		return fmt.Errorf("%s %s: %w", verb, key, refused)
	case (verb == "list" || verb == "put") && r.NotFound():
		// A listing finds no key, or no bucket (NoSuchBucket, refused
		// below), and a put creates its key: neither is "not found".
		return NotS3(verb, key, map[string]string{"list": "HTTP 404 to a listing", "put": "HTTP 404 to a PUT"}[verb]+", naming no missing bucket")
	case r.NotFound():
		return fmt.Errorf("%s %s: %w", verb, key, cas.ErrNotFound)
	case r.Transient():
		un := &cas.UnavailableError{Op: verb, Key: key, Why: r.busyWhy(), ServerError: true, Err: err}
		return cas.Transient(fmt.Errorf("%s %s: %w", verb, key, un))
	case CutOff(err):
		un := &cas.UnavailableError{Op: verb, Key: key, Why: cutOffWhy, Err: err}
		return cas.Transient(fmt.Errorf("%s %s: response cut off: %w", verb, key, un))
	case r.Refused():
		refused := &cas.RefusedError{Op: verb, Key: key, Why: r.Why(), Err: err}
		if verb == "put" {
			return fmt.Errorf("%s %s: %w", verb, key, cas.NotStored(refused))
		}
		return fmt.Errorf("%s %s: %w", verb, key, refused)
	}
	return fmt.Errorf("%s %s: %w", verb, key, err)
}

// NotS3 is the error of verb on key when the server answered with
// success, but not as any S3 server does (what says how: "HTTP 200 to a
// PUT without an ETag"): the endpoint is some other HTTP server, a web
// server or a proxy's page answering every request alike. Such an answer
// proves nothing, so a put is never taken as stored (nor said as surely
// not stored) and a listing never as empty; it is not retried. Said
// after the store's URL (cas.UnavailableError).
func NotS3(verb, key, what string) error {
	return fmt.Errorf("%s %s: %w", verb, key, &cas.UnavailableError{Op: verb, Key: key,
		Why: "answered as no S3 server does (" + what + "; check that the endpoint in the store URL is an S3 server)",
		Err: errors.New("not an S3 answer: " + what)})
}

// cutOffWhy says a response cut off before its end.
const cutOffWhy = "did not answer in full (the connection closed before the response ended)"

// BodyError translates the error of reading the body of key's GET
// response: a body cut off or stalled is said as one that got no whole
// answer (cas.UnavailableError), and keeps its cause, which the retry
// wrapper retries as before.
func BodyError(key string, err error) error {
	why, ok := Unavailable(err)
	if !ok && CutOff(err) {
		why, ok = cutOffWhy, true
	}
	if ok {
		err = &cas.UnavailableError{Op: "get", Key: key, Why: why, Err: err}
	}
	return fmt.Errorf("get %s: read body: %w", key, err)
}

// CutOff reports a response cut off before its end: the connection
// closed before the headers (io.EOF under a *url.Error) or in the middle
// of the body (io.ErrUnexpectedEOF). minio-go replaces the first kind's
// io.EOF with the text "Connection closed by foreign host ... Retry
// again.", which is recognised by that text.
func CutOff(err error) bool {
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var ue *url.Error
	return errors.As(err, &ue) && ue.Err != nil &&
		(errors.Is(ue.Err, io.EOF) || strings.Contains(ue.Err.Error(), "Connection closed by foreign host"))
}
