package tree

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// BuildDir stores the directory tree at root through sink and returns the
// root ref. Regular files, executables, directories and symlinks are
// kept (a symlink as its target text); any other file type is an error.
func BuildDir(root string, sink Sink) (Ref, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return Ref{}, fmt.Errorf("read state directory: %w", err)
	}
	if !fi.IsDir() {
		return Ref{}, fmt.Errorf("read state directory %s: not a directory", root)
	}
	return buildDir(root, sink)
}

func buildDir(dir string, sink Sink) (Ref, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return Ref{}, fmt.Errorf("read state directory: %w", err)
	}
	sort.Slice(des, func(i, j int) bool { return des[i].Name() < des[j].Name() })
	node := &NodeData{Type: TypeDir, Entries: make([]Entry, 0, len(des))}
	for _, de := range des {
		name := de.Name()
		p := filepath.Join(dir, name)
		var e Entry
		e.Name = name
		switch t := de.Type(); {
		case t.IsDir():
			e.Mode = ModeDir
			e.Ref, err = buildDir(p, sink)
		case t&fs.ModeSymlink != 0:
			e.Mode = ModeSymlink
			var target string
			if target, err = os.Readlink(p); err == nil {
				e.Ref, err = leafRef(sink, []byte(target))
			}
		case t.IsRegular():
			info, ierr := de.Info()
			if ierr != nil {
				return Ref{}, fmt.Errorf("read state file %s: %w", p, ierr)
			}
			if info.Mode()&0o111 != 0 {
				e.Mode = ModeExec
			}
			e.Ref, err = buildFile(p, sink)
		default:
			return Ref{}, fmt.Errorf("read state directory: %s: unsupported file type %v", p, t)
		}
		if err != nil {
			return Ref{}, err
		}
		node.Entries = append(node.Entries, e)
	}
	return putNode(sink, node, int64(len(node.Entries)))
}

func buildFile(path string, sink Sink) (Ref, error) {
	f, err := os.Open(path)
	if err != nil {
		return Ref{}, fmt.Errorf("read state file: %w", err)
	}
	defer f.Close()
	ref, _, err := putStream(sink, f)
	if err != nil {
		return Ref{}, fmt.Errorf("read state file %s: %w", path, err)
	}
	return ref, nil
}

// ValidName reports whether name is acceptable as one directory entry
// read from a store: not empty, ".", "..", and free of '/', '\\' and NUL.
func ValidName(name string) error {
	if name == "" || name == "." || name == ".." || len(name) > MaxNameLen || strings.ContainsAny(name, "/\\\x00") {
		return fmt.Errorf("unsafe entry name %q", name)
	}
	return nil
}
