// Package version says which build of cairn is running, for `cairn
// version`, MCP's server info and the created_by of exported files.
//
// The version comes from, in order: a link-time override
//
//	go build -ldflags "-X github.com/cairnlog/cairn/internal/version.override=v1.2.3" ./cmd/cairn
//
// the module version that `go install github.com/cairnlog/cairn/cmd/cairn@v1.2.3`
// records, or the version the go command derives from the checkout it
// builds in (a tag, else a pseudo-version with the commit and +dirty).
// A build without any of these (go test, go run outside a checkout)
// reports "devel".
package version

import (
	"runtime/debug"
	"strings"
)

// override is set with -ldflags -X; it wins over the build info.
var override string

// String returns the version of this build, never empty.
func String() string {
	if override != "" {
		return override
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			return v
		}
	}
	if rev := Revision(); rev != "" {
		return "devel-" + rev
	}
	return "devel"
}

// Revision returns the commit the build was made from (12 hex digits,
// with +dirty for a modified checkout), or "" if the build does not say.
func Revision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	rev := setting(bi, "vcs.revision")
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" && setting(bi, "vcs.modified") == "true" {
		rev += "+dirty"
	}
	return rev
}

// Go returns the Go version the binary was built with.
func Go() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.GoVersion
	}
	return ""
}

func setting(bi *debug.BuildInfo, key string) string {
	for _, s := range bi.Settings {
		if s.Key == key {
			return strings.TrimSpace(s.Value)
		}
	}
	return ""
}
