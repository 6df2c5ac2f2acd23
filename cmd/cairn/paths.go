package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/cairnlog/cairn"
	"github.com/cairnlog/cairn/internal/jsontext"
	"github.com/cairnlog/cairn/internal/realpath"
	"github.com/cairnlog/cairn/internal/storeurl"
)

// Checks of the paths a user names in flags: a path that cannot serve is
// bad input (exit 2), said in the flag's words before any work is done.

// pathProblem is err without the path (the message names the flag and
// the path itself).
func pathProblem(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// inputLimit bounds what a command reads from one input, and says which
// limit it is.
type inputLimit struct {
	max  int64
	what string
	// json: the input is a JSON text, read no further than the first
	// byte that cannot be JSON (jsontext.StopReader), so that binary or
	// endless input that is no JSON is refused at once, not read up to
	// max first.
	json bool
}

// inputName names an input in messages: the flag and its file, stdin
// said as such; no flag is the state a command reads from stdin.
func inputName(flag, path string) string {
	switch {
	case flag == "":
		return "the state (stdin)"
	case path == "-":
		return flag + " - (stdin)"
	}
	return flag + " " + path
}

// readInput reads the file that flag names (path; - for stdin), no more
// than limit allows. An input that cannot be read or is too large is bad
// input (exit 2), said in the flag's words. Once ctx is done (Ctrl-C)
// it returns ctx's error, even while the input has nothing to give yet
// (stdin a terminal or a pipe that never writes, a FIFO no writer
// opened): the read is left to the process's end.
func readInput(ctx context.Context, e *env, flag, path string, limit inputLimit) ([]byte, error) {
	var b []byte
	err := interruptible(ctx, func() (err error) {
		b, err = readInputNow(e, flag, path, limit)
		return err
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// interruptible runs fn, which may wait on a file with nothing to give
// yet (stdin a terminal or a pipe that never writes, a FIFO whose other
// side nobody opened), and returns its error; or ctx's error, once ctx
// is done first (Ctrl-C): fn is then left to the process's end, and
// what it sets must not be read.
func interruptible(ctx context.Context, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// readInputNow is readInput, however long the input takes.
func readInputNow(e *env, flag, path string, limit inputLimit) ([]byte, error) {
	name := inputName(flag, path)
	r := e.stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, usagef("%s: %v", name, pathProblem(err))
		}
		defer f.Close()
		r = f
	}
	if limit.json {
		r = &jsontext.StopReader{R: r}
	}
	b, err := io.ReadAll(io.LimitReader(r, min(limit.max, math.MaxInt64-1)+1))
	switch {
	case err != nil:
		return nil, usagef("%s: %v", name, pathProblem(err))
	case int64(len(b)) > limit.max:
		return nil, usagef("%s: more than %d bytes, %s", name, limit.max, limit.what)
	}
	return b, nil
}

// checkInputDir checks that the directory a flag names exists.
func checkInputDir(flagName, dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return usagef("%s %s: %v", flagName, dir, pathProblem(err))
	}
	if !fi.IsDir() {
		return usagef("%s %s: not a directory", flagName, dir)
	}
	return nil
}

// unexpandedTilde says why path, a store, directory or file a command
// would create, is refused when it starts with a ~ that the shell did
// not expand
// (--store=~/agents, a quoted "~/agents", CAIRN_STORE=~/agents in a
// systemd unit or an env file): cairn would make a directory named ~
// in the current directory, where the user looks for nothing, and which
// a later rm -rf ~ meant for it removes the home directory instead.
// A path whose ~ names something that exists is taken as written, and
// so is ./~/…, for a directory truly named so. It returns "" for a path
// without such a ~.
func unexpandedTilde(path string) string {
	first, rest, _ := strings.Cut(filepath.ToSlash(path), "/")
	if !strings.HasPrefix(first, "~") || exists(first) {
		return ""
	}
	instead := "the home directory's path"
	if home, err := os.UserHomeDir(); err == nil && first == "~" {
		instead = filepath.Join(home, filepath.FromSlash(rest))
	}
	return fmt.Sprintf("~ is not expanded here (a shell expands it only at the start of an unquoted word, not after --flag= or in an environment file): give %s, or ./%s for a directory named %s", instead, filepath.ToSlash(path), first)
}

// urlScheme matches the start of a URL (s3://, minio://, file://, http://).
var urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// notMeantAsPath says why path, a directory or file a command would
// create (checkout --dir, run --dir, export --out), is refused as not
// the local path the user meant: a ~ the shell did not expand
// (unexpandedTilde), or a URL (checkout --dir s3://b/x made a directory
// named "s3:" here: a command writes only to local paths). A path whose
// first element exists is taken as written, and so is ./s3:/…, for a
// directory truly named so. It returns "" for a path meant as one.
func notMeantAsPath(path string) string {
	if problem := unexpandedTilde(path); problem != "" {
		return problem
	}
	first, _, _ := strings.Cut(filepath.ToSlash(path), "/")
	if !urlScheme.MatchString(path) || exists(first) {
		return ""
	}
	return fmt.Sprintf("a URL, not a path: this writes to a local directory or file only (give ./%s for a directory named %s)", filepath.ToSlash(filepath.Clean(path)), first)
}

// exists reports whether something (a file, a directory, a link) stands
// at path, or might: only a path the system says does not exist is
// absent. The check of notMeantAsPath and unexpandedTilde, which take a
// path whose first element exists as written.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

// checkOutputDir checks that the directory a flag names is absent or an
// empty directory, as a command that writes into it needs.
func checkOutputDir(flagName, dir string) error {
	if exists, err := checkDirTarget(flagName, dir); err != nil || !exists {
		return err
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return usagef("%s %s: %v", flagName, dir, pathProblem(err))
	}
	if len(des) > 0 {
		return usagef("%s %s is not empty (give an empty or new directory)", flagName, dir)
	}
	return nil
}

// checkDirTarget checks that the directory a flag names is absent or a
// directory (not a file, not a symlink to nothing), and says whether it
// exists.
func checkDirTarget(flagName, dir string) (exists bool, err error) {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if problem := notMeantAsPath(dir); problem != "" {
			return false, usagef("%s %s: %s", flagName, dir, problem)
		}
		if _, lerr := os.Lstat(dir); lerr == nil {
			return false, usagef("%s %s: a symlink to nothing", flagName, dir)
		}
		return false, nil
	}
	if err != nil {
		return false, usagef("%s %s: %v", flagName, dir, pathProblem(err))
	}
	if !fi.IsDir() {
		return false, usagef("%s %s: not a directory", flagName, dir)
	}
	return true, nil
}

// checkOutsideStore refuses a directory a command writes into (checkout,
// run --dir) that lies inside a local store: files there would be taken
// for the store's own (a directory under steps/ for a session), or
// swept by gc as objects no step uses.
func (e *env) checkOutsideStore(flagName, dir string) error {
	if e.insideStore(dir) {
		return usagef("%s %s: is inside the store; give a directory outside it", flagName, dir)
	}
	return nil
}

// insideStore reports whether a file or directory a command would write
// at path lies inside the local store the command uses (realpath.Within:
// through links, and before its parents are made).
func (e *env) insideStore(path string) bool {
	store := e.localStore()
	return store != "" && realpath.Within(path, store)
}

// checkDirOutsideStore refuses a directory to commit that holds the
// local store the commit writes to (--store inside it, or the default
// store under a home directory committed whole): each step would carry
// the store's previous steps, and grow with them. It refuses one that
// holds cairn's cache directory too (see cacheIn).
func (e *env) checkDirOutsideStore(flagName, dir string) error {
	if store := e.storeIn(dir); store != "" {
		return usagef("%s %s holds the store %s, so each step would hold the store's earlier steps: keep the store outside the directory (--store or $CAIRN_STORE)", flagName, dir, store)
	}
	if cache := cacheIn(dir); cache != "" {
		return usagef("%s %s holds cairn's cache directory %s, which each commit writes to, so each step would hold the caches of the step before: %s", flagName, dir, cache, cacheAdvice)
	}
	return nil
}

// cacheIn returns cairn's local cache directory (cairn.DefaultCacheDir:
// $CAIRN_CACHE_DIR, $XDG_CACHE_HOME/cairn or ~/.cache/cairn) if it lies
// in dir (or is dir), "" if it does not or the caches are off. A commit
// writes there while it reads dir (its stat cache, its head cache and
// in-flight marker, cairn run's record of the work directory), so a
// directory holding it is refused as one holding the store is: each step
// would carry cairn's own caches of the step before, a directory left
// alone would never commit unchanged, and cairn run, which empties its
// work directory, would delete them, then check the stored copies out
// into the live cache on its next start.
func cacheIn(dir string) string {
	if c := cairn.DefaultCacheDir(); c != "" && realpath.Within(c, dir) {
		return c
	}
	return ""
}

// cacheAdvice says how to keep the caches out of a directory.
const cacheAdvice = "keep the caches outside the directory ($CAIRN_CACHE_DIR=DIR moves them, $CAIRN_CACHE_DIR=off turns them off)"

// storeIn returns the local store the command writes to if it lies in
// dir (or is dir), "" if it does not.
func (e *env) storeIn(dir string) string {
	if store := e.localStore(); store != "" && realpath.Within(store, dir) {
		return store
	}
	return ""
}

// localStore returns the directory of the store the command uses
// (--store, $CAIRN_STORE or the default store), "" if it is not local.
func (e *env) localStore() string {
	store, local := storeurl.Local(cairn.StoreURL(e.store))
	if !local {
		return ""
	}
	return store
}
