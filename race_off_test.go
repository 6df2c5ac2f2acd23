//go:build !race

package cairn_test

// raceEnabled reports a build with the race detector, which multiplies
// a process's memory: tests that bound memory skip their bound.
const raceEnabled = false
