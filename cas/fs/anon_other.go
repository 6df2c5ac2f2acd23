//go:build !linux

package fs

// createAnon is Linux only: elsewhere a conditional create goes through
// a named temporary file.
func createAnon(d *dir, name string, data []byte) error { return errNoAnon }
