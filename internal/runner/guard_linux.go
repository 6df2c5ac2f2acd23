package runner

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
)

// guard makes cmd, about to start in a process group of its own, run
// under the guard program (Config.Guard: the cairn binary, which calls
// GuardMain when GuardEnv is set). The guard leads the group and gets
// SIGUSR2 as its parent-death signal, so that when cairn run dies, even
// by SIGKILL, the whole group goes: the parent-death signal alone reaches
// only the command itself, and a wrapper (sh -c 'python agent.py') would
// leave the loop it started running on, committing beside the worker
// that resumed the session elsewhere.
func guard(cmd *exec.Cmd, program string, newGroup bool) {
	if program == "" || !newGroup || cmd.Err != nil {
		return
	}
	cmd.Path = program
	cmd.Args = append([]string{program}, cmd.Args...)
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, GuardEnv+"=1")
	cmd.SysProcAttr.Pdeathsig = syscall.SIGUSR2
}

// GuardMain runs args (a program and its arguments) as the guard of
// cairn run's command and returns the exit code to exit with: the
// command's, or, if a signal killed it, it re-raises that signal. On
// SIGUSR2, the parent-death signal cairn run started it with, it kills
// its process group (the command and everything it started, and itself).
// SIGTERM, SIGINT and SIGHUP, which reach the whole group, are the
// command's to act on: the guard waits on for it.
func GuardMain(args []string) int {
	died := make(chan os.Signal, 1)
	signal.Notify(died, syscall.SIGUSR2)
	// Caught, not ignored: the command starts with their defaults.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	// Had cairn run died before the handler was in place, SIGUSR2's
	// default action would have ended this process, the command unstarted.
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "cairn run: no command")
		return 127
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, GuardEnv+"=") })
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "cairn run: %v\n", err)
		return 127
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-died:
		syscall.Kill(0, syscall.SIGKILL)
		select {} // the kill includes this process
	case <-done:
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ok && ws.Signaled() {
		sig := ws.Signal()
		signal.Reset(sig)
		syscall.Kill(os.Getpid(), sig)
		time.Sleep(100 * time.Millisecond) // a signal whose default is not to end the process ends here
		return 128 + int(sig)
	}
	return cmd.ProcessState.ExitCode()
}
