package fs

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"unsafe"

	"github.com/cairnlog/cairn/cas"
)

// oTmpfile is O_TMPFILE (with the O_DIRECTORY it implies), which package
// syscall does not define.
const oTmpfile = 0o20000000 | syscall.O_DIRECTORY

// atFDCWD is AT_FDCWD, which package syscall does not define.
const atFDCWD = -100

// createAnon makes data durable as the new file name in d: an unnamed
// file written and fsync'd, then linked to name, then d fsync'd. The
// name appears only once the bytes are durable; a crash before that
// leaves nothing. It fails with an error wrapping fs.ErrExist if dst
// exists, and with errNoAnon, having created nothing, where the kernel
// or the file system cannot make unnamed files or link them by
// /proc/self/fd.
func createAnon(d *dir, name string, data []byte) error {
	if !anonFiles {
		return errNoAnon
	}
	fd, err := openNoIntr(d.fd, ".", oTmpfile|syscall.O_WRONLY|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		// EISDIR: a kernel older than O_TMPFILE; EOPNOTSUPP: a file
		// system without it; others: let the named path try and report.
		return errNoAnon
	}
	dst := d.path + string(os.PathSeparator) + name
	f := os.NewFile(uintptr(fd), dst)
	defer f.Close()
	// Until the link, the file has no name: a failure leaves nothing.
	if _, err := f.Write(data); err != nil {
		return cas.NotStored(err)
	}
	if err := f.Sync(); err != nil {
		return cas.NotStored(err)
	}
	if err := linkFD(fd, d.fd, name); err != nil {
		// EEXIST, the key taken, reads as fs.ErrExist through the
		// LinkError.
		if errors.Is(err, syscall.ENOENT) {
			// No /proc, or the directory went away: the named path
			// will try again and say which.
			return errNoAnon
		}
		return cas.NotStored(&os.LinkError{Op: "link", Old: "(unnamed)", New: dst, Err: err})
	}
	if err := d.sync(); err != nil {
		return fmt.Errorf("sync dir: %w", err)
	}
	return nil
}

// linkFD gives the open unnamed file fd the name name in the directory
// dfd: linkat(AT_FDCWD, "/proc/self/fd/N", dfd, name, AT_SYMLINK_FOLLOW),
// which unlike AT_EMPTY_PATH needs no privilege.
func linkFD(fd, dfd int, name string) error {
	old, err := syscall.BytePtrFromString("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return err
	}
	nw, err := syscall.BytePtrFromString(name)
	if err != nil {
		return err
	}
	const atSymlinkFollow = 0x400
	cwd := atFDCWD
	for {
		_, _, e := syscall.Syscall6(syscall.SYS_LINKAT, uintptr(cwd), uintptr(unsafe.Pointer(old)),
			uintptr(dfd), uintptr(unsafe.Pointer(nw)), atSymlinkFollow, 0)
		switch e {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		default:
			return e
		}
	}
}
