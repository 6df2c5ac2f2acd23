package fs

// SetAnonFiles turns the unnamed-file path of conditional creates on or
// off and returns a func that restores it.
func SetAnonFiles(on bool) (restore func()) {
	was := anonFiles
	anonFiles = on
	return func() { anonFiles = was }
}

// Refusal is refusal, for tests: the system's refusals are not to be had
// on demand (root is refused nothing, and a full disk is hard to make).
var Refusal = refusal
