package fs

// SetAnonFiles turns the unnamed-file path of conditional creates on or
// off and returns a func that restores it.
func SetAnonFiles(on bool) (restore func()) {
	was := anonFiles
	anonFiles = on
	return func() { anonFiles = was }
}
