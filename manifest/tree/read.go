package tree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/internal/targetdir"
)

// Source returns the raw bytes of a blob or node by id, verified.
type Source interface {
	Blob(ctx context.Context, id cas.ID) ([]byte, error)
}

// BlobChecker is a Source that can say, without reading a blob, the
// error on a read limit of its own (the size of the object holding the
// blob) that Blob would fail with: CheckJSON and CheckCheckout ask it of
// every blob they count, so that such a limit too stops a show or
// checkout before it writes anything.
type BlobChecker interface {
	CheckBlob(ctx context.Context, id cas.ID) error
}

// Limits bound what a reader will produce from stored bytes.
type Limits struct {
	MaxDepth int   // nesting of nodes
	MaxBytes int64 // total bytes of one materialised value or file
	// MaxTotal bounds the bytes of every value and file one Reader
	// writes, together: a whole checkout or show, however many files
	// name the same content.
	MaxTotal int64
}

// DefaultLimits are the limits used when none are given.
var DefaultLimits = Limits{MaxDepth: MaxDepth + 16, MaxBytes: 64 << 30, MaxTotal: 64 << 30}

// ErrLimit reports content beyond a reader limit.
var ErrLimit = errors.New("limit exceeded")

// ErrUnsafeLink reports a symlink in a directory state whose target is
// absolute or leaves the directory: a checkout would refuse to write
// it, so a commit refuses to store it.
var ErrUnsafeLink = errors.New("symlink leads outside the directory")

// ErrUnsafeName reports an entry of a directory a commit reads whose
// name a reader refuses (ValidName: on Unix, one holding a backslash):
// a checkout could not write it, so a commit refuses to store it.
var ErrUnsafeName = errors.New("a name holding a backslash, which a directory state cannot hold (checkout refuses it)")

// ErrUnsupportedFile reports an entry of a directory state that is not a
// regular file, directory or symlink (a named pipe, socket or device): a
// state cannot hold it, so a commit refuses it.
var ErrUnsupportedFile = errors.New("a directory state holds only regular files, directories and symlinks")

// LimitError reports which limit content exceeded; it wraps ErrLimit.
type LimitError struct {
	// Limit names the limit: "MaxBytes" (one value or file),
	// "MaxTotal" (one reader's output), "MaxObjectBytes" (one object),
	// "MaxDepth" (nesting).
	Limit string
	Max   int64
	What  string // what exceeded it
	Unit  string // "" means bytes
}

func (e *LimitError) Error() string {
	unit := e.Unit
	if unit == "" {
		unit = "bytes"
	}
	return fmt.Sprintf("%s: %v: more than %d %s", e.What, ErrLimit, e.Max, unit)
}

// Unwrap makes errors.Is(err, ErrLimit) true.
func (e *LimitError) Unwrap() error { return ErrLimit }

// depthLimit is the error of a tree nested deeper than Limits.MaxDepth
// (max): a LimitError, so that it names the limit to raise, as the
// byte limits' errors do.
func depthLimit(what string, max int) error {
	return &LimitError{Limit: "MaxDepth", Max: int64(max), What: what, Unit: "levels"}
}

// Reader reads trees from a Source. One Reader is one operation: the
// bytes it writes count against Limits.MaxTotal together.
type Reader struct {
	Src    Source
	Limits Limits
	total  int64 // bytes written so far, for MaxTotal
	// measure makes the writes count leaves by their stored sizes
	// instead of reading and writing them: a walk of the nodes alone,
	// for CheckJSON and CheckCheckout.
	measure bool
}

func (r *Reader) limits() Limits {
	l := r.Limits
	if l.MaxDepth == 0 {
		l.MaxDepth = DefaultLimits.MaxDepth
	}
	if l.MaxBytes == 0 {
		l.MaxBytes = DefaultLimits.MaxBytes
	}
	if l.MaxTotal == 0 {
		l.MaxTotal = DefaultLimits.MaxTotal
	}
	return l
}

// Node reads and decodes the node ref points at.
func (r *Reader) Node(ctx context.Context, ref Ref) (*NodeData, error) {
	if ref.Kind != Node {
		return nil, fmt.Errorf("%w: expected a node, found a leaf", cas.ErrCorrupt)
	}
	b, err := r.Src.Blob(ctx, ref.ID)
	if err != nil {
		return nil, err
	}
	return DecodeNode(b, "node "+ref.ID.Short())
}

// leaf returns the bytes of an inline or blob ref.
func (r *Reader) leaf(ctx context.Context, ref Ref) ([]byte, error) {
	switch ref.Kind {
	case Inline:
		return ref.Data, nil
	case Blob:
		return r.Src.Blob(ctx, ref.ID)
	}
	return nil, fmt.Errorf("%w: expected a leaf, found a node", cas.ErrCorrupt)
}

// ListEntries returns the flattened entries of a list (array or chunk
// list) whose root is ref, checking that leaves have type leafType.
func (r *Reader) ListEntries(ctx context.Context, ref Ref, leafType byte) ([]Entry, error) {
	var out []Entry
	err := r.listWalk(ctx, ref, leafType, 0, func(e Entry) error { out = append(out, e); return nil })
	return out, err
}

func (r *Reader) listWalk(ctx context.Context, ref Ref, leafType byte, depth int, fn func(Entry) error) error {
	if depth > r.limits().MaxDepth {
		return depthLimit("list nesting", r.limits().MaxDepth)
	}
	n, err := r.Node(ctx, ref)
	if err != nil {
		return err
	}
	switch n.Type {
	case leafType:
		for _, e := range n.Entries {
			if err := fn(e); err != nil {
				return err
			}
		}
		return nil
	case TypeList:
		for _, e := range n.Entries {
			if err := r.listWalk(ctx, e.Ref, leafType, depth+1, fn); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("%w: node %s: type %q inside a list of %q", cas.ErrCorrupt, ref.ID.Short(), n.Type, leafType)
}

// countingWriter enforces MaxBytes on one value and MaxTotal on
// everything its reader writes.
type countingWriter struct {
	w     io.Writer
	n     int64
	max   int64
	total *int64
	limit int64 // MaxTotal
}

func (r *Reader) counting(w io.Writer) *countingWriter {
	l := r.limits()
	return &countingWriter{w: w, max: l.MaxBytes, total: &r.total, limit: l.MaxTotal}
}

func (c *countingWriter) Write(p []byte) (int, error) {
	if err := c.count(int64(len(p))); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// count adds n bytes to what was written, or fails if that is more
// than a limit allows.
func (c *countingWriter) count(n int64) error {
	if n > c.max-c.n {
		return &LimitError{Limit: "MaxBytes", Max: c.max, What: "one value or file"}
	}
	if n > c.limit-*c.total {
		return &LimitError{Limit: "MaxTotal", Max: c.limit, What: "all values and files of one read"}
	}
	c.n += n
	*c.total += n
	return nil
}

// writeLeaf writes the bytes of the inline or blob ref to w; measuring,
// it counts the bytes the ref says it holds, reading nothing.
func (r *Reader) writeLeaf(ctx context.Context, w *countingWriter, ref Ref) error {
	if r.measure {
		switch ref.Kind {
		case Inline:
			return w.count(int64(len(ref.Data)))
		case Blob:
			if ref.Size < 0 {
				return fmt.Errorf("%w: blob %s: negative size %d", cas.ErrCorrupt, ref.ID.Short(), ref.Size)
			}
			// The write reads the blob before it counts it: a limit
			// on that read (the object it is in) comes first.
			if c, ok := r.Src.(BlobChecker); ok {
				if err := c.CheckBlob(ctx, ref.ID); err != nil {
					return err
				}
			}
			return w.count(ref.Size)
		}
	}
	b, err := r.leaf(ctx, ref)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// measuring returns a reader of r's source and limits, whose bytes
// written so far are r's, that measures instead of writing.
func (r *Reader) measuring() *Reader {
	return &Reader{Src: r.Src, Limits: r.Limits, total: r.total, measure: true}
}

// CheckJSON reports the error WriteJSON of the value at ref would fail
// with on a limit of the reader (nesting, bytes of the value, bytes of
// the whole read), before anything is written: it reads the value's
// nodes, not its leaves, whose sizes the nodes state. A caller that must
// not write part of a value and then fail (cairn show into a file, a
// checkout) checks first; the check costs a second read of the nodes,
// a small part of a state, where buffering the value would cost its
// whole size in memory. What the check passes may still fail to be
// read (a lost or corrupt object, a leaf whose stored size lies).
func (r *Reader) CheckJSON(ctx context.Context, ref Ref) error {
	m := r.measuring()
	return m.writeJSON(ctx, m.counting(io.Discard), ref, 0)
}

// WriteJSON writes the compact JSON text of the value at ref to w.
func (r *Reader) WriteJSON(ctx context.Context, w io.Writer, ref Ref) error {
	return r.writeJSON(ctx, r.counting(w), ref, 0)
}

// JSON returns the compact JSON text of the value at ref.
func (r *Reader) JSON(ctx context.Context, ref Ref) ([]byte, error) {
	var buf bytes.Buffer
	err := r.WriteJSON(ctx, &buf, ref)
	return buf.Bytes(), err
}

func (r *Reader) writeJSON(ctx context.Context, w *countingWriter, ref Ref, depth int) error {
	if depth > r.limits().MaxDepth {
		return depthLimit("JSON nesting", r.limits().MaxDepth)
	}
	if ref.Kind != Node {
		return r.writeLeaf(ctx, w, ref)
	}
	n, err := r.Node(ctx, ref)
	if err != nil {
		return err
	}
	switch n.Type {
	case TypeObject:
		if _, err := w.Write([]byte{'{'}); err != nil {
			return err
		}
		for i, e := range n.Entries {
			if i > 0 {
				if _, err := w.Write([]byte{','}); err != nil {
					return err
				}
			}
			if _, err := io.WriteString(w, e.Name+":"); err != nil {
				return err
			}
			if err := r.writeJSON(ctx, w, e.Ref, depth+1); err != nil {
				return err
			}
		}
		_, err := w.Write([]byte{'}'})
		return err
	case TypeList:
		// A list node is the root of a long array or of a chunked string:
		// its leftmost leaf says which.
		leaf, err := r.leftmostLeaf(ctx, n, depth)
		if err != nil {
			return err
		}
		if leaf == TypeChunks {
			return r.writeChunks(ctx, w, ref)
		}
		fallthrough
	case TypeArray:
		if _, err := w.Write([]byte{'['}); err != nil {
			return err
		}
		i := 0
		err := r.listWalk(ctx, ref, TypeArray, depth, func(e Entry) error {
			if i > 0 {
				if _, err := w.Write([]byte{','}); err != nil {
					return err
				}
			}
			i++
			return r.writeJSON(ctx, w, e.Ref, depth+1)
		})
		if err != nil {
			return err
		}
		_, err = w.Write([]byte{']'})
		return err
	case TypeChunks:
		return r.writeChunks(ctx, w, ref)
	}
	return fmt.Errorf("%w: node %s: type %q in a JSON document", cas.ErrCorrupt, ref.ID.Short(), n.Type)
}

// leftmostLeaf returns the type of the first leaf under list node n.
func (r *Reader) leftmostLeaf(ctx context.Context, n *NodeData, depth int) (byte, error) {
	for n.Type == TypeList {
		if depth > r.limits().MaxDepth {
			return 0, depthLimit("list nesting", r.limits().MaxDepth)
		}
		if len(n.Entries) == 0 {
			return 0, fmt.Errorf("%w: empty list node", cas.ErrCorrupt)
		}
		var err error
		if n, err = r.Node(ctx, n.Entries[0].Ref); err != nil {
			return 0, err
		}
		depth++
	}
	return n.Type, nil
}

// WriteBytes writes the content of a file or chunked value to w.
func (r *Reader) WriteBytes(ctx context.Context, w io.Writer, ref Ref) error {
	cw := r.counting(w)
	if ref.Kind != Node {
		return r.writeLeaf(ctx, cw, ref)
	}
	return r.writeChunks(ctx, cw, ref)
}

func (r *Reader) writeChunks(ctx context.Context, w *countingWriter, ref Ref) error {
	return r.listWalk(ctx, ref, TypeChunks, 0, func(e Entry) error {
		return r.writeLeaf(ctx, w, e.Ref)
	})
}

// FileInfo describes one entry of a directory state.
type FileInfo struct {
	Path string // slash-separated, relative to the state root
	Mode byte
	Size int64 // bytes of a file, target length of a symlink
	Ref  Ref
}

// WalkDir calls fn for every entry below the directory node at ref, in
// path order, directories before their contents.
func (r *Reader) WalkDir(ctx context.Context, ref Ref, fn func(FileInfo) error) error {
	return r.walkDir(ctx, ref, "", 0, fn)
}

func (r *Reader) walkDir(ctx context.Context, ref Ref, prefix string, depth int, fn func(FileInfo) error) error {
	if depth > r.limits().MaxDepth {
		return depthLimit("directory nesting", r.limits().MaxDepth)
	}
	entries, err := r.dirEntries(ctx, ref, depth)
	if err != nil {
		return err
	}
	for _, e := range entries {
		p := path.Join(prefix, e.Name)
		size := e.Ref.Size
		if e.Ref.Kind == Inline {
			size = int64(len(e.Ref.Data))
		}
		if err := fn(FileInfo{Path: p, Mode: e.Mode, Size: size, Ref: e.Ref}); err != nil {
			return err
		}
		if e.Mode == ModeDir {
			if err := r.walkDir(ctx, e.Ref, p, depth+1, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// dirEntries returns the entries of the directory at ref: one directory
// node, or (manifest version 3 on) a list of directory leaves. Names must
// be safe and strictly increasing.
func (r *Reader) dirEntries(ctx context.Context, ref Ref, depth int) ([]Entry, error) {
	if ref.Kind != Node {
		return nil, fmt.Errorf("%w: directory is not a node", cas.ErrCorrupt)
	}
	var out []Entry
	err := r.listWalk(ctx, ref, TypeDir, depth, func(e Entry) error {
		last := ""
		if k := len(out); k > 0 {
			last = out[k-1].Name
		}
		if err := checkDirEntry(ref, e, last); err != nil {
			return err
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Checkout writes the directory state at ref into dir, which must be
// empty or absent. It refuses entries that would escape dir: unsafe
// names and symlinks whose target is absolute or leaves dir.
//
// A state beyond a limit of the reader writes nothing: CheckCheckout
// runs first. A checkout that fails part-way (a damaged object, a
// cancelled ctx, a full disk) removes what it wrote, and the
// directories it made for dir, so no file is left half-written.
func (r *Reader) Checkout(ctx context.Context, ref Ref, dir string) (err error) {
	if err := r.CheckCheckout(ctx, ref); err != nil {
		return err
	}
	unmake, err := targetdir.Make(dir)
	if err != nil {
		return fmt.Errorf("checkout: %w", err)
	}
	var made []string // entries of dir this checkout made
	defer func() {
		if err != nil {
			for _, p := range made {
				os.RemoveAll(p)
			}
			unmake()
		}
	}()
	return r.WalkDir(ctx, ref, func(fi FileInfo) error {
		target := filepath.Join(dir, filepath.FromSlash(fi.Path))
		top := !strings.Contains(fi.Path, "/")
		switch fi.Mode {
		case ModeDir:
			if err := os.Mkdir(target, 0o755); err != nil {
				return err
			}
			if top {
				made = append(made, target)
			}
			return nil
		case ModeSymlink:
			link, err := r.symlinkTarget(ctx, fi)
			if err != nil {
				return fmt.Errorf("checkout %s: %w", fi.Path, err)
			}
			if err := os.Symlink(link, target); err != nil {
				return err
			}
			if top {
				made = append(made, target)
			}
			return nil
		default:
			perm := os.FileMode(0o644)
			if fi.Mode == ModeExec {
				perm = 0o755
			}
			f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
			if err != nil {
				return fmt.Errorf("checkout: %w", err)
			}
			if top {
				made = append(made, target)
			}
			werr := r.WriteBytes(ctx, f, fi.Ref)
			cerr := f.Close()
			if werr != nil {
				return fmt.Errorf("checkout %s: %w", fi.Path, werr)
			}
			return cerr
		}
	})
}

// CheckoutJSON writes the JSON value at ref, as WriteJSON does and
// ended by a newline, into the new file name in dir, which must be
// empty or absent. A value beyond a limit of the reader writes nothing:
// CheckJSON runs first. One that fails part-way removes the file and
// the directories it made for dir, as Checkout does.
func (r *Reader) CheckoutJSON(ctx context.Context, ref Ref, dir, name string) (err error) {
	if err := r.CheckJSON(ctx, ref); err != nil {
		return err
	}
	unmake, err := targetdir.Make(dir)
	if err != nil {
		return err
	}
	target := filepath.Join(dir, name)
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		unmake()
		return err
	}
	err = r.WriteJSON(ctx, f, ref)
	if _, werr := f.Write([]byte("\n")); err == nil {
		err = werr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(target)
		unmake()
	}
	return err
}

// CheckCheckout reports the error Checkout of the directory state at
// ref would fail with on a limit of the reader (nesting, bytes of a
// file, bytes of every file together), before anything is written, as
// CheckJSON does for a value: it reads the state's nodes, not the
// files' contents.
func (r *Reader) CheckCheckout(ctx context.Context, ref Ref) error {
	m := r.measuring()
	return m.WalkDir(ctx, ref, func(fi FileInfo) error {
		if fi.Mode == ModeDir || fi.Mode == ModeSymlink {
			return nil
		}
		if err := m.WriteBytes(ctx, io.Discard, fi.Ref); err != nil {
			return fmt.Errorf("checkout %s: %w", fi.Path, err)
		}
		return nil
	})
}

// symlinkTarget reads the target of the symlink entry fi and checks
// that it stays inside the checkout root (SafeSymlink).
func (r *Reader) symlinkTarget(ctx context.Context, fi FileInfo) (string, error) {
	link, err := r.leaf(ctx, fi.Ref)
	if err != nil {
		return "", err
	}
	if err := SafeSymlink(fi.Path, string(link)); err != nil {
		return "", err
	}
	return string(link), nil
}

// CheckDir reports the first entry of the directory state at ref that
// Checkout would refuse to write: an unsafe name, a directory nested
// too deep, or a symlink escaping the root. It runs the very checks
// Checkout runs (verify calls it, so it checks everything a reader
// checks), without writing anything or reading file contents.
func (r *Reader) CheckDir(ctx context.Context, ref Ref) error {
	return r.WalkDir(ctx, ref, func(fi FileInfo) error {
		if fi.Mode != ModeSymlink {
			return nil
		}
		if _, err := r.symlinkTarget(ctx, fi); err != nil {
			return fmt.Errorf("%w: %s: %w", cas.ErrCorrupt, fi.Path, err)
		}
		return nil
	})
}

// SafeSymlink reports an error if a symlink at relative path p with the
// given target could point outside the checkout root. A target must be
// relative, may climb only with leading ".." components (a ".." after a
// name could climb out through another symlink), and must resolve inside
// the root. If every link obeys this, chains of links stay inside too.
func SafeSymlink(p, target string) error {
	if target == "" || path.IsAbs(target) || filepath.IsAbs(target) || strings.ContainsRune(target, 0) {
		return fmt.Errorf("symlink target %q is absolute or empty", target)
	}
	named := false
	for _, c := range strings.Split(target, "/") {
		switch c {
		case "..":
			if named {
				return fmt.Errorf("symlink target %q has '..' after a name", target)
			}
		case "", ".":
		default:
			named = true
		}
	}
	joined := path.Join(path.Dir(p), target)
	if joined == ".." || strings.HasPrefix(joined, "../") {
		return fmt.Errorf("symlink target %q leads outside the directory", target)
	}
	return nil
}

// Reachable calls fn for every blob and node id reachable from ref,
// parents before children. Shared subtrees are visited once.
func (r *Reader) Reachable(ctx context.Context, ref Ref, seen map[cas.ID]bool, fn func(id cas.ID, node bool) error) error {
	if ref.Kind == Inline || seen[ref.ID] {
		return nil
	}
	seen[ref.ID] = true
	if ref.Kind == Blob {
		return fn(ref.ID, false)
	}
	if err := fn(ref.ID, true); err != nil {
		return err
	}
	n, err := r.Node(ctx, ref)
	if err != nil {
		return err
	}
	for _, e := range n.Entries {
		if err := r.Reachable(ctx, e.Ref, seen, fn); err != nil {
			return err
		}
	}
	return nil
}
