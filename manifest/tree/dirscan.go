package tree

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
)

// A directory build runs in two passes. The scan reads every directory
// of the tree and lstats every entry, directories in parallel (as git's
// preload-index refreshes its index on several threads): on a tree whose
// files mostly did not change, these system calls are nearly all of the
// work. The build then walks the scanned tree in name order on one
// goroutine, reading only the files the stat cache cannot vouch for, so
// the stored result does not depend on the scan's scheduling. Every
// entry is lstat'ed before any of its content is read, as before.

// scanEntry is one entry of a scanned directory: its name and lstat
// data (Mode holds fs.FileMode bits, as FileStat's does).
type scanEntry struct {
	name string
	st   FileStat
	sub  *scanDir // a directory's own scan
}

// scanDir is one scanned directory: its entries sorted by name, or why
// it could not be read.
type scanDir struct {
	entries []scanEntry
	err     error
}

// isDir reports whether the entry is a directory.
func (e *scanEntry) isDir() bool { return fs.FileMode(e.st.Mode).IsDir() }

// scanTree scans the directory tree at root with up to workers
// directories read at once. Faults are kept in the scanDir they belong
// to; the build reports the first one it meets, in name order.
func scanTree(root string, workers int) *scanDir {
	s := &scanner{sem: make(chan struct{}, max(workers, 1))}
	d := &scanDir{}
	s.wg.Add(1)
	s.sem <- struct{}{}
	s.scan(d, root, true)
	s.wg.Wait()
	return d
}

type scanner struct {
	wg  sync.WaitGroup
	sem chan struct{} // one token per directory being read
}

// scan reads directory p into d, then scans its subdirectories, each on
// its own goroutine once a token is free. The caller holds a token for
// d, and has counted d in wg.
func (s *scanner) scan(d *scanDir, p string, root bool) {
	d.entries, d.err = readDirStat(p, root)
	<-s.sem
	defer s.wg.Done()
	if d.err != nil {
		return
	}
	for i := range d.entries {
		e := &d.entries[i]
		if !e.isDir() {
			continue
		}
		e.sub = &scanDir{}
		s.wg.Add(1)
		go func(sub *scanDir, p string) {
			s.sem <- struct{}{}
			s.scan(sub, p, false)
		}(e.sub, filepath.Join(p, e.name))
	}
}

// dirError wraps a fault reading directory p.
func dirError(p string, err error) error {
	return fmt.Errorf("read state directory %s: %w", p, err)
}
