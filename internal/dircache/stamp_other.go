//go:build !(linux || freebsd || openbsd)

package dircache

import (
	"os"

	"github.com/cairnlog/cairn/internal/cachedir"
)

// stampNow returns the filesystem's current time in ns: the mtime of a
// temporary file created beside path for the purpose.
func stampNow(_ *os.File, path string) (int64, error) {
	tmp, err := cachedir.CreateTemp(path)
	if err != nil {
		return 0, err
	}
	defer cachedir.Discard(tmp)
	fi, err := tmp.Stat()
	if err != nil {
		return 0, err
	}
	return fi.ModTime().UnixNano(), nil
}
