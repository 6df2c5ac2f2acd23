// Package minio is the cas.Store on MinIO and other S3-compatible
// servers, built on minio-go/v7. It is the lighter alternative to package
// s3 (no AWS SDK, no credential chain beyond environment variables).
//
// Every key of a store lives under one prefix of one bucket: key k is the
// object PREFIX/k. The prefix confines a workspace.
//
// Conditional create is PutObject with If-None-Match: * (minio-go's
// PutObjectOptions.SetMatchETagExcept("*")); a 412 PreconditionFailed or
// 409 ConditionalRequestConflict reply is cas.ErrExists.
//
// minio-go's own retries are off (Options.MaxRetries = 1): one call is
// one HTTP request, retried only by the cas/retry wrapper. One quirk
// remains (minio-go v7.4.1): after a failed request that minio-go deems
// retryable (a network error, 5xx, SlowDown) it still sleeps its first
// backoff step, up to minio.DefaultRetryUnit (200ms, jittered), before
// returning the error, even with MaxRetries = 1. No second request is
// sent; the failure is just reported later. We do not change that
// package-level variable, which belongs to every minio-go client in the
// process. The region is
// always set, so minio-go never spends a request on GetBucketLocation.
// Puts are single signed PUT requests: over plain HTTP the payload's
// SHA-256 is signed up front instead of minio-go's default aws-chunked
// streaming signature; over HTTPS the payload is unsigned, as TLS
// protects it. No optional checksum trailers are sent.
package minio

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/s3compat"
	"github.com/cairnlog/cairn/cas/timeout"
)

var _ cas.Store = (*Store)(nil)

// DefaultRegion is the region used when none is given.
const DefaultRegion = "us-east-1"

// Options configure a Store.
type Options struct {
	// Endpoint is the server's HOST:PORT.
	Endpoint string
	// Secure uses HTTPS.
	Secure bool
	// Region; empty: DefaultRegion.
	Region string
	// AccessKey, SecretKey and SessionToken; when AccessKey is empty they
	// come from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
	// AWS_SESSION_TOKEN, else MINIO_ROOT_USER and MINIO_ROOT_PASSWORD.
	AccessKey, SecretKey, SessionToken string
	// Transport; nil: minio-go's default.
	Transport http.RoundTripper
	// Timeout aborts a request that makes no progress for this long, as
	// a transient failure (0: never). Attempts is how many attempts the
	// retry wrapper gives one call (0: its default); see Store.Attempts.
	Timeout  time.Duration
	Attempts int
}

// Store is a cas.Store in one prefix of a bucket.
type Store struct {
	core   minio.Core
	bucket string
	prefix string // "" or ends in "/"
	secure bool
	// attempts is Options.Attempts, for the retry wrapper.
	attempts int

	pageSize int // keys per ListObjectsV2 request; 0: the server's default (1,000)
	// own is the transport Open made, if it made one (see Close).
	own *http.Transport
}

// Open returns a store for the objects under prefix in bucket. It makes
// no request.
func Open(ctx context.Context, bucket, prefix string, opts Options) (*Store, error) {
	if bucket == "" {
		return nil, errors.New("open minio store: no bucket")
	}
	if err := checkBucket(bucket); err != nil {
		return nil, fmt.Errorf("open minio store: %w", err)
	}
	if opts.Endpoint == "" {
		return nil, errors.New("open minio store: no endpoint")
	}
	p, err := s3compat.CleanPrefix(prefix)
	if err != nil {
		return nil, fmt.Errorf("open minio store: %w", err)
	}
	if opts.AccessKey == "" {
		opts.AccessKey, opts.SecretKey, opts.SessionToken = envCredentials()
	}
	switch {
	case opts.AccessKey == "":
		return nil, s3compat.Unconfigured("no credentials were found (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or MINIO_ROOT_USER and MINIO_ROOT_PASSWORD; see docs/s3.md)")
	case opts.SecretKey == "":
		return nil, s3compat.Unconfigured("no secret key was found for the access key (set AWS_SECRET_ACCESS_KEY beside AWS_ACCESS_KEY_ID, or MINIO_ROOT_PASSWORD beside MINIO_ROOT_USER)")
	}
	if opts.Region == "" {
		opts.Region = DefaultRegion
	}
	tr := opts.Transport
	// own is the transport made here (minio-go's default, as minio.New
	// would make), whose idle connections Close closes; one given in
	// Options.Transport is its caller's.
	var own *http.Transport
	if tr == nil {
		if own, err = minio.DefaultTransport(opts.Secure); err != nil {
			return nil, fmt.Errorf("open minio store: %w", err)
		}
		tr = own
	}
	if opts.Timeout > 0 {
		tr = timeout.Transport(tr, opts.Timeout)
	}
	if !opts.Secure {
		tr = s3compat.PlainHTTPTransport(tr)
	}
	tr = listingCheck{next: tr}
	client, err := minio.New(opts.Endpoint, &minio.Options{
		Creds:        credentials.NewStaticV4(opts.AccessKey, opts.SecretKey, opts.SessionToken),
		Secure:       opts.Secure,
		Region:       opts.Region,
		BucketLookup: minio.BucketLookupPath,
		Transport:    tr,
		MaxRetries:   1,
	})
	if err != nil {
		return nil, fmt.Errorf("open minio store: %w", err)
	}
	return &Store{core: minio.Core{Client: client}, bucket: bucket, prefix: p, secure: opts.Secure, attempts: opts.Attempts, own: own}, nil
}

// Close closes the idle connections of the store's own transport (not
// those of one given in Options.Transport). A workspace closes the store
// it opened when it is closed (cairn.Workspace.Close); a request made
// afterwards opens a new connection.
func (s *Store) Close() error {
	if s.own != nil {
		s.own.CloseIdleConnections()
	}
	return nil
}

// Attempts returns how many attempts the retry wrapper should give one
// call (0: its default).
func (s *Store) Attempts() int { return s.attempts }

// checkBucket refuses a bucket name that minio-go refuses before any
// request (s3utils.CheckValidBucketName), in words: its own are
// capitalised and, from a listing, came beside a store key.
func checkBucket(bucket string) error {
	if s3utils.CheckValidBucketName(bucket) != nil {
		return fmt.Errorf("bucket %q is not a valid bucket name (3 to 63 letters, digits, '.', '-' or '_', starting and ending with a letter or digit, no '..', and not an IP address)", bucket)
	}
	return nil
}

func envCredentials() (access, secret, token string) {
	if a := os.Getenv("AWS_ACCESS_KEY_ID"); a != "" {
		return a, os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN")
	}
	return os.Getenv("MINIO_ROOT_USER"), os.Getenv("MINIO_ROOT_PASSWORD"), ""
}

// ParseURL parses
// minio://HOST:PORT/BUCKET/PREFIX?secure=BOOL&region=R&timeout=D&attempts=N.
// secure defaults to true; timeout and attempts default to
// $CAIRN_S3_TIMEOUT and $CAIRN_S3_ATTEMPTS, else package timeout's
// defaults. Credentials never come from the URL.
func ParseURL(u *url.URL) (bucket, prefix string, opts Options, err error) {
	fail := func(format string, args ...any) (string, string, Options, error) {
		return "", "", Options{}, fmt.Errorf("parse minio url %q: %s", s3compat.ShowURL(u), fmt.Sprintf(format, args...))
	}
	if u.Scheme != "minio" {
		return fail("scheme must be minio")
	}
	if u.Host == "" {
		return fail("no HOST:PORT")
	}
	if u.User != nil {
		return fail("credentials do not belong in the url; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	}
	if err := s3compat.CheckPort(u.Host); err != nil {
		return fail("%v", err)
	}
	params, err := s3compat.URLParams(u)
	if err != nil {
		return fail("%v", err)
	}
	path := strings.TrimPrefix(u.Path, "/")
	bucket, prefix, _ = strings.Cut(path, "/")
	if bucket == "" {
		return fail("no bucket")
	}
	if err := checkBucket(bucket); err != nil {
		return fail("%v", err)
	}
	prefix = strings.Trim(prefix, "/")
	if _, err := s3compat.CleanPrefix(prefix); err != nil {
		return fail("%v", err)
	}
	tc, err := timeout.FromEnv()
	if err != nil {
		return "", "", Options{}, err // the environment's, not the URL's
	}
	opts = Options{Endpoint: u.Host, Secure: true}
	for k, v := range params {
		if ok, err := tc.Set(k, v); ok {
			if err != nil {
				return fail("%v", err)
			}
			continue
		}
		switch k {
		case "secure":
			b, err := s3compat.URLBool(k, v)
			if err != nil {
				return fail("%v", err)
			}
			opts.Secure = b
		case "region":
			opts.Region = v
		default:
			return fail("unknown parameter %q", k)
		}
	}
	opts.Timeout, opts.Attempts = tc.Timeout, tc.Attempts
	return bucket, prefix, opts, nil
}

// OpenURL opens the store a minio:// URL names (see ParseURL).
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
	po := minio.PutObjectOptions{DisableMultipart: true, DisableContentSha256: true}
	if opts.IfAbsent {
		po.SetMatchETagExcept("*")
	}
	sha := ""
	if !s.secure {
		sum := sha256.Sum256(data)
		sha = hex.EncodeToString(sum[:])
	}
	info, err := s.core.PutObject(ctx, s.bucket, s.prefix+key, bytes.NewReader(data), int64(len(data)), "", sha, po)
	if err != nil {
		if opts.IfAbsent && reply(err).Exists() {
			return s3compat.LostCreate(key, err, func(k string) error {
				_, err := s.core.StatObject(ctx, s.bucket, s.prefix+k, minio.StatObjectOptions{})
				return err
			}, reply)
		}
		return mapErr("put", key, err)
	}
	return s3compat.Stored(key, info.ETag)
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
	var gopts minio.GetObjectOptions
	switch {
	case n > 0:
		gopts.SetRange(off, off+n-1)
	case off > 0:
		gopts.SetRange(off, 0)
	}
	body, info, _, err := s.core.GetObject(ctx, s.bucket, s.prefix+key, gopts)
	if err != nil {
		if reply(err).PastEnd() {
			return []byte{}, nil // the object exists and off is at or past its end
		}
		return nil, mapErr("get", key, err)
	}
	defer body.Close()
	if n > 0 && info.Size > n {
		return nil, fmt.Errorf("get %s: asked for %d bytes, response has %d", key, n, info.Size)
	}
	var buf bytes.Buffer
	if info.Size > 0 {
		buf.Grow(int(min(info.Size, 64<<20)))
	}
	if _, err := buf.ReadFrom(body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, s3compat.BodyError(key, err)
	}
	if info.Size >= 0 && int64(buf.Len()) != info.Size {
		return nil, cas.Transient(fmt.Errorf("get %s: read %d bytes, response said %d", key, buf.Len(), info.Size))
	}
	return buf.Bytes(), nil
}

// Stat implements cas.Store with one HeadObject request.
func (s *Store) Stat(ctx context.Context, key string) (cas.Info, error) {
	if err := cas.ValidateKey(key); err != nil {
		return cas.Info{}, err
	}
	oi, err := s.core.StatObject(ctx, s.bucket, s.prefix+key, minio.StatObjectOptions{})
	if err != nil {
		return cas.Info{}, mapErr("stat", key, err)
	}
	return cas.Info{Key: key, Size: oi.Size, ModTime: oi.LastModified}, nil
}

// List implements cas.Store with ListObjectsV2, one request per 1,000
// keys. Keys are relative to the store's prefix; a folder marker at a
// key is listed as s3compat.Listed says, and other objects whose names
// are not valid keys are skipped.
func (s *Store) List(ctx context.Context, prefix, startAfter string, fn func(cas.Info) error) error {
	if err := cas.ValidatePrefix(prefix); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	noOwner := false
	lo := minio.ListObjectsOptions{Prefix: s.prefix + prefix, Recursive: true, FetchOwner: &noOwner, MaxKeys: s.pageSize}
	if startAfter != "" {
		lo.StartAfter = s.prefix + startAfter
	}
	l := &s3compat.Lister{Prefix: prefix, StartAfter: startAfter}
	for o := range s.core.ListObjectsIter(withLister(ctx, l), s.bucket, lo) {
		if o.Err != nil {
			var nl *notListing
			switch {
			case errors.As(o.Err, &nl) && nl.err != nil:
				// A run of empty pages without end (listingCheck).
				return nl.err
			case errors.As(o.Err, &nl):
				// An answer no S3 server sends (listingCheck): a web
				// page's "listing" is no empty store.
				return s3compat.NotS3("list", prefix, nl.what)
			}
			return mapErr("list", prefix, o.Err)
		}
		if err := l.Next(lo.Prefix, o.Key); err != nil {
			return err
		}
		info, ok := s3compat.Listed(strings.TrimPrefix(o.Key, s.prefix), o.Size, o.LastModified)
		if !ok || !l.Want(info) {
			continue
		}
		if err := fn(info); err != nil {
			return err
		}
	}
	// The iterator ends quietly when ctx is done.
	return ctx.Err()
}

// Delete implements cas.Store with one DeleteObject request.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := cas.ValidateKey(key); err != nil {
		return err
	}
	if err := s.core.RemoveObject(ctx, s.bucket, s.prefix+key, minio.RemoveObjectOptions{}); err != nil {
		if reply(err).NotFound() {
			return nil
		}
		return mapErr("delete", key, err)
	}
	return nil
}

// reply returns the S3 error code and HTTP status of a minio-go error.
func reply(err error) s3compat.Reply {
	r := minio.ToErrorResponse(err)
	return s3compat.Reply{Code: r.Code, Status: r.StatusCode}
}

// mapErr translates a minio-go error (see s3compat.MapError).
func mapErr(verb, key string, err error) error {
	if r := minio.ToErrorResponse(err); r.Code == "InternalError" && r.StatusCode == 0 {
		// Not a reply's code but minio-go's reading of an answer
		// without the headers every S3 server sends with an object (a
		// Last-Modified or Content-Length it cannot parse): a web page,
		// say. Retrying it would get the same page.
		return s3compat.NotS3(verb, key, "an answer without an object's headers")
	}
	return s3compat.MapError(verb, key, err, reply(err))
}
