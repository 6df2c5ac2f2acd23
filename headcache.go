package cairn

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/cairnlog/cairn/internal/headcache"
	"github.com/cairnlog/cairn/internal/objectcache"
	"github.com/cairnlog/cairn/manifest"
)

// UseHeadCache makes the workspace keep, under dir, each session's head
// as this process last committed it, and start a session's next commit
// from there: a commit in a fresh process (the CLI) then writes its step
// with one PUT and one small GET (of the cached head's manifest, to check
// that the store still holds that step in its slot) instead of finding
// the head and reading every object of its layout. An empty dir turns it
// off. Stores that live only in this process (mem://, OpenStore) are
// never cached.
//
// The cache is a hint. A stale one costs a retry, never a wrong parent:
// if the step slot above the cached head is taken (another writer moved
// on, or gc fenced a removed session), the commit reads the head from the
// store and tries once more, or, with CommitOptions.Expect, fails as it
// would have without the cache. A session whose slot of the cached head
// no longer holds that step (a store restored from an older copy, or
// wiped and rebuilt at the same URL, a session removed, collected and
// created again, another store behind the same URL) is read from the
// store. A corrupt,
// foreign or oversized cache file is ignored. Call it right after Open
// (beside commits it is safe, and holds for those that begin after it;
// after Close it does nothing).
//
// Beside the heads, under dir/objects, the workspace keeps a copy of each
// step object and pack its commits write (each at most 1 MiB, 128 MiB in
// all, the oldest pruned first), so that the commit every DefaultFanout
// steps or so that merges them into a pack reads them there instead of
// from the store. A copy is used only if it holds exactly the blobs the
// writer's index places in that object, each decoding to its id (see
// manifest.LocalObjects): a damaged or foreign one costs one GET.
func (w *Workspace) UseHeadCache(dir string) {
	if w.isClosed() {
		return
	}
	if dir == "" || w.url == "" || strings.HasPrefix(w.url, "mem://") {
		w.heads.Store(nil)
		w.repo.UseLocalObjects(nil)
		return
	}
	heads := filepath.Join(dir, "heads")
	w.heads.Store(&heads)
	w.repo.UseLocalObjects(objectcache.New(filepath.Join(dir, "objects"), w.cacheURL()))
}

// cacheURL names the workspace's store in the keys of every local cache
// (head, object and stat caches): its URL; for a local directory (a path
// or a file:// URL, which may be relative) the directory's absolute path,
// and for a store whose URL leaves its server to the environment (s3://)
// its location (cas.Locator), so that one name never stands for two
// stores; "" for a store opened with OpenStore.
func (w *Workspace) cacheURL() string {
	if w.url != "" && w.location != "" {
		return w.location
	}
	return w.URL()
}

// errStaleHead reports that a commit started from a cached head lost its
// slot: Commit retries from the store's head.
var errStaleHead = errors.New("cached head is stale")

// headCacheFile returns the cache file of session and its key, "" if the
// workspace keeps no head cache.
func (s *Session) headCacheFile() (path, key string) {
	heads := s.ws.heads.Load()
	if heads == nil || *heads == "" {
		return "", ""
	}
	key = "cairn head\x00" + s.ws.cacheURL() + "\x00" + s.name
	return filepath.Join(*heads, headcache.FileName(key)), key
}

// loadCached sets the session's head and index from its cache file, if
// there is a usable one and this Session has not loaded a head before.
// The store must still hold the cached step in its slot (one ranged GET);
// anything else leaves the session unloaded.
func (s *Session) loadCached(ctx context.Context) bool {
	path, key := s.headCacheFile()
	if path == "" || s.noCache {
		return false
	}
	// Only a session's first load may come from the cache: after it,
	// this process knows at least as much as the cache (a lost slot or
	// an unsure put forgets the head, and the store must answer).
	s.noCache = true
	// The file's time is when this machine's last commit saved it: a
	// head saved longer ago than manifest.HeadTrust is checked against
	// the store's before the commit (Session.reconfirm). A commit paused
	// between its step's acknowledgement and the save saved it later
	// than the store confirmed the head: the head counts from its step's
	// time (set just before its put, by the clock of the machine that
	// committed it) when that is older.
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	h, _ := headcache.Load(path, key)
	if h == nil || h.Stamp == "" {
		return false
	}
	st, ix, err := s.ws.repo.RestoreHead(s.name, h.Manifest, h.ID, h.Objects)
	if err != nil || st.Number != h.Number {
		return false
	}
	// The store must still hold the cached head in its slot: a marker
	// that kept its size and time (a store restored from a copy that
	// kept its files' times, a store rebuilt within a second at the
	// same URL, or another store that URL names) says nothing of the
	// steps under it, and a commit above a head the store lacks would
	// name a parent and blobs it does not hold.
	if ok, err := s.ws.repo.HoldsStep(ctx, s.name, h.Number, h.ID, len(h.Manifest)); err != nil || !ok {
		return false
	}
	s.head, s.index, s.stamp, s.cached, s.removed = st, ix, h.Stamp, true, false
	s.cacheBase, s.confirmed = h.Base, fi.ModTime()
	if t := st.Manifest.Time; t.Before(s.confirmed) && !s.confirmed.After(s.ws.clock()) {
		// (A file saved in the future stays so: heldLong.)
		s.confirmed = t
	}
	return true
}

// saveCached records the session's acknowledged head st in its cache
// file. Best effort: a cache that cannot be saved costs the next commit
// the reads it would have saved.
func (s *Session) saveCached(ctx context.Context, st *manifest.Step) {
	path, key := s.headCacheFile()
	if path == "" {
		return
	}
	objs, ok := s.index.Snapshot(st.Layout)
	if !ok {
		_ = headcache.Remove(path)
		return
	}
	if s.stamp == "" {
		stamp, err := s.ws.repo.SessionStamp(ctx, s.name)
		if err != nil || stamp == "" {
			_ = headcache.Remove(path)
			return
		}
		s.stamp = stamp
	}
	s.cacheBase, _ = headcache.Save(path, key, &headcache.Head{
		Number: st.Number, Stamp: s.stamp, Manifest: st.Manifest.Encode(), ID: st.ID, Objects: objs,
		Base: s.cacheBase,
	})
}

// dropCached forgets a head that came from the cache and proved stale:
// this Session reads the store from now on.
func (s *Session) dropCached() {
	s.head, s.index, s.doc = nil, nil, nil
	s.cached, s.noCache, s.stamp = false, true, ""
}

// staleCache handles a commit from a cached head whose slot was taken,
// and returns errStaleHead if the commit should be retried from the
// store's head, else the conflict it would have met without the cache.
//
// If the slot holds gc's tombstone, or a step from a process that does
// not share this cache (another machine, or a process that keeps no
// cache or another one), the cache was stale before this commit began:
// retry. If the holder shares the cache, it is committing now or saved
// its head since this commit read the cache: the two raced, and the
// loser gets the conflict it would have got without the cache.
func (s *Session) staleCache(ctx context.Context) error {
	n := s.nextNum()
	e := s.conflict(ctx, n)
	s.dropCached()
	if e.fence {
		return errStaleHead
	}
	if pid, ok := manifest.LocalWriter(e.Holder); ok {
		if path, key := s.headCacheFile(); headcache.Shared(path, key, pid, n) {
			return e
		}
	}
	return errStaleHead
}
