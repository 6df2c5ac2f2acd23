// Package s3 is the cas.Store on Amazon S3 and S3-compatible servers
// (MinIO, versitygw, ...), built on aws-sdk-go-v2.
//
// Every key of a store lives under one prefix of one bucket: key k is the
// object PREFIX/k. The prefix confines a workspace; a least-privilege
// policy grants access to that prefix only (see docs/s3.md).
//
// Conditional create is PutObject with If-None-Match: *; the server
// answers 412 PreconditionFailed (or 409 ConditionalRequestConflict for a
// concurrent conflicting write) to every writer but one, and both are
// reported as cas.ErrExists.
//
// The SDK's own retries are off: one call is one HTTP request, retried (if
// at all) by the cas/retry wrapper, so request counts are real. Errors
// worth retrying (5xx except 501, SlowDown, throttling, request timeouts)
// are marked cas.Transient; network errors are said in words by
// s3compat (cas.UnavailableError) and classified for retrying by cas/retry.
// The SDK's optional request and response checksums are off too
// ("when_required"): they add aws-chunked trailers that several
// S3-compatible servers reject, and every cairn read verifies content
// hashes anyway.
package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/s3compat"
	"github.com/cairnlog/cairn/cas/timeout"
)

var _ cas.Store = (*Store)(nil)

// DefaultRegion is used when an endpoint is given and no region is
// configured anywhere: S3-compatible servers mostly ignore the region
// but SigV4 needs one.
const DefaultRegion = "us-east-1"

// Options configure a Store. The zero value means AWS S3 with the
// standard credential chain, region and endpoint settings.
type Options struct {
	// Endpoint is the server's base URL, e.g. "http://127.0.0.1:9000".
	// Empty: AWS_ENDPOINT_URL_S3, then AWS_ENDPOINT_URL, then AWS itself.
	Endpoint string
	// Region; empty: AWS_REGION, AWS_DEFAULT_REGION or the shared config
	// profile, and DefaultRegion if an endpoint is set and none of those is.
	Region string
	// PathStyle addresses the bucket in the URL path instead of the host
	// name, as most S3-compatible servers need.
	PathStyle bool
	// Credentials; nil: the standard chain (environment, shared files,
	// SSO, web identity, container and instance roles).
	Credentials aws.CredentialsProvider
	// HTTPClient; nil: a client with every setting of the SDK's default
	// (AWS_CA_BUNDLE, TLS, proxy from the environment, its timeouts and
	// redirect policy) whose idle connections Close closes. A client
	// given here is used as is, and its connections are its caller's.
	HTTPClient *http.Client
	// Timeout aborts a request that makes no progress for this long, as
	// a transient failure (0: never). Attempts is how many attempts the
	// retry wrapper gives one call (0: its default); see Store.Attempts.
	Timeout  time.Duration
	Attempts int
}

// Store is a cas.Store in one prefix of an S3 bucket.
type Store struct {
	client *s3.Client
	bucket string
	prefix string // "" or ends in "/"
	// attempts is Options.Attempts, for the retry wrapper.
	attempts int
	// location is the bucket and prefix on the endpoint the client
	// resolved (Location).
	location string

	pageSize int32 // keys per ListObjectsV2 request; 0: the server's default (1,000)
	// own is the client Open made in place of the SDK's default (see
	// Close); nil when Options.HTTPClient was given.
	own *http.Client
}

// Open returns a store for the objects under prefix in bucket. It makes
// no request; a missing bucket or bad credentials show on first use.
func Open(ctx context.Context, bucket, prefix string, opts Options) (*Store, error) {
	if bucket == "" {
		return nil, errors.New("open s3 store: no bucket")
	}
	p, err := s3compat.CleanPrefix(prefix)
	if err != nil {
		return nil, fmt.Errorf("open s3 store: %w", err)
	}
	endpoint := opts.Endpoint
	if endpoint == "" {
		endpoint = envEndpoint()
	}
	loadOpts := []func(*config.LoadOptions) error{
		config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired),
		config.WithRetryer(func() aws.Retryer { return aws.NopRetryer{} }),
		// The SDK's own log lines ("WARN falling back to IMDSv1 …") would
		// break a command's one line of error on stderr.
		config.WithLogger(logging.Nop{}),
	}
	if opts.Region != "" {
		loadOpts = append(loadOpts, config.WithRegion(opts.Region))
	}
	if opts.Credentials != nil {
		loadOpts = append(loadOpts, config.WithCredentialsProvider(opts.Credentials))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return nil, fmt.Errorf("open s3 store: load aws config: %w", err)
	}
	if _, anon := cfg.Credentials.(aws.AnonymousCredentials); cfg.Credentials != nil && !anon {
		cfg.Credentials = credentials{cfg.Credentials}
	}
	var own *http.Client
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		if o.Region == "" && o.BaseEndpoint != nil {
			// An endpoint from the URL, the environment or the shared
			// config: an S3-compatible server, which needs some region.
			o.Region = DefaultRegion
		}
		o.UsePathStyle = opts.PathStyle
		if opts.HTTPClient != nil {
			// Set here, not in LoadDefaultConfig, which insists on its own
			// client type when AWS_CA_BUNDLE is set.
			o.HTTPClient = opts.HTTPClient
		} else if b, ok := o.HTTPClient.(*awshttp.BuildableClient); ok {
			// The SDK's default as the SDK resolved it, but with a
			// transport the store can reach, to close (Close).
			own = ownClient(b)
			o.HTTPClient = own
		}
		if opts.Timeout > 0 {
			var next timeout.Doer = o.HTTPClient
			if next == nil {
				next = &http.Client{}
			}
			o.HTTPClient = timeout.Client(next, opts.Timeout)
		}
		if o.BaseEndpoint != nil && strings.HasPrefix(*o.BaseEndpoint, "http://") {
			var next timeout.Doer = o.HTTPClient
			if next == nil {
				next = &http.Client{}
			}
			o.HTTPClient = s3compat.PlainHTTPClient(next)
		}
		o.Retryer = aws.NopRetryer{}
		o.RetryMaxAttempts = 0
		o.DisableLogOutputChecksumValidationSkipped = true
	})
	if client.Options().Region == "" {
		// AWS itself needs the bucket's region; every request would fail
		// resolving its endpoint.
		return nil, s3compat.Unconfigured("no AWS region was found (set region= in the store URL, or AWS_REGION, or the profile's region; for an S3-compatible server, give its endpoint=)")
	}
	// The endpoint as the client resolved it: the URL's, the
	// environment's or the shared config's; none for AWS itself, where a
	// bucket's name is global.
	where := ""
	if e := client.Options().BaseEndpoint; e != nil {
		where = "?endpoint=" + *e
	}
	return &Store{client: client, bucket: bucket, prefix: p, attempts: opts.Attempts,
		location: "s3://" + bucket + "/" + p + where, own: own}, nil
}

// ownClient returns the *http.Client b would build, with every setting
// it holds: its transport's (the CA bundle of AWS_CA_BUNDLE and the rest
// of its TLS configuration, the proxy from the environment, the dial,
// TLS handshake and keep-alive settings), its read timeout, its overall
// timeout and the SDK's redirect policy. b itself builds a private copy
// of its transport that nothing outside the SDK can reach, so the idle
// connections it keeps could not be closed before their idle timeout.
func ownClient(b *awshttp.BuildableClient) *http.Client {
	tr := b.GetTransport() // a copy, with the settings above
	if d, ok := b.GetReadTimeout(); ok && d > 0 {
		dial := tr.DialContext
		if dial == nil {
			dial = b.GetDialer().DialContext
		}
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &readTimeoutConn{Conn: c, timeout: d}, nil
		}
	}
	c := &http.Client{Transport: tr, Timeout: b.GetTimeout(), CheckRedirect: noRedirect}
	if frozen, ok := b.Freeze().(*http.Client); ok && frozen.CheckRedirect != nil {
		// The SDK's policy: only 307 and 308, which keep the method.
		c.CheckRedirect = frozen.CheckRedirect
	}
	return c
}

// noRedirect follows no redirect: the response is returned as it is.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// readTimeoutConn fails a read that receives nothing for timeout, as the
// SDK's client does when given a read timeout.
type readTimeoutConn struct {
	net.Conn
	timeout time.Duration
}

func (c *readTimeoutConn) Read(p []byte) (int, error) {
	if err := c.Conn.SetReadDeadline(time.Now().Add(c.timeout)); err != nil {
		return 0, err
	}
	n, err := c.Conn.Read(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return n, &awshttp.ResponseTimeoutError{TimeoutDur: c.timeout}
	}
	return n, err
}

// Close closes the idle keep-alive connections of the client Open made
// (not those of one given in Options.HTTPClient). A workspace closes
// the store it opened when it is closed (cairn.Workspace.Close); a
// request made afterwards opens a new connection.
func (s *Store) Close() error {
	if s.own != nil {
		s.own.CloseIdleConnections()
	}
	return nil
}

// credentials marks the failure of the credential chain as such
// (s3compat.NoCredentials), for the words of the request it stops.
type credentials struct{ next aws.CredentialsProvider }

func (c credentials) Retrieve(ctx context.Context) (aws.Credentials, error) {
	v, err := c.next.Retrieve(ctx)
	if err != nil && ctx.Err() == nil {
		err = s3compat.NoCredentials(err)
	}
	return v, err
}

// Location implements cas.Locator: the bucket and prefix on the
// endpoint the client resolved, wherever its setting came from.
func (s *Store) Location() string { return s.location }

// Attempts returns how many attempts the retry wrapper should give one
// call (0: its default).
func (s *Store) Attempts() int { return s.attempts }

// envEndpoint returns the endpoint the SDK would take from the
// environment, so that Open can default the region when it is set.
func envEndpoint() string {
	if v := os.Getenv("AWS_ENDPOINT_URL_S3"); v != "" {
		return v
	}
	return os.Getenv("AWS_ENDPOINT_URL")
}

// ParseURL parses s3://BUCKET/PREFIX?endpoint=URL&region=R&path_style=BOOL.
// path_style defaults to true when an endpoint is given (in the URL or in
// AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL), false otherwise.
func ParseURL(u *url.URL) (bucket, prefix string, opts Options, err error) {
	if u.Scheme != "s3" {
		return "", "", Options{}, fmt.Errorf("parse s3 url %q: scheme must be s3", s3compat.ShowURL(u))
	}
	if u.Host == "" {
		return "", "", Options{}, fmt.Errorf("parse s3 url %q: no bucket", s3compat.ShowURL(u))
	}
	if u.User != nil {
		return "", "", Options{}, fmt.Errorf("parse s3 url %q: credentials do not belong in the url; use the AWS environment or profile", s3compat.ShowURL(u))
	}
	bucket, prefix = u.Host, strings.Trim(u.Path, "/")
	if _, err := s3compat.CleanPrefix(prefix); err != nil {
		return "", "", Options{}, fmt.Errorf("parse s3 url %q: %w", s3compat.ShowURL(u), err)
	}
	tc, err := timeout.FromEnv()
	if err != nil {
		return "", "", Options{}, err // the environment's, not the URL's
	}
	params, err := s3compat.URLParams(u)
	if err != nil {
		return "", "", Options{}, fmt.Errorf("parse s3 url %q: %w", s3compat.ShowURL(u), err)
	}
	var pathStyle *bool // given in the URL
	for k, v := range params {
		if ok, err := tc.Set(k, v); ok {
			if err != nil {
				return "", "", Options{}, fmt.Errorf("parse s3 url %q: %w", s3compat.ShowURL(u), err)
			}
			continue
		}
		switch k {
		case "endpoint":
			e, err := url.Parse(v)
			if err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" {
				return "", "", Options{}, fmt.Errorf("parse s3 url %q: endpoint %q must be an http or https url", s3compat.ShowURL(u), v)
			}
			if err := s3compat.CheckPort(e.Host); err != nil {
				return "", "", Options{}, fmt.Errorf("parse s3 url %q: endpoint %q: %w", s3compat.ShowURL(u), v, err)
			}
			opts.Endpoint = v
		case "region":
			opts.Region = v
		case "path_style":
			b, err := s3compat.URLBool(k, v)
			if err != nil {
				return "", "", Options{}, fmt.Errorf("parse s3 url %q: %w", s3compat.ShowURL(u), err)
			}
			pathStyle = &b
		default:
			return "", "", Options{}, fmt.Errorf("parse s3 url %q: unknown parameter %q", s3compat.ShowURL(u), k)
		}
	}
	if pathStyle != nil {
		opts.PathStyle = *pathStyle
	} else {
		opts.PathStyle = opts.Endpoint != "" || envEndpoint() != ""
	}
	opts.Timeout, opts.Attempts = tc.Timeout, tc.Attempts
	return bucket, prefix, opts, nil
}

// OpenURL opens the store an s3:// URL names (see ParseURL).
func OpenURL(ctx context.Context, u *url.URL) (*Store, error) {
	bucket, prefix, opts, err := ParseURL(u)
	if err != nil {
		return nil, err
	}
	return Open(ctx, bucket, prefix, opts)
}

// Bucket returns the store's bucket.
func (s *Store) Bucket() string { return s.bucket }

// Prefix returns the store's prefix: empty, or ending in '/'.
func (s *Store) Prefix() string { return s.prefix }

// Put implements cas.Store with one PutObject request.
func (s *Store) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) error {
	if err := cas.ValidateKey(key); err != nil {
		return err
	}
	in := &s3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(s.prefix + key),
		Body:          bytes.NewReader(data),
		ContentLength: aws.Int64(int64(len(data))),
	}
	if opts.IfAbsent {
		in.IfNoneMatch = aws.String("*")
	}
	out, err := s.client.PutObject(ctx, in)
	if err != nil {
		if opts.IfAbsent && reply(err).Exists() {
			return s3compat.LostCreate(key, err, func(k string) error {
				_, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.prefix + k)})
				return err
			}, reply)
		}
		return mapErr("put", key, err)
	}
	return s3compat.Stored(key, aws.ToString(out.ETag))
}

// Get implements cas.Store with one GetObject request (a ranged one when
// off > 0 or n >= 0). Reading at or past the end returns no bytes.
func (s *Store) Get(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if err := cas.ValidateKey(key); err != nil {
		return nil, err
	}
	if off < 0 {
		off = 0
	}
	if n == 0 {
		// A zero-length range is not expressible; check existence only.
		if _, err := s.Stat(ctx, key); err != nil {
			return nil, err
		}
		return []byte{}, nil
	}
	in := &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.prefix + key)}
	switch {
	case n > 0:
		in.Range = aws.String(fmt.Sprintf("bytes=%d-%d", off, off+n-1))
	case off > 0:
		in.Range = aws.String(fmt.Sprintf("bytes=%d-", off))
	}
	out, err := s.client.GetObject(ctx, in)
	if err != nil {
		if reply(err).PastEnd() {
			return []byte{}, nil // the object exists and off is at or past its end
		}
		return nil, mapErr("get", key, err)
	}
	defer out.Body.Close()
	want := aws.ToInt64(out.ContentLength)
	if n > 0 && want > n {
		// An S3 server answers a range with that range (206); an HTTP
		// server that is none answers every GET with its page.
		return nil, s3compat.NotS3("get", key, fmt.Sprintf("%d bytes to a GET of %d", want, n))
	}
	var buf bytes.Buffer
	if want > 0 {
		buf.Grow(int(min(want, 64<<20)))
	}
	if _, err := buf.ReadFrom(out.Body); err != nil {
		return nil, s3compat.BodyError(key, err)
	}
	if out.ContentLength != nil && int64(buf.Len()) != want {
		return nil, cas.Transient(fmt.Errorf("get %s: read %d bytes, response said %d", key, buf.Len(), want))
	}
	return buf.Bytes(), nil
}

// Stat implements cas.Store with one HeadObject request.
func (s *Store) Stat(ctx context.Context, key string) (cas.Info, error) {
	if err := cas.ValidateKey(key); err != nil {
		return cas.Info{}, err
	}
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.prefix + key)})
	if err != nil {
		return cas.Info{}, mapErr("stat", key, err)
	}
	return cas.Info{Key: key, Size: aws.ToInt64(out.ContentLength), ModTime: aws.ToTime(out.LastModified)}, nil
}

// List implements cas.Store with ListObjectsV2, one request per 1,000
// keys. Keys are relative to the store's prefix; a folder marker at a
// key (a "dir/" placeholder made by a console) is listed as
// s3compat.Listed says, and other objects whose names are not valid keys
// are skipped.
func (s *Store) List(ctx context.Context, prefix, startAfter string, fn func(cas.Info) error) error {
	if err := cas.ValidatePrefix(prefix); err != nil {
		return err
	}
	in := &s3.ListObjectsV2Input{Bucket: aws.String(s.bucket), Prefix: aws.String(s.prefix + prefix)}
	if s.pageSize > 0 {
		in.MaxKeys = aws.Int32(s.pageSize)
	}
	if startAfter != "" {
		in.StartAfter = aws.String(s.prefix + startAfter)
	}
	l := s3compat.Lister{Prefix: prefix, StartAfter: startAfter}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		out, err := s.client.ListObjectsV2(ctx, in)
		var de *smithy.DeserializationError
		if _, unavailable := s3compat.Unavailable(err); errors.As(err, &de) && !unavailable && !s3compat.CutOff(err) {
			// A 200 whose body is no XML (a web page the SDK cannot
			// parse) is no listing; one cut off is retried as before.
			return s3compat.NotS3("list", prefix, "a listing that is no S3 listing")
		}
		if err != nil {
			return mapErr("list", prefix, err)
		}
		if aws.ToString(in.Prefix) != "" && out.Prefix == nil {
			// Every S3 server's listing repeats the prefix it was asked
			// for; an answer without one (an empty or an HTML body,
			// which the SDK reads as an empty listing) is no listing.
			return s3compat.NotS3("list", prefix, "a listing without the prefix it was asked for")
		}
		if err := l.Page(len(out.Contents), aws.ToBool(out.IsTruncated)); err != nil {
			return err
		}
		for _, o := range out.Contents {
			if err := l.Next(aws.ToString(in.Prefix), aws.ToString(o.Key)); err != nil {
				return err
			}
			info, ok := s3compat.Listed(strings.TrimPrefix(aws.ToString(o.Key), s.prefix), aws.ToInt64(o.Size), aws.ToTime(o.LastModified))
			if !ok || !l.Want(info) {
				continue
			}
			if err := fn(info); err != nil {
				return err
			}
		}
		if !aws.ToBool(out.IsTruncated) {
			return nil
		}
		if aws.ToString(out.NextContinuationToken) == "" {
			return fmt.Errorf("list %s: truncated listing without a continuation token", prefix)
		}
		if in.ContinuationToken != nil && aws.ToString(out.NextContinuationToken) == aws.ToString(in.ContinuationToken) {
			// The same page again: the listing would go round for ever.
			return s3compat.NotS3("list", prefix, "a listing whose next page is the page it gave")
		}
		in.ContinuationToken = out.NextContinuationToken
	}
}

// Delete implements cas.Store with one DeleteObject request.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := cas.ValidateKey(key); err != nil {
		return err
	}
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.prefix + key)})
	if err != nil {
		if reply(err).NotFound() {
			return nil
		}
		return mapErr("delete", key, err)
	}
	return nil
}

// reply returns the S3 error code and HTTP status of err, if it has them.
func reply(err error) s3compat.Reply {
	var r s3compat.Reply
	var ae smithy.APIError
	if errors.As(err, &ae) {
		r.Code = ae.ErrorCode()
	}
	var he interface{ HTTPStatusCode() int }
	if errors.As(err, &he) {
		r.Status = he.HTTPStatusCode()
	}
	return r
}

// mapErr translates an SDK error (see s3compat.MapError).
func mapErr(verb, key string, err error) error {
	return s3compat.MapError(verb, key, err, reply(err))
}
