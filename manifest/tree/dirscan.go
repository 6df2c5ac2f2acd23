package tree

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sync"
)

// A directory build runs in two passes that overlap. The scan reads every
// directory of the tree and lstats every entry, on a few workers at once
// (as git's preload-index refreshes its index on several threads): on a
// tree whose files mostly did not change, these system calls are nearly
// all of the work. The build walks the scanned tree in name order on one
// goroutine, each directory as soon as its scan is done, reading only the
// files the stat cache cannot vouch for, so the stored result does not
// depend on the scan's scheduling. Every entry is lstat'ed before any of
// its content is read, as before.
//
// The scan holds the stat data of the directories it has read and the
// build has not yet released: at most the whole tree's, about 100 bytes
// and a name per entry (a stat cache holds as much).

// scanEntry is one entry of a scanned directory: its name and lstat
// data (Mode holds fs.FileMode bits, as FileStat's does).
type scanEntry struct {
	name string
	st   FileStat
	sub  *scanDir // a directory's own scan
}

// scanDir is one scanned directory: its entries sorted by name, or why
// it could not be read, both set before done is closed.
type scanDir struct {
	done    chan struct{}
	entries []scanEntry
	err     error
}

func newScanDir() *scanDir { return &scanDir{done: make(chan struct{})} }

// isDir reports whether the entry is a directory.
func (e *scanEntry) isDir() bool { return fs.FileMode(e.st.Mode).IsDir() }

// errScanStopped is the fault of directories left unread because the
// build stopped.
var errScanStopped = errors.New("directory scan stopped")

// scanner reads directories on a fixed number of workers, taking them
// from a stack: a directory's subdirectories are pushed in reverse name
// order, so the workers read the tree in about the order the build walks
// it. Faults are kept in the scanDir they belong to; the build reports
// the first one it meets, in name order.
type scanner struct {
	mu      sync.Mutex
	cond    sync.Cond
	stack   []scanJob
	active  int // jobs taken and not finished
	stopped bool
	workers sync.WaitGroup
}

type scanJob struct {
	d    *scanDir
	path string
	root bool
}

// startScan starts scanning the directory tree at root on workers
// goroutines and returns its root scanDir. Call stop once the build is
// over, whatever its outcome: it returns when no worker is left.
func startScan(root string, workers int) (*scanDir, *scanner) {
	s := &scanner{}
	s.cond.L = &s.mu
	d := newScanDir()
	s.stack = []scanJob{{d: d, path: root, root: true}}
	workers = max(workers, 1)
	s.workers.Add(workers)
	for range workers {
		go s.work()
	}
	return d, s
}

// stop makes the workers finish what is left without reading it, and
// waits for them.
func (s *scanner) stop() {
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.workers.Wait()
}

func (s *scanner) work() {
	defer s.workers.Done()
	for {
		s.mu.Lock()
		for len(s.stack) == 0 && s.active > 0 {
			s.cond.Wait()
		}
		if len(s.stack) == 0 {
			// Nothing queued and nothing being read: the scan is over.
			s.mu.Unlock()
			s.cond.Broadcast()
			return
		}
		j := s.stack[len(s.stack)-1]
		s.stack = s.stack[:len(s.stack)-1]
		s.active++
		stopped := s.stopped
		s.mu.Unlock()

		var entries []scanEntry
		err := errScanStopped
		if !stopped {
			entries, err = readDirStat(j.path, j.root)
		}
		var subs []scanJob
		for i := range entries {
			if e := &entries[i]; e.isDir() {
				e.sub = newScanDir()
				subs = append(subs, scanJob{d: e.sub, path: filepath.Join(j.path, e.name)})
			}
		}
		j.d.entries, j.d.err = entries, err
		close(j.d.done)

		s.mu.Lock()
		for k := len(subs) - 1; k >= 0; k-- {
			s.stack = append(s.stack, subs[k])
		}
		s.active--
		s.mu.Unlock()
		s.cond.Broadcast()
	}
}

// dirError wraps a fault reading directory p.
func dirError(p string, err error) error {
	return unreadable(fmt.Errorf("read state directory %s: %w", p, err))
}
