// Package dirent reads a directory's entries raw, through getdents, for
// the two listings that see the most names: the local store's listing of
// a session's step objects (100,000 names for a long session, of which it
// keeps a handful) and the scan of a directory state. Names are handed
// over as views of a reused buffer, so a name the caller passes over
// costs no allocation. The reader is Linux's alone; elsewhere callers
// use os.ReadDir.
package dirent
