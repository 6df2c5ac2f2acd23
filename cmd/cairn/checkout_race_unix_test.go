//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
)

// TestCheckoutIntoADirectoryInUse: a checkout into a directory another
// command holds locked while it writes into it (a checkout, or cairn
// run's work directory) is refused, exit 2, and writes nothing there.
// Without the lock both checkouts found the directory empty and wrote
// into it, both exited 0, and it held two states mixed.
func TestCheckoutIntoADirectoryInUse(t *testing.T) {
	t.Setenv("CAIRN_CACHE_DIR", "off")
	store := t.TempDir()
	if _, errs, code := cli(t, store, `{"a":1}`, "commit", "s", "-"); code != 0 {
		t.Fatalf("commit: exit %d: %s", code, errs)
	}
	dir := filepath.Join(t.TempDir(), "out")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// The lock another checkout holds while it fills the directory.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	out, errs, code := cli(t, store, "", "checkout", "s", "--dir", dir)
	if want := "is in use"; code != 2 || out != "" || !strings.Contains(errs, want) {
		t.Errorf("checkout into a directory another command is writing: exit %d, stdout %q, stderr %q; want exit 2 and %q", code, out, errs, want)
	}
	if des, _ := os.ReadDir(dir); len(des) != 0 {
		t.Errorf("the refused checkout wrote %d entries into the directory in use", len(des))
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if _, errs, code := cli(t, store, "", "checkout", "s", "--dir", dir); code != 0 {
		t.Errorf("checkout once the directory is free: exit %d: %s", code, errs)
	}
}

// TestCheckoutsAtOnceNeverMix: two cairn processes checking out two
// directory states into one new directory at once: exactly one succeeds,
// and the directory holds exactly its state; the other exits 2. Both
// used to succeed now and then, leaving the two states mixed.
func TestCheckoutsAtOnceNeverMix(t *testing.T) {
	bin := cairnBinary(t)
	store := t.TempDir()
	env := append(os.Environ(), "CAIRN_CACHE_DIR=off", "CAIRN_STORE="+store)
	for _, s := range []string{"f", "g"} {
		src := t.TempDir()
		for i := range 200 {
			if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("%s%03d", s, i)), []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, errs, code := runIn(t, bin, env, "", "commit", s, "--dir", src); code != 0 {
			t.Fatalf("commit %s: exit %d: %s", s, code, errs)
		}
	}
	for round := range 10 {
		dir := filepath.Join(t.TempDir(), "out")
		codes := make(chan string, 2)
		for _, s := range []string{"f", "g"} {
			go func() {
				cmd := exec.Command(bin, "checkout", s, "--dir", dir)
				cmd.Env = env
				var errb bytes.Buffer
				cmd.Stderr = &errb
				cmd.Run()
				codes <- fmt.Sprintf("%s:%d:%s", s, cmd.ProcessState.ExitCode(), strings.TrimSpace(errb.String()))
			}()
		}
		results := []string{<-codes, <-codes}
		sort.Strings(results)
		var won []string
		for _, r := range results {
			if strings.Split(r, ":")[1] == "0" {
				won = append(won, r[:1])
			} else if strings.Split(r, ":")[1] != "2" {
				t.Fatalf("round %d: a checkout failed otherwise than exit 2: %v", round, results)
			}
		}
		des, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		prefixes := map[string]int{}
		for _, de := range des {
			prefixes[de.Name()[:1]]++
		}
		if len(won) != 1 || len(prefixes) != 1 || prefixes[won[0]] != 200 {
			t.Fatalf("round %d: checkouts %v left %v in the directory; want exactly one to succeed and its 200 files alone", round, results, prefixes)
		}
	}
}
