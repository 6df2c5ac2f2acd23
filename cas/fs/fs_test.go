package fs_test

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/cairnlog/cairn/cas"
	"github.com/cairnlog/cairn/cas/castest"
	"github.com/cairnlog/cairn/cas/fs"
)

func TestConformance(t *testing.T) {
	castest.Run(t, func(t *testing.T) cas.Store {
		s, err := fs.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestMain lets the test binary act as a racing writer process.
func TestMain(m *testing.M) {
	if dir := os.Getenv("CAIRN_FS_RACER_DIR"); dir != "" {
		s, err := fs.Open(dir)
		if err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		err = s.Put(context.Background(), os.Getenv("CAIRN_FS_RACER_KEY"), []byte(os.Getenv("CAIRN_FS_RACER_ID")), cas.PutOptions{IfAbsent: true})
		switch {
		case err == nil:
			fmt.Println("won")
		case errors.Is(err, cas.ErrExists):
			fmt.Println("lost")
		default:
			fmt.Println("error", err)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRaceIfAbsentProcesses races 16 processes on each conditional create:
// exactly one may win, and its bytes are what is stored.
func TestRaceIfAbsentProcesses(t *testing.T) {
	dir := t.TempDir()
	s, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	const procs, rounds = 16, 5
	for round := 0; round < rounds; round++ {
		key := fmt.Sprintf("race/%d", round)
		out := make([]string, procs)
		var wg sync.WaitGroup
		for p := 0; p < procs; p++ {
			wg.Add(1)
			go func(p int) {
				defer wg.Done()
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), "CAIRN_FS_RACER_DIR="+dir, "CAIRN_FS_RACER_KEY="+key, fmt.Sprintf("CAIRN_FS_RACER_ID=p%d", p))
				b, err := cmd.Output()
				if err != nil {
					t.Errorf("racer %d: %v", p, err)
				}
				out[p] = strings.TrimSpace(string(b))
			}(p)
		}
		wg.Wait()
		winner := -1
		for p, o := range out {
			switch o {
			case "won":
				if winner >= 0 {
					t.Fatalf("round %d: processes %d and %d both won", round, winner, p)
				}
				winner = p
			case "lost":
			default:
				t.Fatalf("round %d: process %d said %q", round, p, o)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no process won", round)
		}
		got, err := s.Get(context.Background(), key, 0, -1)
		if err != nil || string(got) != fmt.Sprintf("p%d", winner) {
			t.Fatalf("round %d: stored %q (%v), winner was p%d", round, got, err, winner)
		}
	}
}

func TestTempFilesIgnoredAndCleaned(t *testing.T) {
	dir := t.TempDir()
	s, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A crashed put leaves a temp file behind (in the directory that
	// the store's first put made).
	if err := os.MkdirAll(dir+"/.tmp", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/.tmp/put-crashed", []byte("partial"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := s.List(context.Background(), "", "", func(cas.Info) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("List saw %d objects, want the temp file ignored", n)
	}
	removed, err := s.CleanTemp(0)
	if err != nil || removed != 1 {
		t.Fatalf("CleanTemp = %d, %v; want 1 removed", removed, err)
	}
}

// TestOpenCreatesNothingUntilPut: opening and reading a store at a path
// that does not exist (a mistyped --store) leaves no directory behind;
// the first put makes it. Issue 15 item 7.
func TestOpenCreatesNothingUntilPut(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir() + "/not/yet"
	s, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, "a/b", 0, -1); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("get from a new store: %v, want not found", err)
	}
	if _, err := s.Stat(ctx, "a/b"); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("stat in a new store: %v, want not found", err)
	}
	n := 0
	if err := s.List(ctx, "", "", func(cas.Info) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("list of a new store: %d keys, %v", n, err)
	}
	if err := s.Delete(ctx, "a/b"); err != nil {
		t.Fatalf("delete in a new store: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("reading a new store created %s (stat: %v)", dir, err)
	}
	if err := s.Put(ctx, "a/b", []byte("x"), cas.PutOptions{IfAbsent: true}); err != nil {
		t.Fatalf("first put: %v", err)
	}
	if got, err := s.Get(ctx, "a/b", 0, -1); err != nil || string(got) != "x" {
		t.Fatalf("get after the first put: %q, %v", got, err)
	}
	if _, err := fs.Open(dir + "/a/b"); err == nil {
		t.Fatal("opening a file as a store succeeded")
	}
}

// TestFailedPutNotStored: a put that fails before its object is named
// (its directory cannot be made, its temporary file cannot be written)
// says so (cas.NotStored), and nothing of it can be read; the caller
// then knows it did not land.
func TestFailedPutNotStored(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := fs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A file where the key's directory must go.
	if err := os.WriteFile(dir+"/steps", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A file where the temporary files go: the named path cannot be
	// written either (and, on Linux, an unnamed file in a directory
	// that cannot be made is not tried).
	if err := os.WriteFile(dir+"/.tmp", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key  string
		opts cas.PutOptions
	}{
		{"steps/s/1", cas.PutOptions{IfAbsent: true}},
		{"steps/s/1", cas.PutOptions{}},
		{"packs/p", cas.PutOptions{}},
	} {
		err := s.Put(ctx, c.key, []byte("data"), c.opts)
		if err == nil || !cas.IsNotStored(err) {
			t.Errorf("put %s %+v: %v; want a NotStored error", c.key, c.opts, err)
		}
		// Not found, or (beneath the file) refused as the store's damage.
		if _, err := s.Get(ctx, c.key, 0, -1); !errors.Is(err, cas.ErrNotFound) && !errors.As(err, new(*cas.NotObjectError)) {
			t.Errorf("after the failed put of %s: get %v; want not found, or the file standing on its way", c.key, err)
		}
	}
	if cas.IsNotStored(errors.New("x")) || cas.NotStored(nil) != nil {
		t.Error("NotStored marks what it was not given")
	}
}

// TestRefusalOfThisUser: a file of the store the system refuses this
// user, or a full disk, is the store's refusal (cas.RefusedError), which
// the root package says in words with the store's URL, as it does an S3
// server's; it keeps its cause (a put that left nothing stays NotStored).
// Any other error is left as it is.
func TestRefusalOfThisUser(t *testing.T) {
	denied := fmt.Errorf("put sessions/x: %w", cas.NotStored(&iofs.PathError{Op: "mkdir", Path: "/st/sessions", Err: iofs.ErrPermission}))
	full := fmt.Errorf("put steps/s/00000000000000000001: %w", &iofs.PathError{Op: "write", Path: "/st/x", Err: syscall.ENOSPC})
	for _, c := range []struct {
		err      error
		op, key  string
		why      string
		notStore bool
	}{
		{denied, "put", "sessions/x", "permission denied (this user must be able to read and write the store's files)", true},
		{full, "put", "steps/s/00000000000000000001", "its disk is out of space (no space left on device)", false},
	} {
		got := fs.Refusal(c.op, c.key, c.err)
		var re *cas.RefusedError
		if !errors.As(got, &re) || re.Op != c.op || re.Key != c.key || re.Why != c.why || !errors.Is(got, c.err) || cas.IsNotStored(got) != c.notStore {
			t.Errorf("refusal(%q): %#v; want a RefusedError %s %s saying %q", c.err, got, c.op, c.key, c.why)
		}
	}
	for _, err := range []error{nil, cas.ErrNotFound, cas.ErrExists, errors.New("x")} {
		if got := fs.Refusal("get", "k", err); got != err {
			t.Errorf("refusal(%v) = %v; want it as it was", err, got)
		}
	}
}
