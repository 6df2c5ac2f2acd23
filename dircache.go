package cairn

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/internal/dircache"
	"github.com/cairnlog/cairn/manifest"
	"github.com/cairnlog/cairn/manifest/tree"
)

// cachedDirState is a directory state with a stat cache: see DirWithCache.
type cachedDirState struct{ path, cacheDir string }

// DirWithCache returns the directory state at path, like Dir, with a stat
// cache kept under cacheDir: one file per store, session and directory,
// mapping each file's stat data (size, mtime, ctime, inode, mode) to its
// stored content. A commit then reads only the files whose stat data
// changed, as `git commit -a` does with git's index. Files modified in
// the same timestamp tick as a commit started are read again by the next
// one (git's racy-timestamp rule).
//
// The cache never decides what is stored: a recorded ref is used only if
// the session's parent step already holds it, and an unreadable, foreign
// or damaged cache file is ignored and rewritten, so a bad cache costs
// time, never content. Writing the cache is best effort; a commit does
// not fail because its cache could not be saved.
//
// The path is taken as Dir takes it, and the cache is kept per directory
// the path resolves to: one cache for a directory however it is spelled
// (real, link/.., an absolute path or a link to it).
func DirWithCache(path, cacheDir string) State { return cachedDirState{path, cacheDir} }

// DefaultCacheDir returns where the CLI keeps local caches (the stat
// caches of DirWithCache and the head cache of UseHeadCache):
// $CAIRN_CACHE_DIR if set, else $XDG_CACHE_HOME/cairn, or ~/.cache/cairn.
// CAIRN_CACHE_DIR=off (in any case: OFF, Off) turns the caches off: it
// returns "". A relative $CAIRN_CACHE_DIR is taken from the working
// directory, and returned absolute, so that a process that changes its
// directory keeps its caches. A relative $XDG_CACHE_HOME is ignored, as
// the XDG base directory specification says.
func DefaultCacheDir() string {
	if d := os.Getenv("CAIRN_CACHE_DIR"); strings.EqualFold(d, "off") {
		return ""
	} else if d != "" {
		if abs, err := filepath.Abs(d); err == nil {
			return abs
		}
		return d
	}
	if d := os.Getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "cairn")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".cache", "cairn")
	}
	return filepath.Join(os.TempDir(), "cairn-cache")
}

// build builds the state without a cache: Session.Commit builds a
// cachedDirState through buildCached, which needs the session.
func (d cachedDirState) build(sink tree.Sink, known func(cas.ID) bool) (manifest.StateKind, tree.Ref, error) {
	return dirState(d.path).build(sink, known)
}

// dirBuild is a cached directory build made ready before the session's
// head is loaded: its stat cache open (and stamped: the racy-timestamp
// rule needs the stamp before any lstat) and the scan of the tree begun,
// so that the scan overlaps the load.
type dirBuild struct {
	d     cachedDirState
	path  string // d.path resolved (resolveDir): read, and the cache's key
	err   error  // the path could not be resolved: build returns it
	cache *dircache.Cache
	scan  *tree.Scan
	taken bool // build ran: it owns the cache and stopped the scan
}

// prepare opens the stat cache of the state for the store, as
// Workspace.cacheURL names it, and session, and starts scanning the tree.
// Call build, or release.
func (d cachedDirState) prepare(storeURL, session string) *dirBuild {
	path, err := resolveDir(d.path)
	if err != nil {
		return &dirBuild{d: d, err: err}
	}
	key := storeURL + "\x00" + session + "\x00" + path
	c := dircache.Open(filepath.Join(d.cacheDir, "dirs", dircache.FileName(key)), key)
	return &dirBuild{d: d, path: path, cache: c, scan: tree.StartScan(path, 0)}
}

// release stops the scan and drops the cache's records if build never
// ran (the commit failed before it).
func (b *dirBuild) release() {
	if !b.taken && b.err == nil {
		b.scan.Stop()
		b.cache.Discard()
	}
}

// build builds the state through the stat cache; known says which blobs
// the parent's layout holds. The returned done saves the cache if the
// commit was acknowledged and drops this build's records otherwise.
func (b *dirBuild) build(sink tree.Sink, known func(cas.ID) bool) (manifest.StateKind, tree.Ref, func(ok bool), error) {
	b.taken = true
	if b.err != nil {
		return 0, tree.Ref{}, nil, b.err
	}
	c := b.cache
	ref, err := tree.BuildDirWith(b.path, sink, tree.DirOptions{Cache: c, Known: known, Scan: b.scan})
	if err != nil {
		c.Discard()
		return 0, tree.Ref{}, nil, err
	}
	done := func(ok bool) {
		if ok {
			_ = c.Save() // best effort: a missing cache costs the next commit reads
		} else {
			c.Discard()
		}
	}
	return manifest.StateDir, ref, done, nil
}
