package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/fs"
	"github.com/cairnlog/cairn/cas/pack"
	"github.com/cairnlog/cairn/manifest"
	"github.com/cairnlog/cairn/manifest/tree"
)

// plantDirState writes, as step 1 of session, a directory state whose
// root node has the given entries, bypassing every writer-side check:
// what a hostile or broken writer could store.
func plantDirState(t *testing.T, store, session string, entries ...tree.Entry) {
	t.Helper()
	plantDirBlobs(t, store, session, nil, entries...)
}

// plantDirBlobs is plantDirState with blobs stored in the same object.
func plantDirBlobs(t *testing.T, store, session string, blobs [][]byte, entries ...tree.Entry) {
	t.Helper()
	ctx := context.Background()
	st, err := fs.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	repo := manifest.NewRepo(st, 0)
	raw := (&tree.NodeData{Type: tree.TypeDir, Entries: entries}).Encode()
	id := cas.Sum(raw)
	var b pack.Builder
	b.Add(id, raw)
	for _, blob := range blobs {
		b.Add(cas.Sum(blob), blob)
	}
	m := &manifest.Manifest{
		Session: session, Number: 1, Time: time.Unix(0, 0).UTC(), Kind: manifest.StateDir,
		Root:   tree.Ref{Kind: tree.Node, ID: id, Size: int64(len(entries))},
		Layout: manifest.Layout{Steps: []manifest.Range{{Session: session, First: 1, Last: 1}}},
	}
	if err := repo.MarkSession(ctx, session); err != nil {
		t.Fatal(err)
	}
	if _, _, err := repo.WriteStep(ctx, m, &b); err != nil {
		t.Fatal(err)
	}
}

// TestCheckoutRefusesHostileStore: `cairn checkout` of states planted in
// the store refuses '..', absolute names, escaping symlinks and entry
// modes that are not file, executable, symlink or directory (a device,
// fifo or socket has no mode in the format; any other mode byte is
// refused), with one line on stderr, exit 1, and nothing written outside
// the target directory.
func TestCheckoutRefusesHostileStore(t *testing.T) {
	store := t.TempDir()
	file := tree.Ref{Kind: tree.Inline, Data: []byte("pwned")}
	link := func(target string) tree.Ref { return tree.Ref{Kind: tree.Inline, Data: []byte(target)} }
	cases := map[string][]tree.Entry{
		"dotdot":        {{Name: "..", Mode: tree.ModeFile, Ref: file}},
		"escape-name":   {{Name: "../../escaped", Mode: tree.ModeFile, Ref: file}},
		"absolute-name": {{Name: "/tmp/escaped", Mode: tree.ModeFile, Ref: file}},
		"abs-symlink":   {{Name: "l", Mode: tree.ModeSymlink, Ref: link("/etc/passwd")}},
		"up-symlink":    {{Name: "l", Mode: tree.ModeSymlink, Ref: link("../../x")}},
		"device-mode":   {{Name: "dev", Mode: 4, Ref: file}},
		"special-mode":  {{Name: "fifo", Mode: 0xff, Ref: file}},
	}
	for name, entries := range cases {
		t.Run(name, func(t *testing.T) {
			plantDirState(t, store, name, entries...)
			parent := t.TempDir()
			dst := filepath.Join(parent, "a", "out")
			out, errs, code := cli(t, store, "", "checkout", name, "--dir", dst)
			if code != 1 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || errs == "" {
				t.Errorf("checkout: exit %d, stderr %q, stdout %q; want exit 1 and one line", code, errs, out)
			}
			filepath.Walk(parent, func(p string, fi os.FileInfo, err error) error {
				if err == nil && p != parent && !strings.HasPrefix(p, dst) && p != filepath.Dir(dst) {
					t.Errorf("checkout wrote %s outside %s", p, dst)
				}
				return nil
			})
			if _, err := os.Lstat(filepath.Join(parent, "escaped")); err == nil {
				t.Errorf("an escaping entry was written")
			}
		})
	}
}

// TestCommitRefusesSpecialFiles: a directory holding a fifo or a socket
// cannot be committed (only files, executables, directories and
// symlinks are stored), and nothing is written.
func TestCommitRefusesSpecialFiles(t *testing.T) {
	for _, kind := range []string{"fifo", "socket"} {
		t.Run(kind, func(t *testing.T) {
			store, src := t.TempDir(), t.TempDir()
			os.WriteFile(filepath.Join(src, "ok.txt"), []byte("fine"), 0o644)
			p := filepath.Join(src, "special")
			switch kind {
			case "fifo":
				if err := mkfifo(t, p); err != nil {
					t.Fatal(err)
				}
			case "socket":
				if err := bindUnixSocket(t, p); err != nil {
					t.Fatal(err)
				}
			}
			_, errs, code := cli(t, store, "", "commit", "s", "--dir", src)
			if code == 0 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "special") {
				t.Errorf("commit of a dir with a %s: exit %d, stderr %q; want an error naming it", kind, code, errs)
			}
			if out, _, _ := cli(t, store, "", "sessions"); out != "no sessions\n" {
				t.Errorf("sessions after a refused commit: %q", out)
			}
		})
	}
}

// TestLimitsFromEnv: the read limits of docs/limits.md apply to the CLI
// through the environment, and what exceeds them is a one-line error.
func TestLimitsFromEnv(t *testing.T) {
	store := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 5))
	noise := make([]byte, 2500)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	doc := `{"a":"` + fmt.Sprintf("%x", noise) + `","b":[[[[1]]]]}`
	if _, errs, code := cli(t, store, doc, "commit", "s", "-"); code != 0 {
		t.Fatal(errs)
	}
	for _, c := range []struct{ env, val, want string }{
		{"CAIRN_MAX_VALUE_BYTES", "1000", "limit"},
		{"CAIRN_MAX_OBJECT_BYTES", "1000", "larger than the limit"},
	} {
		t.Run(c.env, func(t *testing.T) {
			t.Setenv(c.env, c.val)
			out, errs, code := cli(t, store, "", "show", "s")
			// (show streams: a value over the limit may have printed a prefix)
			if code != 1 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 || len(out) >= len(doc) {
				t.Errorf("show with %s=%s: exit %d, stdout %d bytes, stderr %q", c.env, c.val, code, len(out), errs)
			}
		})
	}
	t.Setenv("CAIRN_MAX_VALUE_BYTES", "100000")
	if out, errs, code := cli(t, store, "", "show", "s"); code != 0 || out != doc+"\n" {
		t.Errorf("show within the limits: exit %d %s", code, errs)
	}
}

// hugeRangeObject returns a small step object (session X, step 1) whose
// layout names the step range X@1..2^62: a hostile or corrupt object
// that once made every reader allocate a key per step until it ran out
// of memory.
func hugeRangeObject() []byte {
	m := &manifest.Manifest{
		Session: "X", Number: 1, Time: time.Unix(0, 0).UTC(), Kind: manifest.StateJSON,
		Root:   tree.Ref{Kind: tree.Inline, Data: []byte("1")},
		Layout: manifest.Layout{Steps: []manifest.Range{{Session: "X", First: 1, Last: 1 << 62}}},
	}
	var b pack.Builder
	data, _ := b.Build(pack.KindStep, m.Encode())
	return data
}

// TestHugeLayoutRangeRefused: show, checkout, verify, du and commit on a
// store holding hugeRangeObject fail with one line naming a corrupt
// store, exit 1, instead of dying out of memory (exit 2).
func TestHugeLayoutRangeRefused(t *testing.T) {
	store := t.TempDir()
	st, err := fs.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := st.Put(ctx, manifest.SessionKey("X"), []byte("X"), cas.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, manifest.StepKey("X", 1), hugeRangeObject(), cas.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"show", "X"},
		{"show", "X@1"},
		{"checkout", "X", "--dir", filepath.Join(t.TempDir(), "out")},
		{"verify"},
		{"du"},
		{"commit", "X", "-"},
		{"log", "X"},
	} {
		out, errs, code := cli(t, store, `{"a":1}`, args...)
		if code != 1 || !strings.Contains(errs+out, "corrupt") && !strings.Contains(out, "BAD step X@1 is damaged") {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want exit 1 naming a corrupt object", strings.Join(args, " "), code, errs, out)
		}
	}
}

// TestVerifyRefusesWhatCheckoutRefuses: every hostile directory state
// that checkout refuses (TestCheckoutRefusesHostileStore's cases, and a
// name holding NUL) is a problem for verify too: exit 1, naming it.
func TestVerifyRefusesWhatCheckoutRefuses(t *testing.T) {
	file := tree.Ref{Kind: tree.Inline, Data: []byte("pwned")}
	link := func(target string) tree.Ref { return tree.Ref{Kind: tree.Inline, Data: []byte(target)} }
	cases := map[string][]tree.Entry{
		"dotdot":        {{Name: "..", Mode: tree.ModeFile, Ref: file}},
		"dot":           {{Name: ".", Mode: tree.ModeFile, Ref: file}},
		"escape-name":   {{Name: "../../escaped", Mode: tree.ModeFile, Ref: file}},
		"absolute-name": {{Name: "/tmp/escaped", Mode: tree.ModeFile, Ref: file}},
		"nul-name":      {{Name: "a\x00b", Mode: tree.ModeFile, Ref: file}},
		"abs-symlink":   {{Name: "l", Mode: tree.ModeSymlink, Ref: link("/etc/passwd")}},
		"up-symlink":    {{Name: "l", Mode: tree.ModeSymlink, Ref: link("../../x")}},
	}
	for name, entries := range cases {
		t.Run(name, func(t *testing.T) {
			store := t.TempDir()
			plantDirState(t, store, "s", entries...)
			if _, errs, code := cli(t, store, "", "checkout", "s", "--dir", filepath.Join(t.TempDir(), "out")); code != 1 {
				t.Fatalf("checkout: exit %d, %s; want 1 (the case is not hostile)", code, errs)
			}
			out, errs, code := cli(t, store, "", "verify")
			if code != 1 || !strings.Contains(out, "BAD") || !strings.Contains(out, ": 1 problem") {
				t.Errorf("verify: exit %d, stdout %q, stderr %q; want exit 1 and one problem", code, out, errs)
			}
		})
	}
}

// TestCheckoutTotalBounded is issue 13 item 5: a small object whose 20
// files all name one 1 MiB blob (a dedup bomb) must not check out more
// than the per-operation total, although each file is within the
// per-file limit; the error names the limit and how to raise it.
func TestCheckoutTotalBounded(t *testing.T) {
	store := t.TempDir()
	blob := make([]byte, 1<<20)
	ref := tree.Ref{Kind: tree.Blob, ID: cas.Sum(blob), Size: int64(len(blob))}
	var entries []tree.Entry
	for i := 0; i < 20; i++ {
		entries = append(entries, tree.Entry{Name: fmt.Sprintf("f%02d", i), Mode: tree.ModeFile, Ref: ref})
	}
	plantDirBlobs(t, store, "bomb", [][]byte{blob}, entries...)
	t.Setenv("CAIRN_MAX_VALUE_BYTES", "2097152")
	t.Setenv("CAIRN_MAX_TOTAL_BYTES", "5242880")
	dst := filepath.Join(t.TempDir(), "out")
	_, errs, code := cli(t, store, "", "checkout", "bomb", "--dir", dst)
	if code != 1 || !strings.Contains(errs, "$CAIRN_MAX_TOTAL_BYTES") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("checkout of a dedup bomb: exit %d, stderr %q; want exit 1 naming the total limit's variable", code, errs)
	}
	// A command's user sets limits through the environment: the error
	// names no Go field of the API or of cairn's own packages.
	for _, goName := range []string{"Limits.", "MaxTotal", "MaxBytes"} {
		if strings.Contains(errs, goName) {
			t.Errorf("checkout of a dedup bomb: stderr %q names %q, a Go name", errs, goName)
		}
	}
	var written int64
	filepath.Walk(dst, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			written += fi.Size()
		}
		return nil
	})
	if written > 5<<20 {
		t.Errorf("checkout wrote %d bytes, beyond the total limit of %d", written, 5<<20)
	}
	t.Setenv("CAIRN_MAX_TOTAL_BYTES", "")
	if _, errs, code := cli(t, store, "", "checkout", "bomb", "--dir", filepath.Join(t.TempDir(), "ok")); code != 0 {
		t.Errorf("checkout within the default limits: exit %d, %s", code, errs)
	}
}
