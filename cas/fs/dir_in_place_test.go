package fs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/fs"
)

// TestPutOverDirectoryRefused: a directory standing where an object's
// file belongs (an operator's mistake, a damaged store) makes a put fail
// as a refusal in words, which the layers above say as "the store …
// refused the request: a directory stands where the object's file
// belongs …: gc's saved state was not written". It failed with the
// rename's text, "put gc/state: rename /…/.tmp/put-123 /…/gc/state: file
// exists", naming the temporary file and the key.
func TestPutOverDirectoryRefused(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s, err := fs.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "gc", "state"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = s.Put(ctx, "gc/state", []byte("x"), cas.PutOptions{})
	var re *cas.RefusedError
	if !errors.As(err, &re) || !strings.Contains(re.Why, "a directory stands where the object's file belongs") ||
		strings.Contains(re.Why, root) || !cas.IsNotStored(err) {
		t.Errorf("put over a directory: %v; want a refusal in words, naming no path, that stored nothing", err)
	}
}

// TestCreateOverDirectoryRefused: a conditional create of a key where a
// directory stands is refused in words, not lost as to another writer:
// a commit whose step slot held a directory said "conflict on a@40:
// another writer already wrote this step" (exit 3) at every try.
func TestCreateOverDirectoryRefused(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s, err := fs.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	key := "steps/a/00000000000000000040"
	if err := os.MkdirAll(filepath.Join(root, filepath.FromSlash(key)), 0o755); err != nil {
		t.Fatal(err)
	}
	err = s.Put(ctx, key, []byte("x"), cas.PutOptions{IfAbsent: true})
	var re *cas.RefusedError
	if errors.Is(err, cas.ErrExists) || !errors.As(err, &re) || !strings.Contains(re.Why, "a directory stands where") || !cas.IsNotStored(err) {
		t.Errorf("conditional create over a directory: %v; want a refusal in words that stored nothing, not ErrExists", err)
	}
}

// TestCreateOverLinkRefused: a symbolic link in a step's slot, which
// List does not list, so that the session's head is the step below it,
// is refused as a directory is; commits lost to it as a conflict at
// every try.
func TestCreateOverLinkRefused(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	s, err := fs.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "steps/a/00000000000000000039", []byte("x"), cas.PutOptions{IfAbsent: true}); err != nil {
		t.Fatal(err)
	}
	key := "steps/a/00000000000000000040"
	if err := os.Symlink(filepath.Join(root, "steps", "a", "00000000000000000039"), filepath.Join(root, filepath.FromSlash(key))); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	err = s.Put(ctx, key, []byte("x"), cas.PutOptions{IfAbsent: true})
	var re *cas.RefusedError
	if errors.Is(err, cas.ErrExists) || !errors.As(err, &re) || !strings.Contains(re.Why, "a link stands where") {
		t.Errorf("conditional create over a link: %v; want a refusal in words, not ErrExists", err)
	}
}
