//go:build unix

package fs_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/fs"
)

// The local store reads, writes and deletes only what is inside its
// directory, as files: a link, a pipe, a device or a directory standing
// where an object or a directory of its path belongs is refused as the
// store's damage, in words, and nothing it names is touched. Reads
// followed a link at a key: a link to another store's object with the
// same key read back as this store's own, valid data (I7); a link to a
// pipe hung the read; a link to /dev/zero read until memory ran out.

const linkedKey = "steps/a/00000000000000000003"

// twoStores returns an empty store, its root, and the root of another
// store that holds an object at linkedKey (and steps/a/…4 beside it).
func twoStores(t *testing.T) (*fs.Store, string, string) {
	t.Helper()
	ctx := context.Background()
	root, other := filepath.Join(t.TempDir(), "store"), filepath.Join(t.TempDir(), "other")
	o, err := fs.Open(other)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{linkedKey, "steps/a/00000000000000000004"} {
		if err := o.Put(ctx, k, []byte("the other store's "+k), cas.PutOptions{IfAbsent: true}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := fs.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "steps/a/00000000000000000001", []byte("own"), cas.PutOptions{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	return s, root, other
}

// within runs f, failing the test if it has not returned in 10 seconds
// (a read that waits on a pipe for a writer).
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not return in 10s", what)
	}
}

// wantDamage checks that err refuses op on key, saying that what stands
// where the object (or, if parent, a directory of its path) belongs.
func wantDamage(t *testing.T, op string, err error, what string, parent bool) {
	t.Helper()
	var re *cas.RefusedError
	var ne *cas.NotObjectError
	if !errors.As(err, &re) || !errors.As(err, &ne) || ne.What != what || ne.Parent != parent || errors.Is(err, cas.ErrNotFound) {
		t.Errorf("%s: %v; want the refusal %q (parent %v)", op, err, what+" stands where …", parent)
		return
	}
	if !strings.Contains(re.Why, what+" stands where") || !strings.Contains(re.Why, "remove it to repair") || strings.Contains(re.Why, "/") {
		t.Errorf("%s: refused with %q; want it in words, naming no path", op, re.Why)
	}
}

func TestReadsRefuseWhatIsNoFileAtAKey(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name, what string
		plant      func(t *testing.T, path, other string) error
	}{
		{"link to another store's object", "a link", func(t *testing.T, path, other string) error {
			return os.Symlink(filepath.Join(other, filepath.FromSlash(linkedKey)), path)
		}},
		{"link to a file outside", "a link", func(t *testing.T, path, other string) error {
			outside := filepath.Join(t.TempDir(), "passwd")
			if err := os.WriteFile(outside, []byte("root:x:0:0"), 0o644); err != nil {
				return err
			}
			return os.Symlink(outside, path)
		}},
		{"link to /dev/zero", "a link", func(t *testing.T, path, other string) error { return os.Symlink("/dev/zero", path) }},
		{"dangling link", "a link", func(t *testing.T, path, other string) error {
			return os.Symlink(filepath.Join(t.TempDir(), "gone"), path)
		}},
		{"link to a pipe", "a link", func(t *testing.T, path, other string) error {
			fifo := filepath.Join(t.TempDir(), "fifo")
			if err := syscall.Mkfifo(fifo, 0o644); err != nil {
				return err
			}
			return os.Symlink(fifo, path)
		}},
		{"pipe", "a pipe", func(t *testing.T, path, other string) error { return syscall.Mkfifo(path, 0o644) }},
		{"device", "a device", func(t *testing.T, path, other string) error {
			var st syscall.Stat_t
			if err := syscall.Stat("/dev/zero", &st); err != nil {
				return err
			}
			if err := syscall.Mknod(path, syscall.S_IFCHR|0o644, int(st.Rdev)); err != nil {
				t.Skip("cannot make a device node here:", err)
			}
			return nil
		}},
		{"directory", "a directory", func(t *testing.T, path, other string) error { return os.Mkdir(path, 0o755) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, root, other := twoStores(t)
			path := filepath.Join(root, filepath.FromSlash(linkedKey))
			if err := c.plant(t, path, other); err != nil {
				t.Skip("cannot plant it here:", err)
			}
			within(t, "get", func() {
				data, err := s.Get(ctx, linkedKey, 0, 1<<20)
				if len(data) > 0 {
					t.Errorf("get read %q through %s", data, c.what)
				}
				wantDamage(t, "get", err, c.what, false)
			})
			within(t, "stat", func() {
				_, err := s.Stat(ctx, linkedKey)
				wantDamage(t, "stat", err, c.what, false)
			})
			within(t, "put", func() {
				for _, opts := range []cas.PutOptions{{IfAbsent: true}, {}} {
					err := s.Put(ctx, linkedKey, []byte("new"), opts)
					wantDamage(t, "put", err, c.what, false)
					if !cas.IsNotStored(err) {
						t.Errorf("put (if absent %v): %v; want it known to have stored nothing", opts.IfAbsent, err)
					}
				}
			})
			within(t, "list", func() {
				var got []cas.Info
				if err := s.List(ctx, "steps/a/", "", func(i cas.Info) error { got = append(got, i); return nil }); err != nil {
					t.Fatal(err)
				}
				if len(got) != 2 || got[0].NotObject != "" || got[1].Key != linkedKey || got[1].NotObject != c.what || got[1].Size != 0 {
					t.Errorf("list: %+v; want the object, then %s at %s", got, c.what, linkedKey)
				}
			})
			// The other store's object is as it was.
			if data, err := os.ReadFile(filepath.Join(other, filepath.FromSlash(linkedKey))); err != nil || !bytes.HasPrefix(data, []byte("the other store's")) {
				t.Errorf("the other store's object: %q, %v", data, err)
			}
		})
	}
}

// TestDeleteRemovesTheLinkNotItsTarget: a delete of a key where a link
// stands removes the link; a directory there is refused, not removed.
func TestDeleteRemovesTheLinkNotItsTarget(t *testing.T) {
	ctx := context.Background()
	s, root, other := twoStores(t)
	target := filepath.Join(other, filepath.FromSlash(linkedKey))
	path := filepath.Join(root, filepath.FromSlash(linkedKey))
	if err := os.Symlink(target, path); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := s.Delete(ctx, linkedKey); err != nil {
		t.Fatalf("delete of a link: %v", err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the link is still there: %v", err)
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("the link's target was removed: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(path, "inside"), 0o755); err != nil {
		t.Fatal(err)
	}
	wantDamage(t, "delete", s.Delete(ctx, linkedKey), "a directory", false)
	if _, err := os.Stat(filepath.Join(path, "inside")); err != nil {
		t.Errorf("the directory was removed: %v", err)
	}
}

// TestLinkedDirectoryInsideTheStore: a link standing where one of the
// store's own directories belongs (steps/a, pointing at another store's
// steps/a) is not followed: its files are not read, listed, written or
// deleted through it.
func TestLinkedDirectoryInsideTheStore(t *testing.T) {
	ctx := context.Background()
	s, root, other := twoStores(t)
	if err := os.Rename(filepath.Join(root, "steps", "a"), filepath.Join(root, "steps", "mine")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(other, "steps", "a"), filepath.Join(root, "steps", "a")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	data, err := s.Get(ctx, linkedKey, 0, -1)
	if len(data) > 0 {
		t.Errorf("get read %q through a linked directory", data)
	}
	wantDamage(t, "get", err, "a link", true)
	_, err = s.Stat(ctx, linkedKey)
	wantDamage(t, "stat", err, "a link", true)
	for _, opts := range []cas.PutOptions{{IfAbsent: true}, {}} {
		err := s.Put(ctx, "steps/a/00000000000000000005", []byte("new"), opts)
		wantDamage(t, "put", err, "a link", true)
	}
	wantDamage(t, "delete", s.Delete(ctx, "steps/a/00000000000000000004"), "a link", true)
	err = s.List(ctx, "steps/a/", "", func(i cas.Info) error {
		t.Errorf("listed %+v through a linked directory", i)
		return nil
	})
	wantDamage(t, "list", err, "a link", true)
	var got []cas.Info
	if err := s.List(ctx, "", "", func(i cas.Info) error { got = append(got, i); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != (cas.Info{Key: "steps/a", NotObject: "a link"}) || got[1].Key != "steps/mine/00000000000000000001" {
		t.Errorf("list of the whole store: %+v; want the link at steps/a and the store's own object", got)
	}
	entries, err := os.ReadDir(filepath.Join(other, "steps", "a"))
	if err != nil || len(entries) != 2 {
		t.Errorf("the other store's steps/a now holds %v (%v); want its two objects only", entries, err)
	}
}

// TestTempDirLinkedElsewhere: a link standing where the store's
// temporary directory belongs is not written through, and CleanTemp,
// which Open runs, removes nothing through it.
func TestTempDirLinkedElsewhere(t *testing.T) {
	ctx := context.Background()
	root, elsewhere := t.TempDir(), t.TempDir()
	old := filepath.Join(elsewhere, "an old file of the user's")
	if err := os.WriteFile(old, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(old, long, long); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(root, ".tmp")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	s, err := fs.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := s.CleanTemp(time.Hour); n != 0 || err == nil {
		t.Errorf("CleanTemp through a linked temporary directory: removed %d, %v; want none removed, and an error", n, err)
	}
	if _, err := os.Stat(old); err != nil {
		t.Errorf("a file outside the store was removed: %v", err)
	}
	restore := fs.SetAnonFiles(false)
	defer restore()
	err = s.Put(ctx, "gc/state", []byte("x"), cas.PutOptions{})
	wantDamage(t, "put", err, "a link", false)
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 1 {
		t.Errorf("the put wrote outside the store: %v", entries)
	}
}

// TestStoreRootMayBeALink: the store's directory itself may be a link
// the user chose (~/store -> /mnt/big/store); only what is inside is
// held to being no link.
func TestStoreRootMayBeALink(t *testing.T) {
	ctx := context.Background()
	real, dir := t.TempDir(), t.TempDir()
	link := filepath.Join(dir, "store")
	if err := os.Symlink(real, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	s, err := fs.Open(link)
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []cas.PutOptions{{IfAbsent: true}, {}} {
		key := "steps/a/0000000000000000000" + map[bool]string{true: "1", false: "2"}[opts.IfAbsent]
		if err := s.Put(ctx, key, []byte("x"), opts); err != nil {
			t.Fatal(err)
		}
		if data, err := s.Get(ctx, key, 0, -1); err != nil || string(data) != "x" {
			t.Errorf("get %s: %q, %v", key, data, err)
		}
		if _, err := s.Stat(ctx, key); err != nil {
			t.Error(err)
		}
	}
	if got := listKeys(t, s, "", ""); len(got) != 2 {
		t.Errorf("list: %q", got)
	}
	if err := s.Delete(ctx, "steps/a/00000000000000000001"); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(real, "steps", "a", "00000000000000000002")); err != nil {
		t.Error(err)
	}
}
