package export

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
