package cairn

import (
	"context"
	"errors"
	"path/filepath"
	"strings"

	"github.com/cairnlog/cairn/internal/headcache"
	"github.com/cairnlog/cairn/internal/objectcache"
	"github.com/cairnlog/cairn/manifest"
)

// UseHeadCache makes the workspace keep, under dir, each session's head
// as this process last committed it, and start a session's next commit
// from there: a commit in a fresh process (the CLI) then writes its step
// with one PUT and two HEADs made at once (of the session's marker and of
// its base marker) instead of finding the head and reading every object
// of its layout. An empty dir turns it off. Stores that live only in this
// process (mem://, OpenStore) are never cached.
//
// The cache is a hint. A stale one costs a retry, never a wrong parent:
// if the step slot above the cached head is taken (another writer moved
// on, or gc fenced a removed session), the commit reads the head from the
// store and tries once more, or, with CommitOptions.Expect, fails as it
// would have without the cache. A session whose marker changed since
// (a store wiped and rebuilt at the same URL, a session removed,
// collected and created again) is read from the store. A base marker
// written since costs one GET of it: at most the cached head (a prune),
// the commit goes on from the cache; above it (a removal, or a damaged
// marker) the head is read from the store, which refuses a damaged one
// before anything is written. A corrupt, foreign or oversized cache file
// is ignored. Call it right after Open.
//
// Beside the heads, under dir/objects, the workspace keeps a copy of each
// step object and pack its commits write (each at most 1 MiB, 128 MiB in
// all, the oldest pruned first), so that the commit every DefaultFanout
// steps or so that merges them into a pack reads them there instead of
// from the store. A copy is used only if it holds exactly the blobs the
// writer's index places in that object, each decoding to its id (see
// manifest.LocalObjects): a damaged or foreign one costs one GET.
func (w *Workspace) UseHeadCache(dir string) {
	if dir == "" || w.url == "" || strings.HasPrefix(w.url, "mem://") {
		w.heads = ""
		w.repo.UseLocalObjects(nil)
		return
	}
	w.heads = filepath.Join(dir, "heads")
	w.repo.UseLocalObjects(objectcache.New(filepath.Join(dir, "objects"), w.cacheURL()))
}

// cacheURL names the workspace's store in cache keys: its URL, a local
// path made absolute.
func (w *Workspace) cacheURL() string {
	url := w.url
	if !strings.Contains(url, "://") {
		if a, err := filepath.Abs(url); err == nil {
			url = a
		}
	}
	return url
}

// errStaleHead reports that a commit started from a cached head lost its
// slot: Commit retries from the store's head.
var errStaleHead = errors.New("cached head is stale")

// headCacheFile returns the cache file of session and its key, "" if the
// workspace keeps no head cache.
func (s *Session) headCacheFile() (path, key string) {
	if s.ws.heads == "" {
		return "", ""
	}
	key = "cairn head\x00" + s.ws.cacheURL() + "\x00" + s.name
	return filepath.Join(s.ws.heads, headcache.FileName(key)), key
}

// loadCached sets the session's head and index from its cache file, if
// there is a usable one and this Session has not loaded a head before.
// The stamps of the session's marker and base marker must still be the
// ones the cache saw (cacheStamp: two HEAD requests at once), or differ
// only by a prune (prunedBelow); anything else leaves the session
// unloaded.
func (s *Session) loadCached(ctx context.Context) bool {
	path, key := s.headCacheFile()
	if path == "" || s.noCache {
		return false
	}
	// Only a session's first load may come from the cache: after it,
	// this process knows at least as much as the cache (a lost slot or
	// an unsure put forgets the head, and the store must answer).
	s.noCache = true
	h, _ := headcache.Load(path, key)
	if h == nil || h.Stamp == "" {
		return false
	}
	st, ix, err := s.ws.repo.RestoreHead(s.name, h.Manifest, h.ID, h.Objects)
	if err != nil || st.Number != h.Number {
		return false
	}
	stamp, err := s.cacheStamp(ctx)
	if err != nil || stamp != h.Stamp && !s.prunedBelow(ctx, h.Stamp, stamp, st.Number) {
		return false
	}
	// Saved under the stamp taken before the base was checked: a marker
	// written after the check has another one.
	s.head, s.index, s.stamp, s.cached, s.removed = st, ix, stamp, true, false
	return true
}

// prunedBelow reports whether the stamps a cached head was saved under
// (was) and the store's (now) differ only in the base marker, and the
// base it now holds is at most the cached head: a prune, which never
// raises the base above the head, and a commit above head still reads
// back. One GET of the marker (at most 21 bytes), paid only after the
// marker was written. A base above head (a removal, or damage) is left
// to the store's head (manifest.Repo.ReadHead), which tells them apart.
func (s *Session) prunedBelow(ctx context.Context, was, now string, head uint64) bool {
	wasMarker, _, ok1 := strings.Cut(was, " base ")
	nowMarker, _, ok2 := strings.Cut(now, " base ")
	return ok1 && ok2 && wasMarker == nowMarker && s.baseBelow(ctx, now, head)
}

// baseBelow reports whether the base marker whose stamp is in stamp, just
// taken, is at most head, read after the stamp: a head is saved only
// under a stamp of a marker known sound (a base marker damaged after this
// read has another stamp, and one damaged before it is seen here). No
// marker costs nothing; one costs a GET of a few bytes, on commits that
// read their head from the store only.
func (s *Session) baseBelow(ctx context.Context, stamp string, head uint64) bool {
	if _, base, _ := strings.Cut(stamp, " base "); base == "" {
		return true
	}
	base, err := s.ws.repo.ReadBase(ctx, s.name)
	return err == nil && base <= head
}

// cacheStamp returns what a cached head is saved under and checked
// against: the stamps of the session's marker and of its base marker,
// "" if the session has no marker. Two HEAD requests, made at once. The
// base marker's stamp sends a commit to the store whenever the marker was
// written since the cache was saved: after a prune or a removal, and
// after damage (a marker no cairn wrote), which the store's head then
// refuses (manifest.Repo.ReadHead) before anything is written, instead
// of a cached commit acknowledging a step that readers would not show.
func (s *Session) cacheStamp(ctx context.Context) (string, error) {
	var (
		base string
		berr error
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		base, berr = s.ws.repo.BaseStamp(ctx, s.name)
	}()
	stamp, err := s.ws.repo.SessionStamp(ctx, s.name)
	<-done
	switch {
	case err != nil:
		return "", err
	case berr != nil:
		return "", berr
	case stamp == "":
		return "", nil
	}
	return stamp + " base " + base, nil
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
		stamp, err := s.cacheStamp(ctx)
		if err != nil || stamp == "" || !s.baseBelow(ctx, stamp, st.Number) {
			_ = headcache.Remove(path)
			return
		}
		s.stamp = stamp
	}
	_ = headcache.Save(path, key, &headcache.Head{
		Number: st.Number, Stamp: s.stamp, Manifest: st.Manifest.Encode(), ID: st.ID, Objects: objs,
	})
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
	n := s.headNum() + 1
	e := s.conflict(ctx, n)
	s.head, s.index, s.doc = nil, nil, nil
	s.cached, s.noCache, s.stamp = false, true, ""
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
