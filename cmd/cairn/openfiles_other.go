//go:build !unix

package main

// openFileLimit returns 0: this system sets no limit cairn can read on
// the files a process may have open.
func openFileLimit() uint64 { return 0 }
