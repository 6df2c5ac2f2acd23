package main

import (
	"errors"
	"io/fs"
	"os"
)

// Checks of the paths a user names in flags: a path that cannot serve is
// bad input (exit 2), said in the flag's words before any work is done.

// pathProblem is err without the path (the message names the flag and
// the path itself).
func pathProblem(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// readInputFile reads the file a flag names; a file that cannot be read
// is a usage error.
func readInputFile(flagName, path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("%s %s: %v", flagName, path, pathProblem(err))
	}
	return b, nil
}

// checkInputDir checks that the directory a flag names exists.
func checkInputDir(flagName, dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return usagef("%s %s: %v", flagName, dir, pathProblem(err))
	}
	if !fi.IsDir() {
		return usagef("%s %s: not a directory", flagName, dir)
	}
	return nil
}

// checkOutputDir checks that the directory a flag names is absent or an
// empty directory, as a command that writes into it needs.
func checkOutputDir(flagName, dir string) error {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if _, lerr := os.Lstat(dir); lerr == nil {
			return usagef("%s %s: a symlink to nothing", flagName, dir)
		}
		return nil
	}
	if err != nil {
		return usagef("%s %s: %v", flagName, dir, pathProblem(err))
	}
	if !fi.IsDir() {
		return usagef("%s %s: not a directory", flagName, dir)
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		return usagef("%s %s: %v", flagName, dir, pathProblem(err))
	}
	if len(des) > 0 {
		return usagef("%s %s is not empty (give an empty or new directory)", flagName, dir)
	}
	return nil
}
