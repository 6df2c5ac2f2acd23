// Package realpath says where a path the user gave really lies, and
// whether it lies inside a directory: the one answer that the checks
// "is --dir inside the store", "does --dir hold the store", "is --out
// inside the store" and the key of cairn run's work-directory records
// share.
//
// A path is taken as the system would take it when a command later
// creates it (os.MkdirAll, os.Create): relative to the current
// directory; the symbolic links of its longest existing prefix followed,
// a link to nothing included (a write through it lands at its target);
// ".." applied after the link before it is followed, as the kernel does,
// not by cleaning the text; the rest, which does not exist yet, taken
// as written. Two paths are then compared component by component, so
// /a/bc is not inside /a/b, and case-insensitively on Windows and macOS,
// whose usual file systems are: when in doubt, a path is said to be
// inside, which each caller refuses.
package realpath

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// maxLinks bounds the symbolic links followed in one path (a loop of
// links), as the kernel's ELOOP does.
const maxLinks = 255

// foldCase says names differing only in case are one name: the usual
// file systems of Windows and macOS.
var foldCase = runtime.GOOS == "windows" || runtime.GOOS == "darwin"

// Resolve returns p absolute and clean, with every symbolic link along
// its existing part followed: where a file created at p would be. It
// fails only for an empty p, or a relative p when the current directory
// is unknown.
func Resolve(p string) (string, error) {
	if p == "" {
		return "", errors.New("resolve path: empty path")
	}
	abs, err := absolute(p)
	if err != nil {
		return "", err
	}
	vol := filepath.VolumeName(abs)
	rest := split(abs[len(vol):])
	cur := vol + string(filepath.Separator) // exists, no links in it
	var missing []string                    // below cur, absent
	links := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch {
		case c == ".":
			continue
		case c == "..":
			if len(missing) > 0 {
				missing = missing[:len(missing)-1]
			} else {
				cur = filepath.Dir(cur)
			}
			continue
		case len(missing) > 0:
			missing = append(missing, c)
			continue
		}
		next := filepath.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			if err != nil { // absent (or unreadable): created as written
				missing = append(missing, c)
			} else {
				cur = next
			}
			continue
		}
		target, err := os.Readlink(next)
		if links++; err != nil || links > maxLinks {
			// A loop, or a link that cannot be read: the rest as
			// written, under the link itself.
			missing = append(missing, c)
			continue
		}
		if v := filepath.VolumeName(target); v != "" || filepath.IsAbs(target) || (len(target) > 0 && os.IsPathSeparator(target[0])) {
			if v == "" {
				v = vol
			}
			cur, target = v+string(filepath.Separator), target[len(filepath.VolumeName(target)):]
		}
		rest = append(split(target), rest...)
	}
	return filepath.Join(append([]string{cur}, missing...)...), nil
}

// Within reports whether p is dir or lies inside it, both as Resolve
// takes them. A path that cannot be resolved is inside nothing.
func Within(p, dir string) bool {
	rp, err := Resolve(p)
	if err != nil {
		return false
	}
	rd, err := Resolve(dir)
	if err != nil {
		return false
	}
	vp, vd := filepath.VolumeName(rp), filepath.VolumeName(rd)
	if !sameName(vp, vd) {
		return false
	}
	cp, cd := split(rp[len(vp):]), split(rd[len(vd):])
	if len(cd) > len(cp) {
		return false
	}
	for i, name := range cd {
		if !sameName(name, cp[i]) {
			return false
		}
	}
	return true
}

// absolute returns p joined to the current directory if it is
// relative, without cleaning it: a ".." must be applied after the link
// before it is followed, not to the text.
func absolute(p string) (string, error) {
	if filepath.IsAbs(p) {
		return p, nil
	}
	if filepath.VolumeName(p) != "" || os.IsPathSeparator(p[0]) {
		// Windows: \x (the current drive) or C:x (that drive's
		// current directory), which only the system can complete.
		return filepath.Abs(p)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return wd + string(filepath.Separator) + p, nil
}

// split returns the names in p, without empty ones (doubled or
// trailing separators).
func split(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r < 0x80 && os.IsPathSeparator(uint8(r)) })
}

func sameName(a, b string) bool {
	if foldCase {
		return strings.EqualFold(a, b)
	}
	return a == b
}
