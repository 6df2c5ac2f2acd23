//go:build !linux

package runner

import "os/exec"

// guard leaves cmd as it is: without Linux's parent-death signal nothing
// would tell a guard that cairn run died.
func guard(*exec.Cmd, string, bool) {}

// GuardMain runs args as cairn run's command: only Linux starts a guard
// (see guard_linux.go); elsewhere it runs the command and returns its
// exit code.
func GuardMain(args []string) int {
	if len(args) == 0 {
		return 127
	}
	cmd := exec.Command(args[0], args[1:]...)
	if err := cmd.Run(); err != nil {
		if cmd.ProcessState != nil {
			return cmd.ProcessState.ExitCode()
		}
		return 127
	}
	return 0
}
