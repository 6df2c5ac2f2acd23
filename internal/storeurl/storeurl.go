// Package storeurl reads a store URL's scheme and, for a local store,
// its directory: the one reading of the forms the README gives (a plain
// path, file://PATH, SCHEME://REST), shared by the Go API and the CLI.
package storeurl

import "strings"

// Split returns the scheme of a store URL and the rest: "file" and the
// path itself for a plain path; a file:// URL's rest is its path, as
// given (relative, or absolute), never URL-escaped. The host "localhost"
// names this machine, as RFC 8089 says: file://localhost/abs is /abs
// (any other text before the first slash is part of a relative path,
// cairn's rule for file://PATH).
func Split(url string) (scheme, rest string) {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return "file", url
	}
	if scheme == "file" {
		if abs, ok := strings.CutPrefix(rest, "localhost/"); ok {
			rest = "/" + abs
		}
	}
	return scheme, rest
}

// Local returns the directory of a local store's URL (a plain path or a
// file:// URL; "" for file:// naming none); local is false for any other
// scheme.
func Local(url string) (dir string, local bool) {
	scheme, rest := Split(url)
	if scheme != "file" {
		return "", false
	}
	return rest, true
}
