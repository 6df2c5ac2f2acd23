package export

import "github.com/cairnlog/cairn"

// SetHoldForTest makes the Parquet export hold at most steps steps and
// bytes bytes of a trajectory, in row groups of rowsPerGroup rows (0:
// as is), until the returned function restores them.
func SetHoldForTest(steps int, bytes int64, group int) (restore func()) {
	s, b, g := holdSteps, holdBytes, rowsPerGroup
	holdSteps, holdBytes = steps, bytes
	if group > 0 {
		rowsPerGroup = group
	}
	return func() { holdSteps, holdBytes, rowsPerGroup = s, b, g }
}

// SetRereadRunForTest calls fn with the head of a path too long to hold
// before each run of it is read again, until restore.
func SetRereadRunForTest(fn func(h *cairn.Step)) (restore func()) {
	rereadRun = fn
	return func() { rereadRun = nil }
}

// SetLineMemForTest makes Options.WholeLines hold at most n bytes of a
// line in memory, the rest in a temporary file, until restore.
func SetLineMemForTest(n int) (restore func()) {
	old := lineMemBytes
	lineMemBytes = n
	return func() { lineMemBytes = old }
}
