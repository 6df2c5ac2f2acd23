package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const audit2Rec = `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]}`

// audit2Store is a store with one conversational session "a" of two steps.
func audit2Store(t *testing.T) string {
	t.Helper()
	store := t.TempDir()
	for i := 0; i < 2; i++ {
		if _, errs, code := cli(t, store, `{"n":1}`, "commit", "a", "-", "--record", audit2Rec); code != 0 {
			t.Fatalf("commit: %s", errs)
		}
	}
	return store
}

// Paths that cannot serve are refused before any work, as bad input
// naming the path as given, and nothing is left behind.
func TestExportBadPathsRefusedUpFront(t *testing.T) {
	store := audit2Store(t)
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(dir, "junk.json")
	if err := os.WriteFile(junk, []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		path string // the path the message must name
	}{
		{"out is a directory", []string{"--out", sub}, sub},
		{"manifest is a directory", []string{"--out", filepath.Join(dir, "x.jsonl"), "--manifest", sub}, sub},
		{"out in a missing directory", []string{"--out", filepath.Join(dir, "nope", "x.jsonl")}, filepath.Join(dir, "nope", "x.jsonl")},
		{"heads missing", []string{"--heads", filepath.Join(dir, "nope.json")}, filepath.Join(dir, "nope.json")},
		{"heads a directory", []string{"--heads", sub}, sub},
		{"heads not a manifest", []string{"--heads", junk}, junk},
		{"out and manifest the same file", []string{"--out", filepath.Join(dir, "same"), "--manifest", filepath.Join(dir, "same")}, filepath.Join(dir, "same")},
	}
	for _, c := range cases {
		out, errs, code := cli(t, store, "", append([]string{"export", "--format", "openai-jsonl"}, c.args...)...)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2 (stderr %q)", c.name, code, errs)
		}
		if !strings.Contains(errs, c.path) || strings.Contains(errs, ".tmp") {
			t.Errorf("%s: stderr %q does not name %s as given", c.name, errs, c.path)
		}
		if out != "" {
			t.Errorf("%s: wrote %q to stdout", c.name, out)
		}
		if strings.Contains(errs, "exported") || strings.Contains(errs, "skipped") {
			t.Errorf("%s: the export ran before the refusal: %q", c.name, errs)
		}
	}
	des, _ := os.ReadDir(dir)
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	if len(names) != 2 { // sub, junk.json
		t.Errorf("left behind in the output directory: %v", names)
	}
}

// A file named PATH.tmp beside --out PATH is the user's: an export does
// not overwrite or remove it.
func TestExportKeepsUsersTmpFile(t *testing.T) {
	store := audit2Store(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "x.jsonl")
	if err := os.WriteFile(out+".tmp", []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--out", out); code != 0 {
		t.Fatalf("export: %d %s", code, errs)
	}
	if b, err := os.ReadFile(out + ".tmp"); err != nil || string(b) != "mine" {
		t.Fatalf("the user's %s.tmp is now %q, %v", out, b, err)
	}
}

// --out naming a FIFO or a device is written to, never replaced by a
// regular file. The device is a null device made in a temporary
// directory, so a failing test cannot replace the system's.
func TestExportOutToFIFOAndDevice(t *testing.T) {
	store := audit2Store(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	got := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- b
	}()
	if _, errs, code := cli(t, store, "", "export", "--format", "openai-jsonl", "--out", fifo); code != 0 {
		t.Fatalf("export to a FIFO: %d %s", code, errs)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced by a %v (%v)", fi.Mode(), err)
	}
	select {
	case b := <-got:
		if !strings.Contains(string(b), `"messages"`) {
			t.Fatalf("the FIFO's reader got %q", b)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("nothing was written to the FIFO")
	}
	if _, err := os.Stat(fifo + ".manifest.json"); err == nil {
		t.Errorf("a manifest was written beside the FIFO")
	}

	null := filepath.Join(dir, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, 1<<8|3 /* Linux: major 1, minor 3, the null device */); err != nil {
		t.Skip("cannot make a device node here:", err)
	}
	if _, errs, code := cli(t, store, "", "export", "--format", "parquet", "--out", null); code != 0 {
		t.Fatalf("export to a device: %d %s", code, errs)
	}
	if fi, err := os.Lstat(null); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("the device was replaced by a %v (%v)", fi.Mode(), err)
	}
}
