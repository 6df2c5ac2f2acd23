// Package fs is the local-directory cas.Store, cairn's embedded default.
//
// Each key is a file under the root directory. A put writes a temporary
// file in <root>/.tmp, fsyncs it, and then renames it into place (plain
// put) or hard-links it into place (conditional create: link(2) fails
// atomically with EEXIST if the key exists), and finally fsyncs the
// parent directory. Readers therefore see whole objects only, and a crash
// leaves at worst a stray temporary file, which List ignores and
// CleanTemp removes. On Linux a conditional create writes an unnamed
// file in the key's directory instead (open(2) with O_TMPFILE), fsyncs
// it and links it into place: the same guarantees with no temporary
// name to create and remove, which leaves the least a new durable file
// costs (the file's fsync and its directory's), and a crash leaves
// nothing behind.
package fs

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/cairnlog/cairn/cas"
)

var _ cas.Store = (*Store)(nil)

const tmpDir = ".tmp"

// errNoAnon says a conditional create cannot use an unnamed file here;
// see createAnon.
var errNoAnon = errors.New("no unnamed files")

// anonFiles enables createAnon; tests turn it off to cover the named
// temporary file path on Linux.
var anonFiles = true

// TempMaxAge is the age past which Open removes temporary files: no put
// takes that long, so an older one was left by a crashed process.
const TempMaxAge = time.Hour

// Store is a cas.Store in a local directory.
type Store struct {
	root string
}

// Open returns a store rooted at dir. It creates nothing: a directory
// that does not exist yet reads as an empty store and is created by the
// first Put, so a read of a mistyped path leaves no directory behind.
// It removes temporary files older than TempMaxAge, left by crashed puts.
func Open(dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open fs store %s: %w", dir, err)
	}
	if fi, err := os.Stat(abs); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("open fs store %s: not a directory", dir)
	}
	s := &Store{root: abs}
	// Best effort: a read-only store still opens.
	_, _ = s.CleanTemp(TempMaxAge)
	return s, nil
}

// Root returns the store's directory.
func (s *Store) Root() string { return s.root }

func (s *Store) path(key string) string {
	return filepath.Join(s.root, filepath.FromSlash(key))
}

// Put implements cas.Store.
func (s *Store) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) (err error) {
	defer func() { err = refusal("put", key, err) }()
	if err := cas.ValidateKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return cas.NotStored(err) // nothing was tried
	}
	dst := s.path(key)
	if opts.IfAbsent {
		// Cheap early answer; the link below is the real arbiter.
		if fi, err := os.Lstat(dst); err == nil {
			if !fi.Mode().IsRegular() {
				// No writer took the key (a put makes a file, which List
				// lists; it skips anything else): it is damaged, and a
				// put that lost to it would be retried forever as a
				// conflict.
				return notAFile(key, cas.NotStored(iofs.ErrExist))
			}
			return cas.ErrExists
		}
	}
	// Until the object is named (the link or rename below), a failure
	// leaves nothing of the put to see: such errors are NotStored.
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("put %s: %w", key, cas.NotStored(err))
	}
	if opts.IfAbsent {
		switch err := createAnon(dir, dst, data); {
		case err == nil:
			return nil
		case errors.Is(err, errNoAnon):
			// Not on this system or file system: a named temporary file.
		case errors.Is(err, iofs.ErrExist):
			return cas.ErrExists
		default:
			return fmt.Errorf("put %s: %w", key, err)
		}
	}
	tmp, err := s.writeTemp(data)
	if err != nil {
		return fmt.Errorf("put %s: %w", key, cas.NotStored(err))
	}
	defer os.Remove(tmp)
	if opts.IfAbsent {
		if err := os.Link(tmp, dst); err != nil {
			if errors.Is(err, iofs.ErrExist) {
				return cas.ErrExists
			}
			return fmt.Errorf("put %s: %w", key, cas.NotStored(err))
		}
	} else if err := os.Rename(tmp, dst); err != nil {
		if fi, serr := os.Lstat(dst); serr == nil && fi.IsDir() {
			return notAFile(key, cas.NotStored(err))
		}
		return fmt.Errorf("put %s: %w", key, cas.NotStored(err))
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("put %s: sync dir: %w", key, err)
	}
	return nil
}

func (s *Store) writeTemp(data []byte) (string, error) {
	tmp := filepath.Join(s.root, tmpDir)
	f, err := os.CreateTemp(tmp, "put-*")
	if errors.Is(err, iofs.ErrNotExist) {
		// The first write to a new store: make it now.
		if err := os.MkdirAll(tmp, 0o755); err != nil {
			return "", err
		}
		f, err = os.CreateTemp(tmp, "put-*")
	}
	if err != nil {
		return "", err
	}
	name := f.Name()
	_, werr := f.Write(data)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(name)
		return "", err
	}
	return name, nil
}

// Get implements cas.Store.
func (s *Store) Get(ctx context.Context, key string, off, n int64) (_ []byte, err error) {
	defer func() { err = refusal("get", key, err) }()
	if err := cas.ValidateKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := os.Open(s.path(key))
	if err != nil {
		return nil, mapErr(key, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("get %s: %w", key, cas.ErrNotFound)
	}
	size := fi.Size()
	if off < 0 {
		off = 0
	}
	if off >= size {
		return []byte{}, nil
	}
	end := size
	if n >= 0 && off+n < end {
		end = off + n
	}
	buf := make([]byte, end-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	return buf, nil
}

// Stat implements cas.Store.
func (s *Store) Stat(ctx context.Context, key string) (_ cas.Info, err error) {
	defer func() { err = refusal("stat", key, err) }()
	if err := cas.ValidateKey(key); err != nil {
		return cas.Info{}, err
	}
	fi, err := os.Stat(s.path(key))
	if err != nil {
		return cas.Info{}, mapErr(key, err)
	}
	if !fi.Mode().IsRegular() {
		return cas.Info{}, fmt.Errorf("stat %s: %w", key, cas.ErrNotFound)
	}
	return cas.Info{Key: key, Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// List implements cas.Store. It walks the deepest directory the prefix
// names, skipping dot-names (temporary files), and sorts the keys.
func (s *Store) List(ctx context.Context, prefix, startAfter string, fn func(cas.Info) error) error {
	if err := cas.ValidatePrefix(prefix); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	base := ""
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		base = prefix[:i+1]
	}
	l := &lister{ctx: ctx, root: s.root, prefix: prefix, startAfter: startAfter}
	if err := l.dir(base); err != nil {
		return refusal("list", prefix, fmt.Errorf("list %s: %w", prefix, err))
	}
	// Keys come in byte order, which a walk of directories in name order
	// does not give ("a-b" sorts before "a/x"): sort what is left.
	sort.Slice(l.found, func(i, j int) bool { return l.found[i].key < l.found[j].key })
	for _, f := range l.found {
		if err := ctx.Err(); err != nil {
			return err
		}
		fi, err := f.entry.Info()
		if err != nil {
			if errors.Is(err, iofs.ErrNotExist) {
				continue // deleted while listing
			}
			return refusal("list", prefix, fmt.Errorf("list %s: %w", prefix, err))
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		if err := fn(cas.Info{Key: f.key, Size: fi.Size(), ModTime: fi.ModTime()}); err != nil {
			return err
		}
	}
	return nil
}

// lister walks the directories that may hold keys with a prefix, after
// a key. A directory whose every key sorts at or before startAfter is
// not read, and a file's key is compared before it is stat'ed, so a
// listing after a recent key costs the directory's names, not a stat and
// a sort of each of them: a resume's head discovery lists a session's
// newest steps after its head hint, and a session of 100,000 steps is
// one directory of 100,000 step objects.
type lister struct {
	ctx                context.Context
	root               string
	prefix, startAfter string
	found              []listed
}

// listed is a key found by a lister, not yet stat'ed.
type listed struct {
	key   string
	entry iofs.DirEntry
}

// dir lists the directory holding the keys that begin with rel (empty,
// or ending in a slash), in directory order.
func (l *lister) dir(rel string) error {
	if err := l.ctx.Err(); err != nil {
		return err
	}
	f, err := os.Open(filepath.Join(l.root, filepath.FromSlash(rel)))
	if err != nil {
		if errors.Is(err, iofs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil
		}
		return err
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if errors.Is(err, syscall.ENOTDIR) {
		return nil // a key, where the prefix names a directory
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue // temporary files (and nothing a key can name)
		}
		if !e.IsDir() && (!l.wants(rel, name) || !e.Type().IsRegular()) {
			continue
		}
		key := rel + name
		if e.IsDir() {
			sub := key + "/"
			if !strings.HasPrefix(sub, l.prefix) && !strings.HasPrefix(l.prefix, sub) {
				continue
			}
			// Every key under sub sorts before startAfter when sub does
			// and startAfter is not itself under sub.
			if sub < l.startAfter && !strings.HasPrefix(l.startAfter, sub) {
				continue
			}
			if err := l.dir(sub); err != nil {
				return err
			}
			continue
		}
		l.found = append(l.found, listed{key: key, entry: e})
	}
	return nil
}

// wants reports whether the key rel+name has the prefix and sorts after
// startAfter, without building the key: most names of a long session's
// directory are older steps, and their keys are never needed.
func (l *lister) wants(rel, name string) bool {
	if p := l.prefix; len(p) > len(rel) && !strings.HasPrefix(name, p[len(rel):]) {
		return false
	}
	a := l.startAfter
	switch {
	case len(a) <= len(rel) && rel[:len(a)] == a:
		return true // the key extends startAfter
	case len(a) <= len(rel) || a[:len(rel)] != rel:
		return rel > a // they differ within rel
	}
	return name > a[len(rel):]
}

// Delete implements cas.Store.
func (s *Store) Delete(ctx context.Context, key string) (err error) {
	defer func() { err = refusal("delete", key, err) }()
	if err := cas.ValidateKey(key); err != nil {
		return err
	}
	if err := os.Remove(s.path(key)); err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

// CleanTemp removes temporary files older than age, left behind by
// processes that crashed in the middle of a put. It returns how many it
// removed.
func (s *Store) CleanTemp(age time.Duration) (int, error) {
	entries, err := os.ReadDir(filepath.Join(s.root, tmpDir))
	if errors.Is(err, iofs.ErrNotExist) {
		return 0, nil // nothing was ever written
	}
	if err != nil {
		return 0, fmt.Errorf("clean temp files: %w", err)
	}
	n := 0
	cutoff := time.Now().Add(-age)
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil || fi.ModTime().After(cutoff) {
			continue
		}
		if os.Remove(filepath.Join(s.root, tmpDir, e.Name())) == nil {
			n++
		}
	}
	return n, nil
}

// refusal marks err as the store's refusal (cas.RefusedError) when the
// system refused this user one of the store's files, or the store's disk
// is full: the layers above then say it in words (the store as the user
// named it, what was not done), as they do an S3 server's refusal, never
// the file's path or the store key. A file that cannot be opened because
// too many are open is said so likewise, as cas.UnavailableError: a
// later request may succeed. Any other error is returned as it is.
func refusal(op, key string, err error) error {
	var why string
	switch {
	case err == nil:
		return nil
	case errors.Is(err, iofs.ErrPermission):
		why = "permission denied (this user must be able to read and write the store's files)"
	case errors.Is(err, syscall.ENOSPC):
		why = "its disk is out of space (" + syscall.ENOSPC.Error() + ")"
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		// Not the store's refusal: this process (or the system) has all
		// the files open it may have, for now; a later request may find
		// one free, as after an outage.
		errno := syscall.EMFILE
		if errors.Is(err, syscall.ENFILE) {
			errno = syscall.ENFILE
		}
		return &cas.UnavailableError{Op: op, Key: key, Err: err,
			Why: "could not be used: too many files are open (" + errno.Error() + "); retry once fewer connections or processes hold files"}
	default:
		return err
	}
	return &cas.RefusedError{Op: op, Key: key, Why: why, Err: err}
}

// notAFile is the refusal of a put to key where a directory or a
// symbolic link stands: not the store's failure but its damage, which
// no retry removes.
func notAFile(key string, err error) error {
	return &cas.RefusedError{Op: "put", Key: key, Err: err,
		Why: "a directory or link stands where the object's file belongs (remove it to repair)"}
}

func mapErr(key string, err error) error {
	if errors.Is(err, iofs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("%s: %w", key, cas.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", key, err)
}
