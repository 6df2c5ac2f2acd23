package manifest

import (
	"os"
	"path/filepath"
)

// IsLocalStore reports whether the local directory dir holds a cairn
// store: a session's directory under it holding a step object, a head
// hint or a base marker, as the local backend lays out the keys of
// keys.go (each key a file path under the store's directory). It reads
// a bounded number of directory entries, so a store of any size costs
// the same, and it creates and changes nothing.
func IsLocalStore(dir string) bool {
	const sessionsRead, namesRead = 64, 8
	steps := filepath.Join(dir, filepath.FromSlash(stepsPrefix))
	f, err := os.Open(steps)
	if err != nil {
		return false
	}
	sessions, _ := f.ReadDir(sessionsRead)
	f.Close()
	for _, s := range sessions {
		if !s.IsDir() || ValidSession(s.Name()) != nil {
			continue
		}
		d, err := os.Open(filepath.Join(steps, s.Name()))
		if err != nil {
			continue
		}
		names, _ := d.Readdirnames(namesRead)
		d.Close()
		for _, n := range names {
			if _, ok := stepsKeySession(stepsPrefix + s.Name() + "/" + n); ok {
				return true
			}
		}
	}
	return false
}
