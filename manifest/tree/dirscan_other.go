//go:build !linux

package tree

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// readDirStat reads directory p and lstats each entry.
func readDirStat(p string, root bool) ([]scanEntry, error) {
	des, err := os.ReadDir(p)
	if err != nil {
		return nil, dirError(p, err)
	}
	entries := make([]scanEntry, len(des))
	for i, de := range des {
		info, err := os.Lstat(filepath.Join(p, de.Name()))
		if err != nil {
			return nil, unreadable(fmt.Errorf("read state file %s: %w", filepath.Join(p, de.Name()), err))
		}
		entries[i] = scanEntry{name: de.Name(), st: statOf(info)}
	}
	sortEntries(entries)
	return entries, nil
}

// sortEntries sorts scanned entries by name.
func sortEntries(es []scanEntry) {
	slices.SortFunc(es, func(a, b scanEntry) int {
		switch {
		case a.name < b.name:
			return -1
		case a.name > b.name:
			return 1
		}
		return 0
	})
}
