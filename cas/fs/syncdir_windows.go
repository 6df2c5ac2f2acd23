package fs

// syncDir does nothing on Windows, which cannot fsync a directory:
// FlushFileBuffers wants a handle opened for writing, which a directory
// refuses ("Access is denied"; os.File.Sync on an opened directory fails
// so), and flushing is not defined for directories at all. The file's
// own bytes were flushed before its rename or link; the name itself is
// in NTFS's metadata journal, so a crash recovers to the state before or
// after the rename or link, never a torn object, though a name made in
// the last moments before a power loss may be missing.
func syncDir(dir string) error { return nil }
