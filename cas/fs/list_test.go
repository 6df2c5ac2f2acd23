package fs_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/fs"
)

// listKeys returns the keys List gives for prefix after startAfter.
func listKeys(t testing.TB, s *fs.Store, prefix, startAfter string) []string {
	t.Helper()
	var keys []string
	if err := s.List(context.Background(), prefix, startAfter, func(i cas.Info) error {
		keys = append(keys, i.Key)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestListOrderAndStartAfter: keys come in byte order whatever the
// directories they sit in ("a-b" sorts before "a/x", since '-' < '/'),
// and start-after skips whole directories without losing a key past it.
func TestListOrderAndStartAfter(t *testing.T) {
	ctx := context.Background()
	s, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	all := []string{"a-b", "a/x", "a/y/z", "a0", "b/c/d", "b/c/e", "b/d", "bc", "steps/s/0001", "steps/s/0002", "steps/s/0010", "steps/s2/0001", "steps/t"}
	for _, k := range all {
		if err := s.Put(ctx, k, []byte(k), cas.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want := slices.Clone(all)
	slices.Sort(want)
	cases := []struct{ prefix, after string }{
		{"", ""}, {"", "a"}, {"", "a-b"}, {"", "a/"}, {"", "a/x"}, {"", "a/y"}, {"", "a/y/z"}, {"", "a0"},
		{"", "b/c"}, {"", "b/c/d"}, {"", "b/c/z"}, {"", "b/d"}, {"", "zzz"},
		{"a", ""}, {"a/", ""}, {"a/", "a/x"}, {"b/c", "b/c/d"},
		{"steps/s/", ""}, {"steps/s/", "steps/s/0001"}, {"steps/s/", "steps/s/0002"}, {"steps/s/", "steps/s/0010"},
		{"steps/s", "steps/s/0002"}, {"steps/", "steps/s/0010"}, {"steps/s/00", "steps/s/0001"}, {"missing/", ""},
	}
	for _, c := range cases {
		var exp []string
		for _, k := range want {
			if len(k) >= len(c.prefix) && k[:len(c.prefix)] == c.prefix && k > c.after {
				exp = append(exp, k)
			}
		}
		if got := listKeys(t, s, c.prefix, c.after); !slices.Equal(got, exp) {
			t.Errorf("List(%q, after %q) = %q, want %q", c.prefix, c.after, got, exp)
		}
	}
}

// TestListUnderAFile: a file where a directory of a listing's prefix
// belongs ("steps/t" listed as "steps/t/") is the store's damage, said
// as what stands there (cas.NotObjectError, Parent), never an empty
// listing: no key under it can be written while it stands, and a caller
// told "none" would take the keys it hides for gone (gc, the steps of a
// session whose directory a file replaced). A listing that only passes
// by the file lists it as the key it is.
func TestListUnderAFile(t *testing.T) {
	ctx := context.Background()
	s, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a-b", "steps/t"} {
		if err := s.Put(ctx, k, []byte(k), cas.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, prefix := range []string{"a-b/", "a-b/x", "steps/t/", "steps/t/000", "steps/t/x/"} {
		err := s.List(ctx, prefix, "", func(i cas.Info) error { return fmt.Errorf("listed %s", i.Key) })
		var ne *cas.NotObjectError
		if !errors.As(err, &ne) || ne.What != "a file" || !ne.Parent || ne.Key != prefix {
			t.Errorf("List(%q) = %v; want a file standing where a directory of %q belongs", prefix, err, prefix)
		}
	}
	if got := listKeys(t, s, "steps/", ""); !slices.Equal(got, []string{"steps/t"}) {
		t.Errorf("List(steps/) = %q, want the file's key", got)
	}
}

// BenchmarkListStartAfter lists the last few steps of a session of
// 100,000 steps after a key near its end, as a resume's head discovery
// does after reading the head hint: the cost should be what it returns,
// not the whole directory sorted and stat'ed.
func BenchmarkListStartAfter(b *testing.B) {
	const steps = 100_000
	dir := b.TempDir()
	sd := filepath.Join(dir, "steps", "s")
	if err := os.MkdirAll(sd, 0o755); err != nil {
		b.Fatal(err)
	}
	for n := 1; n <= steps; n++ {
		if err := os.WriteFile(filepath.Join(sd, fmt.Sprintf("%020d", n)), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	s, err := fs.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	after := fmt.Sprintf("steps/s/%020d", steps-32)
	b.ResetTimer()
	for b.Loop() {
		if got := listKeys(b, s, "steps/s/", after); len(got) != 32 {
			b.Fatalf("listed %d keys, want 32", len(got))
		}
	}
}

// TestListAfterRecentKeyAllocatesPerKeptName: a resume's head discovery
// lists a session's steps after its head hint, and a long session is one
// directory of a step object per step. The listing must cost the names
// it keeps, not an allocation for each of the names it passes over.
func TestListAfterRecentKeyAllocatesPerKeptName(t *testing.T) {
	root := t.TempDir()
	d := filepath.Join(root, "steps", "s")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	const names = 5000
	for i := 1; i <= names; i++ {
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("%020d", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := fs.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	after := fmt.Sprintf("steps/s/%020d", names-3)
	if got := listKeys(t, s, "steps/s/", after); len(got) != 3 {
		t.Fatalf("listed %v after %s, want the last 3 steps", got, after)
	}
	allocs := testing.AllocsPerRun(5, func() { listKeys(t, s, "steps/s/", after) })
	if allocs > names/10 {
		t.Errorf("listing 3 keys after a recent one among %d made %.0f allocations; want a few for each key kept, none for the names passed over", names, allocs)
	}
}

// TestGetUnderAFile: a file where a directory of a key's path belongs
// is the store's damage to a Get and a Stat of the key, said as what
// stands there and where (the directory's prefix, as a listing beneath
// it says: TestListUnderAFile), never "not found": a reader told so
// would call a step the file hides lost.
func TestGetUnderAFile(t *testing.T) {
	ctx := context.Background()
	s, err := fs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "steps/t", []byte("x"), cas.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"steps/t/00000000000000000001", "steps/t/x/y"} {
		_, gerr := s.Get(ctx, key, 0, -1)
		_, serr := s.Stat(ctx, key)
		for _, err := range []error{gerr, serr} {
			var ne *cas.NotObjectError
			if !errors.As(err, &ne) || ne.What != "a file" || !ne.Parent || ne.Key != "steps/t/" || errors.Is(err, cas.ErrNotFound) {
				t.Errorf("read of %s: %v; want a file standing where the directory steps/t/ belongs", key, err)
			}
		}
	}
	if _, err := s.Get(ctx, "steps/u/00000000000000000001", 0, -1); !errors.Is(err, cas.ErrNotFound) {
		t.Errorf("get beside the file: %v; want not found", err)
	}
}
