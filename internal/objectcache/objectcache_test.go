package objectcache

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestKeepObjectDrop(t *testing.T) {
	dir := t.TempDir()
	c := New(dir, "/stores/a")
	data := []byte("object bytes")
	c.Keep("steps/s/1", data)
	if got := c.Object("steps/s/1"); !bytes.Equal(got, data) {
		t.Fatalf("Object = %q, want %q", got, data)
	}
	if got := c.Object("steps/s/2"); got != nil {
		t.Fatalf("Object of a key never kept = %q", got)
	}
	c.Drop("steps/s/1")
	if got := c.Object("steps/s/1"); got != nil {
		t.Fatalf("Object after Drop = %q", got)
	}
	c.Keep("big", make([]byte, MaxObject+1))
	if got := c.Object("big"); got != nil {
		t.Fatal("an object over MaxObject was kept")
	}
}

// TestBadFilesIgnored: a truncated or flipped file, or the file of
// another store's object put at this one's name, reads as no copy.
func TestBadFilesIgnored(t *testing.T) {
	dir := t.TempDir()
	a, b := New(dir, "/stores/a"), New(dir, "/stores/b")
	a.Keep("k", []byte("from a"))
	b.Keep("k", []byte("from b"))
	pa, pb := a.path(a.key("k")), b.path(b.key("k"))
	good, err := os.ReadFile(pa)
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string][]byte{
		"truncated": good[:len(good)-1],
		"flipped":   append(append([]byte(nil), good[:8]...), append([]byte{good[8] ^ 1}, good[9:]...)...),
		"empty":     nil,
	} {
		if err := os.WriteFile(pa, bad, 0o600); err != nil {
			t.Fatal(err)
		}
		if got := a.Object("k"); got != nil {
			t.Errorf("%s file: Object = %q, want nil", name, got)
		}
	}
	foreign, err := os.ReadFile(pb)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pa, foreign, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := a.Object("k"); got != nil {
		t.Errorf("another store's file: Object = %q, want nil", got)
	}
	if got := b.Object("k"); string(got) != "from b" {
		t.Errorf("b's own copy = %q", got)
	}
	if matches, _ := filepath.Glob(filepath.Join(dir, "*.tmp*")); len(matches) != 0 {
		t.Errorf("temporary files left: %v", matches)
	}
}

// FuzzDecode: decode never panics on any file, and what it accepts is
// exactly what encode writes.
func FuzzDecode(f *testing.F) {
	f.Add(encode("cairn object\x00/s\x00steps/s/1", []byte("data")))
	f.Add([]byte("CROC\x01"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		key, data, ok := decode(raw)
		if ok && !bytes.Equal(encode(key, data), raw) {
			t.Fatalf("decode accepted a file encode would not write")
		}
	})
}

// TestKeepInPlace: Keep writes the file itself, no temporary one: into a
// directory it creates, and over an old file of any length (a torn copy,
// or another object's bytes left at the name), which it replaces whole.
func TestKeepInPlace(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "objects")
	c := New(dir, "/stores/a")
	path := c.path(c.key("k"))
	c.Keep("k", []byte("first"))
	if got := c.Object("k"); string(got) != "first" {
		t.Fatalf("Object in a new directory = %q", got)
	}
	long := append(encode(c.key("k"), bytes.Repeat([]byte("x"), 4096)), 1, 2, 3)
	for name, old := range map[string][]byte{"longer": long, "torn": long[:100]} {
		if err := os.WriteFile(path, old, 0o600); err != nil {
			t.Fatal(err)
		}
		if got := c.Object("k"); got != nil {
			t.Errorf("%s file: Object = %q, want nil", name, got)
		}
		c.Keep("k", []byte("again"))
		if got := c.Object("k"); string(got) != "again" {
			t.Errorf("Keep over a %s file: Object = %q", name, got)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("directory holds %d entries", len(ents))
	}
}
