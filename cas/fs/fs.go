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
	"unsafe"

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
	// A path that names a file, runs through one, or loops through
	// symbolic links can never hold the store: say so now, naming the
	// path (ErrInvalidURL: the caller's input), not at the first put in
	// words naming an object's key. A path not there yet, or one this
	// user may not look into, is the store's to answer (created by the
	// first put, or refused then).
	switch fi, err := os.Stat(abs); {
	case err == nil && !fi.IsDir():
		return nil, fmt.Errorf("open fs store %s: %w: not a directory", dir, cas.ErrInvalidURL)
	case err != nil && !errors.Is(err, iofs.ErrNotExist) && !errors.Is(err, iofs.ErrPermission):
		var pe *iofs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is said once, as given
		}
		return nil, fmt.Errorf("open fs store %s: %w: %v", dir, cas.ErrInvalidURL, err)
	}
	s := &Store{root: abs}
	// Best effort: a read-only store still opens.
	_, _ = s.CleanTemp(TempMaxAge)
	return s, nil
}

// Root returns the store's directory.
func (s *Store) Root() string { return s.root }

// at opens the directory holding key, without following a link below
// the root (making what is missing if create), and returns it with the
// key's last name.
func (s *Store) at(key string, create bool) (*dir, string, error) {
	rel, name := "", key
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		rel, name = key[:i], key[i+1:]
	}
	d, err := openDir(s.root, rel, create)
	if err != nil {
		return nil, "", err
	}
	return d, name, nil
}

// Put implements cas.Store. It writes nothing through a link, below the
// root or at the key: what stands in the object's place is refused.
func (s *Store) Put(ctx context.Context, key string, data []byte, opts cas.PutOptions) (err error) {
	defer func() { err = refusal("put", key, err) }()
	if err := cas.ValidateKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return cas.NotStored(err) // nothing was tried
	}
	// Until the object is named (the link or rename below), a failure
	// leaves nothing of the put to see: such errors are NotStored.
	d, name, err := s.at(key, true)
	if err != nil {
		return notObject("put", key, fmt.Errorf("put %s: %w", key, cas.NotStored(err)), true)
	}
	defer d.close()
	if m, err := d.lstat(name); err == nil {
		if !m.mode.IsRegular() {
			// No writer took the key (a put makes a file): it is
			// damaged, and a put that lost to it would be retried
			// forever as a conflict.
			return notObject("put", key, cas.NotStored(&standsError{mode: m.mode}), false)
		}
		if opts.IfAbsent {
			return cas.ErrExists // a cheap early answer; the link below is the real arbiter
		}
	}
	if opts.IfAbsent {
		switch err := createAnon(d, name, data); {
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
	tmp, err := openDir(s.root, tmpDir, true)
	if err != nil {
		// What stands there is in the place of the store's own
		// directory; what went undone is the put of key.
		return notObjectAt("put", key, tmpDir, fmt.Errorf("put %s: %w", key, cas.NotStored(err)), false)
	}
	defer tmp.close()
	tmpName, err := tmp.createTemp(data)
	if err != nil {
		return fmt.Errorf("put %s: %w", key, cas.NotStored(err))
	}
	defer tmp.remove(tmpName)
	if opts.IfAbsent {
		if err := d.link(tmp, tmpName, name); err != nil {
			if errors.Is(err, iofs.ErrExist) {
				return cas.ErrExists
			}
			return fmt.Errorf("put %s: %w", key, cas.NotStored(err))
		}
	} else if err := d.rename(tmp, tmpName, name); err != nil {
		if m, serr := d.lstat(name); serr == nil && !m.mode.IsRegular() {
			return notObject("put", key, cas.NotStored(&standsError{mode: m.mode}), false)
		}
		return fmt.Errorf("put %s: %w", key, cas.NotStored(err))
	}
	if err := d.sync(); err != nil {
		return fmt.Errorf("put %s: sync dir: %w", key, err)
	}
	return nil
}

// Get implements cas.Store. It reads a file only: what stands at the
// key, or at a directory on its way, is never followed (a link), waited
// on (a pipe) or read (a device), but refused as the store's damage. So
// is a file where a directory on its way belongs (see onTheWay).
func (s *Store) Get(ctx context.Context, key string, off, n int64) (_ []byte, err error) {
	defer func() { err = refusal("get", key, err) }()
	if err := cas.ValidateKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d, name, err := s.at(key, false)
	if err != nil {
		return nil, s.onTheWay("get", key, err)
	}
	defer d.close()
	f, err := d.openRead(name)
	if err != nil {
		return nil, notObject("get", key, mapErr(key, err), false)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, notObject("get", key, &standsError{mode: fi.Mode()}, false)
	}
	// The file's size when opened bounds the read, and n bounds it
	// further: the layers above ask for no more than their limit on one
	// object (plus a byte, to tell a larger one).
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
	got, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	return buf[:got], nil
}

// Stat implements cas.Store. Like Get, it follows no link.
func (s *Store) Stat(ctx context.Context, key string) (_ cas.Info, err error) {
	defer func() { err = refusal("stat", key, err) }()
	if err := cas.ValidateKey(key); err != nil {
		return cas.Info{}, err
	}
	d, name, err := s.at(key, false)
	if err != nil {
		return cas.Info{}, s.onTheWay("stat", key, err)
	}
	defer d.close()
	m, err := d.lstat(name)
	if err != nil {
		return cas.Info{}, mapErr(key, err)
	}
	if !m.mode.IsRegular() {
		return cas.Info{}, notObject("stat", key, &standsError{mode: m.mode}, false)
	}
	return cas.Info{Key: key, Size: m.size, ModTime: m.modTime}, nil
}

// List implements cas.Store. It walks the deepest directory the prefix
// names, skipping dot-names (temporary files), and sorts the keys. It
// follows no link: a link, a pipe, a device or a socket, and an empty
// directory, is listed with Info.NotObject saying which. A link or file
// where the directory the prefix names belongs fails the listing.
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
	l := &lister{ctx: ctx, prefix: prefix, startAfter: startAfter}
	d, err := openDir(s.root, strings.TrimSuffix(base, "/"), false)
	switch {
	case err == nil:
		_, err = l.dir(d, base)
		d.close()
	case errors.Is(err, syscall.ENOTDIR) || errors.Is(err, errNotDir):
		// A file stands where a directory of the prefix belongs. In S3
		// it would be another key ("a" beside "a/b"), but here no key
		// under the prefix can be written while it stands, and a
		// listing that answered "none" would pass off the keys it hides
		// (a session's steps, say) as gone: gc would free what they use.
		// It is the store's damage, said as what stands there (as a Get
		// beneath it says: Store.onTheWay).
		err = notObject("list", prefix, &standsError{mode: 0}, true)
	case notFound(err):
		err = nil // nothing there
	default:
		err = notObject("list", prefix, err, true)
	}
	if err != nil {
		return refusal("list", prefix, fmt.Errorf("list %s: %w", prefix, err))
	}
	// Keys come in byte order, which a walk of directories in name order
	// does not give ("a-b" sorts before "a/x"): sort what is left.
	sort.Slice(l.found, func(i, j int) bool { return l.found[i].Key < l.found[j].Key })
	for _, info := range l.found {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(info); err != nil {
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
	prefix, startAfter string
	found              []cas.Info
}

// dir lists d, the directory holding the keys that begin with rel
// (empty, or ending in a slash), in directory order, and returns how
// many names it holds. It stats the names it keeps while d is open, so
// that a walk holds one directory open per level, not one per directory.
func (l *lister) dir(d *dir, rel string) (int, error) {
	if err := l.ctx.Err(); err != nil {
		return 0, err
	}
	entries := 0
	err := d.eachEntry(func(raw []byte, isDir bool) error {
		entries++
		if raw[0] == '.' {
			return nil // temporary files (and nothing a key can name)
		}
		if !isDir {
			// A file, or a link or other non-file, listed as one: a
			// link's type is its own (the entry reads it unfollowed).
			// The name is compared through a view of the buffer and
			// copied only for a key that is kept.
			if !l.wants(rel, unsafe.String(&raw[0], len(raw))) {
				return nil
			}
			name := string(raw)
			m, err := d.lstat(name)
			if errors.Is(err, iofs.ErrNotExist) {
				return nil // deleted while listing
			}
			if err != nil {
				return err
			}
			info := cas.Info{Key: rel + name, Size: m.size, ModTime: m.modTime}
			if !m.mode.IsRegular() {
				info = cas.Info{Key: rel + name, NotObject: kind(m.mode)}
			}
			l.found = append(l.found, info)
			return nil
		}
		name := string(raw)
		sub := rel + name + "/"
		if !strings.HasPrefix(sub, l.prefix) && !strings.HasPrefix(l.prefix, sub) {
			return nil
		}
		// Every key under sub sorts before startAfter when sub does
		// and startAfter is not itself under sub.
		if sub < l.startAfter && !strings.HasPrefix(l.startAfter, sub) {
			return nil
		}
		sd, err := d.sub(name, false)
		if notFound(err) {
			return nil // deleted while listing
		}
		if err != nil {
			return err
		}
		n, err := l.dir(sd, sub)
		sd.close()
		if err != nil {
			return err
		}
		if n == 0 && l.wants(rel, name) {
			l.found = append(l.found, cas.Info{Key: rel + name, NotObject: kind(iofs.ModeDir)})
		}
		return nil
	})
	return entries, err
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

// Delete implements cas.Store. A link at the key is removed, never what
// it names; a directory there is refused as damage, not removed.
func (s *Store) Delete(ctx context.Context, key string) (err error) {
	defer func() { err = refusal("delete", key, err) }()
	if err := cas.ValidateKey(key); err != nil {
		return err
	}
	d, name, err := s.at(key, false)
	if notFound(err) {
		return nil
	}
	if err != nil {
		return notObject("delete", key, fmt.Errorf("delete %s: %w", key, err), true)
	}
	defer d.close()
	if err := d.remove(name); err != nil && !notFound(err) {
		if m, serr := d.lstat(name); serr == nil && m.mode.IsDir() {
			return notObject("delete", key, &standsError{mode: m.mode}, false)
		}
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

// CleanTemp removes temporary files older than age, left behind by
// processes that crashed in the middle of a put. It returns how many it
// removed. It removes files in the store's own temporary directory
// only: if a link stands in that directory's place, it removes nothing.
func (s *Store) CleanTemp(age time.Duration) (int, error) {
	d, err := openDir(s.root, tmpDir, false)
	if notFound(err) {
		return 0, nil // nothing was ever written
	}
	if err != nil {
		return 0, fmt.Errorf("clean temp files: %w", err)
	}
	defer d.close()
	entries, err := d.readDir()
	if err != nil {
		return 0, fmt.Errorf("clean temp files: %w", err)
	}
	n := 0
	cutoff := time.Now().Add(-age)
	for _, e := range entries {
		m, err := d.lstat(e.Name())
		if err != nil || m.mode.IsDir() || m.modTime.After(cutoff) {
			continue
		}
		if d.remove(e.Name()) == nil {
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
	var me *mkdirError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, iofs.ErrPermission):
		why = "permission denied (this user must be able to read and write the store's files)"
	case errors.Is(err, syscall.ENOSPC):
		why = "its disk is out of space (" + syscall.ENOSPC.Error() + ")"
	case errors.As(err, &me):
		// A directory the store's layout needs could not be made, as
		// on a file system that makes none (/proc): not a key that is
		// missing, but the store refusing what a put needs. The
		// system's reason, not the directory's path.
		reason := me.err.Error()
		var errno syscall.Errno
		if errors.As(me.err, &errno) {
			reason = errno.Error()
		}
		why = "a directory of its layout could not be made in it (" + reason + ")"
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

// mkdirError is a directory of the store's layout that a put needed and
// could not make (the system's error): said as the store's refusal.
type mkdirError struct{ err error }

func (e *mkdirError) Error() string { return "mkdir: " + e.err.Error() }
func (e *mkdirError) Unwrap() error { return e.err }

// errNotDir is a file where a directory belongs, where the system does
// not say ENOTDIR.
var errNotDir = errors.New("not a directory")

// notFound reports whether err says that nothing stands at a path, or
// a file stands where a directory on its way belongs: a key that is not
// there (the file is then another key, as "a" beside "a/b" in S3).
func notFound(err error) bool {
	return errors.Is(err, iofs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, errNotDir)
}

// standsError says what stands where a file or a directory of the store
// belongs: a link, a directory, a pipe, a device.
type standsError struct{ mode iofs.FileMode }

func (e *standsError) Error() string { return kind(e.mode) + " stands there" }

// kind says what a file of mode is, as the store's words name it.
func kind(mode iofs.FileMode) string {
	switch t := mode.Type(); {
	case t == 0:
		return "a file"
	case t&iofs.ModeSymlink != 0:
		return "a link"
	case t&iofs.ModeDir != 0:
		return "a directory"
	case t&iofs.ModeNamedPipe != 0:
		return "a pipe"
	case t&iofs.ModeDevice != 0:
		return "a device"
	case t&iofs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file"
}

// notObject makes err, if a *standsError is its cause, the refusal of
// op on key as the store's damage (cas.NotObjectError), in words: a
// link, a directory, a pipe or a device stands where the object's file,
// or if parent a directory on its way, belongs. Not the store's failure
// but its damage, which no retry removes. Any other error is returned
// as it is.
func notObject(op, key string, err error, parent bool) error {
	return notObjectAt(op, key, key, err, parent)
}

// notObjectAt is notObject for something standing at place (a dot-name:
// the store's own directory), not at key or on its way.
func notObjectAt(op, key, place string, err error, parent bool) error {
	var se *standsError
	if !errors.As(err, &se) {
		return err
	}
	what := kind(se.mode)
	ne := &cas.NotObjectError{Key: place, What: what, Parent: parent}
	cause := error(ne)
	if cas.IsNotStored(err) {
		cause = cas.NotStored(ne)
	}
	return &cas.RefusedError{Op: op, Key: key, Err: cause, Why: ne.Error() + " (remove it to repair)"}
}

// onTheWay translates err, the failure of op to open the directory
// holding key: a file where a directory on its way belongs (ENOTDIR) is
// the store's damage, said as what stands there and where, as the
// directory's prefix ("steps/a/", cas.NotObjectError.Key), the words a
// listing beneath it says. Said "not found", a read of a step beneath it
// would call the step lost, though what hides it is in the store's
// place, and no key beneath it can be written while it stands. Anything
// else is mapErr's.
func (s *Store) onTheWay(op, key string, err error) error {
	if !errors.Is(err, syscall.ENOTDIR) && !errors.Is(err, errNotDir) {
		return notObject(op, key, mapErr(key, err), true)
	}
	place, stands := key[:strings.LastIndexByte(key, '/')+1], &standsError{mode: 0}
	for i := 0; i < len(key); i++ {
		if key[i] != '/' {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(s.root, filepath.FromSlash(key[:i]))); err == nil && !fi.IsDir() {
			place, stands = key[:i+1], &standsError{mode: fi.Mode()}
			break
		}
	}
	return notObjectAt(op, key, place, stands, true)
}

func mapErr(key string, err error) error {
	if notFound(err) {
		return fmt.Errorf("%s: %w", key, cas.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", key, err)
}
