//go:build !linux

package fs

// eachEntry calls fn with each entry of d, in directory order: its name
// and whether it is a directory (a link is not).
func (d *dir) eachEntry(fn func(name []byte, isDir bool) error) error {
	entries, err := d.readDir()
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := fn([]byte(e.Name()), e.IsDir()); err != nil {
			return err
		}
	}
	return nil
}
