package fs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/castest"
	"github.com/cairnlog/cairn/cas/fs"
)

// TestConformanceNamedTemp runs the conformance suite with conditional
// creates through a named temporary file, the path taken where unnamed
// files are not available.
func TestConformanceNamedTemp(t *testing.T) {
	defer fs.SetAnonFiles(false)()
	castest.Run(t, func(t *testing.T) cas.Store {
		s, err := fs.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestConditionalCreateNoTempName: on Linux a conditional create (every
// step object and pack) makes its file unnamed until it is durable, so
// it creates and removes no temporary name, and a crash in it leaves
// nothing behind. Either way the object is the same file.
func TestConditionalCreateNoTempName(t *testing.T) {
	ctx := context.Background()
	for _, anon := range []bool{true, false} {
		restore := fs.SetAnonFiles(anon)
		dir := t.TempDir()
		s, err := fs.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, "steps/a/1", []byte("one"), cas.PutOptions{IfAbsent: true}); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, "steps/a/1", []byte("two"), cas.PutOptions{IfAbsent: true}); !errors.Is(err, cas.ErrExists) {
			t.Fatalf("anon=%v: second conditional create: %v, want ErrExists", anon, err)
		}
		if got, err := s.Get(ctx, "steps/a/1", 0, -1); err != nil || string(got) != "one" {
			t.Fatalf("anon=%v: got %q, %v; want the first put's bytes", anon, got, err)
		}
		fi, err := os.Stat(filepath.Join(dir, "steps/a/1"))
		if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != 3 {
			t.Fatalf("anon=%v: object file %v, %v; want 3 bytes, mode 0600", anon, fi, err)
		}
		_, err = os.Stat(filepath.Join(dir, ".tmp"))
		if anon && runtime.GOOS == "linux" && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a conditional create made the temporary directory (stat: %v)", err)
		}
		if !anon && err != nil {
			t.Errorf("the named path made no temporary directory: %v", err)
		}
		restore()
	}
}
